package deploy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/providers"
)

// ID identifies a saved plan: a digest of its canonical JSON. A journal names the plan it
// records (package journal), so that it is never used to resume another.
func (s *SavedPlan) ID() string {
	b, err := json.Marshal(s)
	if err != nil {
		return "" // a SavedPlan is plain data: Marshal cannot fail
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Journal records the writes of an apply (runner writes it to a file with package journal).
// Apply calls Start with a target's changes before it sends any of them and stops writing to
// the target when Start fails; it calls Finish with their outcomes once the target is done.
type Journal interface {
	Start(ou string, changes []*providers.Change) error
	Finish(ou string, outcomes []providers.Outcome) error
}

// Started is a change of a saved plan that an earlier apply of it started: it may be in place,
// in part or not at all.
type Started struct {
	OU, DN string
	Kind   providers.ChangeKind
	// Before is the group as it was before the change, for a change that deletes the group
	// or changes its attributes (nil otherwise).
	Before *providers.Group
}

// Resumed says how far a target of a saved plan had come when a resume planned it.
type Resumed struct {
	OU string
	// Planned is the number of changes of the saved plan; Remaining those still to make
	// (the fresh plan's). Planned-Remaining were made by earlier applies.
	Planned, Remaining int
}

// Resume is Restrict for a saved plan that earlier applies (recorded in a journal) began. A
// target whose state still has the saved fingerprint is held to the saved changes, as by
// Restrict. A target whose state moved is accepted only when it moved by the started changes
// alone: the state read now, with every started change of the plan undone (its members, its
// description and attributes set back to what the plan was made from; covered removals
// whose covering change started, too), must have the saved fingerprint, and every fresh
// change must be what is left of a saved change. Its fresh changes are then applied: what
// is already in place is not written again, and a creation or an invitation that an earlier
// run made is not repeated, because the state read now has it. Any other target is refused
// with a DriftError.
//
// Undoing a change sets what it writes back to the value it was planned from, which does not
// depend on whether the write had reached the system: a change started but never finished is
// undone as correctly as a finished one.
func (fresh *Plan) Resume(saved *SavedPlan, current Inputs, started []Started) ([]Resumed, error) {
	byOU, inputs, err := fresh.holdTo(saved, current)
	if err != nil {
		return nil, err
	}
	begun := map[startKey]*Started{}
	anyKind := map[startKey]bool{} // kind-less keys, for covering changes
	for i, s := range started {
		begun[startKey{s.OU, providers.Key(s.DN), s.Kind.String()}] = &started[i]
		anyKind[startKey{ou: s.OU, dn: providers.Key(s.DN)}] = true
	}
	var out []Resumed
	for _, t := range fresh.Targets {
		st := byOU[t.OU]
		reason := inputs
		switch {
		case reason != "":
		case st.Error != "":
			t.Err = fmt.Errorf("not applied: the saved plan has an error for this target: %s", st.Error)
			continue
		case t.Err != nil:
			continue
		case st.Fingerprint == t.Fingerprint:
			if !sameChanges(st.Changes, t.Changes) {
				reason = fmt.Sprintf("the changes for %s differ from the saved plan", t.OU)
			}
		case t.state == nil:
			// A derived target's fingerprint is of the inputs, not of the target: it cannot
			// move by the plan's own writes.
			reason = fmt.Sprintf("the current state of %s changed", t.OU)
		default:
			before := undo(t.state, t.OU, st.Changes, begun, anyKind)
			if fp := Fingerprint(before); fp != st.Fingerprint {
				reason = fmt.Sprintf("the state of %s changed by more than the writes of the earlier apply (fingerprint without them %s, planned from %s)",
					t.OU, short(fp), short(st.Fingerprint))
			} else if c := notPartOf(st.Changes, t.Changes); c != nil {
				reason = fmt.Sprintf("the change %s of %s is not what is left of the saved plan's", c.Describe(), t.OU)
			}
		}
		if reason != "" {
			t.Err = &DriftError{OU: t.OU, Reason: reason}
			continue
		}
		out = append(out, Resumed{OU: t.OU, Planned: len(st.Changes), Remaining: len(t.Changes)})
	}
	return out, nil
}

type startKey struct{ ou, dn, kind string }

// undo returns a copy of cur with the started changes of a target's saved changes undone.
func undo(cur *providers.State, ou string, changes []SavedChange, begun map[startKey]*Started, anyKind map[startKey]bool) *providers.State {
	st := &providers.State{Groups: make(map[string]*providers.Group, len(cur.Groups)), ContainerMissing: cur.ContainerMissing}
	for k, g := range cur.Groups {
		st.Groups[k] = g // copied on write below
	}
	edit := func(k string) *providers.Group {
		g := st.Groups[k]
		if g == nil {
			return nil
		}
		c := *g
		c.Members = slices.Clone(g.Members)
		c.Attrs = make(map[string][]string, len(g.Attrs))
		for a, v := range g.Attrs {
			c.Attrs[a] = v
		}
		st.Groups[k] = &c
		return &c
	}
	for _, c := range changes {
		k := providers.Key(c.DN)
		s, ok := begun[startKey{ou, k, c.Kind}]
		if !ok {
			// Removals another target's started change may have made (a user removed from
			// a GitHub org leaves its teams).
			var back []string
			for _, cv := range c.Covered {
				if anyKind[startKey{ou: cv.OU, dn: providers.Key(cv.DN)}] {
					back = append(back, cv.Member)
				}
			}
			if len(back) > 0 {
				if g := edit(k); g != nil {
					g.Members = setMembers(g.Members, nil, back)
				}
			}
			continue
		}
		switch c.Kind {
		case providers.CreateContainer.String():
			st.ContainerMissing = true
		case providers.CreateGroup.String():
			delete(st.Groups, k)
		case providers.DeleteGroup.String():
			if _, there := st.Groups[k]; !there && s.Before != nil {
				st.Groups[k] = &providers.Group{DN: c.DN, Description: s.Before.Description,
					Members: slices.Clone(s.Before.Members), Attrs: s.Before.Attrs}
			}
		case providers.UpdateGroup.String():
			g := edit(k)
			if g == nil {
				continue // gone: the fingerprint tells
			}
			g.Members = setMembers(g.Members, c.Add, c.Remove)
			if c.Description != nil {
				g.Description = c.Description[0]
			}
			for _, a := range c.Attrs {
				if s.Before != nil && s.Before.Attrs[a] != nil {
					g.Attrs[a] = s.Before.Attrs[a]
				} else {
					delete(g.Attrs, a)
				}
			}
		}
	}
	return st
}

// setMembers takes out of members those of out and adds those of in that are missing (logins
// and uids compare without letter case, as the fingerprint does).
func setMembers(members, out, in []string) []string {
	drop := map[string]bool{}
	for _, m := range out {
		drop[strings.ToLower(m)] = true
	}
	res := make([]string, 0, len(members)+len(in))
	have := map[string]bool{}
	for _, m := range members {
		if !drop[strings.ToLower(m)] {
			res = append(res, m)
			have[strings.ToLower(m)] = true
		}
	}
	for _, m := range in {
		if !have[strings.ToLower(m)] {
			res = append(res, m)
			have[strings.ToLower(m)] = true
		}
	}
	return res
}

// notPartOf returns the first fresh change that is not what is left of a saved change (of
// the same group and kind, or an update of a group the plan creates), with no member, and no
// description or attribute change, that the saved change does not have; nil when all are.
func notPartOf(saved []SavedChange, fresh []*providers.Change) *providers.Change {
	byKey := map[string]*SavedChange{}
	for i, c := range saved {
		k := c.Kind + "\x00" + providers.Key(c.DN)
		if c.Kind == providers.UpdatePerson.String() {
			k = c.Kind + "\x00" + c.Person + "\x00" + c.Attribute
		}
		byKey[k] = &saved[i]
	}
	subset := func(a, b []string) bool {
		in := map[string]bool{}
		for _, m := range b {
			in[strings.ToLower(m)] = true
		}
		for _, m := range a {
			if !in[strings.ToLower(m)] {
				return false
			}
		}
		return true
	}
	for _, c := range fresh {
		k := c.Kind.String() + "\x00" + providers.Key(c.DN)
		if c.Kind == providers.UpdatePerson {
			k = c.Kind.String() + "\x00" + c.Person + "\x00" + c.Attribute
		}
		s := byKey[k]
		if s == nil && c.Kind == providers.UpdateGroup {
			// The group was created, its members not all added.
			if cr := byKey[providers.CreateGroup.String()+"\x00"+providers.Key(c.DN)]; cr != nil {
				if len(c.Remove) == 0 && subset(c.Add, cr.Add) {
					continue
				}
				return c
			}
		}
		if s == nil {
			return c
		}
		switch {
		case !subset(c.Add, s.Add), !subset(c.Remove, s.Remove),
			c.DescriptionChanged && s.Description == nil,
			!subset(c.AttrsChanged, s.Attrs) && c.Kind == providers.UpdateGroup,
			c.Kind == providers.UpdatePerson && !slices.Equal(c.Values, s.Values):
			return c
		}
	}
	return nil
}
