// Package review turns calculations and plans into something a person can review: the
// difference between two calculations of a config repo (who gains or loses which access,
// and why, group by group), and renderers of that difference and of deploy plans as text,
// JSON and Markdown for pull-request comments.
//
// Compare needs two calc.Results and nothing else: the two trees may come from anywhere
// (two directories, two in-memory fs.FS trees via calc.LoadFS, two git revisions). The CLI's
// `entitlements diff` reads revisions from git (see package gitfs) and loads the head
// incrementally over the base (calc.Incremental), so a pull-request diff costs little more
// than one calculation.
package review

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/calc"
)

// Status says what happened to a group.
type Status string

// The group statuses.
const (
	Created Status = "created"
	Deleted Status = "deleted"
	Changed Status = "changed"
)

// Options tune Compare. The zero value is the documented default for every field.
type Options struct {
	// MaxReasons bounds how many added or removed memberships are explained; the rest carry
	// no reason (a diff that moves a whole org does not need 100,000 explanations). Default
	// 10,000; negative: none.
	MaxReasons int
}

// Diff is the difference between two calculations, base → head.
type Diff struct {
	// Groups that differ, sorted by key.
	Groups []*GroupDiff `json:"groups"`
	// Unexplained counts memberships left without a reason because of MaxReasons.
	Unexplained int `json:"unexplained,omitempty"`
	// Config is what the head changes in the configuration file, which the calculation did
	// not apply (nil: not compared; see ConfigDiff). Set by the caller of Compare.
	Config *ConfigDiff `json:"config,omitempty"`
	// Sources say, one sentence each, where the data that is not in the repository came from
	// (people read from LDAP, LDAP groups from a snapshot...). Set by the caller of Compare.
	Sources []string `json:"sources,omitempty"`
}

// GroupDiff is one group that differs.
type GroupDiff struct {
	Key    string `json:"group"`
	OU     string `json:"ou"`
	DN     string `json:"dn,omitempty"`
	File   string `json:"file"`
	Status Status `json:"status"`
	// Added and Removed are the people who gain or lose the membership, sorted by uid.
	Added   []Member `json:"added,omitempty"`
	Removed []Member `json:"removed,omitempty"`
	// Description is [old, new] when it changed.
	Description *[2]string `json:"description,omitempty"`
	// Metadata lists the keys whose value changed.
	Metadata []MetaChange `json:"metadata,omitempty"`
	// Edited: the change edits this group's own file (created, deleted or changed); set by
	// MarkEdited. The others changed through references, filters or the org chart. The
	// Markdown comment leads with the edited groups and never leaves them out.
	Edited bool `json:"edited,omitempty"`
}

// MarkEdited sets Edited on the groups whose file (GroupDiff.File, as Compare reports it)
// the change edits.
func (d *Diff) MarkEdited(edited func(file string) bool) {
	for _, g := range d.Groups {
		g.Edited = edited(g.File)
	}
}

// Member is one person added or removed, with the reason in one line.
type Member struct {
	UID    string `json:"uid"`
	Reason string `json:"reason,omitempty"`
	// Via is the first step of Reason when the reason goes on through a referenced group or
	// an org-chart chain ("group = pizza_teams/sre (groups/apps/wiki.txt:2)"): the rule of
	// this group's file that the people share, while the rest of each chain is their own.
	// The Markdown comment lists the people of one Via (or of one whole Reason) together.
	// Empty when the reason is one step.
	Via string `json:"-"`
}

// MetaChange is one metadata key that changed (nil Old: added; nil New: removed).
type MetaChange struct {
	Key string `json:"key"`
	Old any    `json:"old,omitempty"`
	New any    `json:"new,omitempty"`
}

// Empty reports whether nothing changed: no group, and not the configuration.
func (d *Diff) Empty() bool { return len(d.Groups) == 0 && !d.Config.Changed() }

// Compare computes what changes from base to head: groups created and deleted, members
// added and removed (each with the reason), description and metadata changes. Mirror copies
// are left out (they change with their source).
func Compare(base, head *calc.Result, opt Options) *Diff {
	if opt.MaxReasons == 0 {
		opt.MaxReasons = 10000
	}
	d := &Diff{Groups: []*GroupDiff{}}
	budget := max(opt.MaxReasons, 0)
	explain := func(res *calc.Result, key, uid string, added bool, other *calc.Result) Member {
		if budget == 0 {
			d.Unexplained++
			return Member{UID: uid}
		}
		budget--
		r := reason(res, other, key, uid, added)
		return Member{UID: uid, Reason: r.text, Via: r.via}
	}
	keys := map[string]bool{}
	for _, g := range base.Groups {
		keys[g.Key] = true
	}
	for _, g := range head.Groups {
		keys[g.Key] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		b, h := base.Group(k), head.Group(k)
		if (b != nil && b.Mirror) || (h != nil && h.Mirror) {
			continue
		}
		switch {
		case b == nil:
			gd := &GroupDiff{Key: k, OU: h.OU, DN: h.DN, File: h.File, Status: Created}
			for _, m := range h.Members {
				gd.Added = append(gd.Added, explain(head, k, m, true, nil))
			}
			d.Groups = append(d.Groups, gd)
		case h == nil:
			gd := &GroupDiff{Key: k, OU: b.OU, DN: b.DN, File: b.File, Status: Deleted}
			for _, m := range b.Members {
				gd.Removed = append(gd.Removed, Member{UID: m, Reason: "group deleted (" + b.File + " removed)"})
			}
			d.Groups = append(d.Groups, gd)
		default:
			if sameGroup(b, h) {
				continue
			}
			gd := &GroupDiff{Key: k, OU: h.OU, DN: h.DN, File: h.File, Status: Changed}
			add, rem := members(b.Members, h.Members)
			for _, m := range add {
				gd.Added = append(gd.Added, explain(head, k, m, true, base))
			}
			for _, m := range rem {
				gd.Removed = append(gd.Removed, explain(base, k, m, false, head))
			}
			if b.Description != h.Description {
				gd.Description = &[2]string{b.Description, h.Description}
			}
			gd.Metadata = metaChanges(b.Metadata, h.Metadata)
			if len(gd.Added)+len(gd.Removed) > 0 || gd.Description != nil || len(gd.Metadata) > 0 || b.DN != h.DN {
				d.Groups = append(d.Groups, gd)
			}
		}
	}
	return d
}

func sameGroup(b, h *calc.Group) bool {
	if b == h {
		return true // an incremental head reuses the base's unchanged groups
	}
	return b.DN == h.DN && b.Description == h.Description && slices.Equal(b.Members, h.Members) &&
		reflect.DeepEqual(b.Metadata, h.Metadata)
}

// members returns the uids only in head (added) and only in base (removed). Both lists are
// sorted bytewise (calc.Group.Members).
func members(base, head []string) (add, rem []string) {
	i, j := 0, 0
	for i < len(base) || j < len(head) {
		switch {
		case j == len(head) || (i < len(base) && base[i] < head[j]):
			rem = append(rem, base[i])
			i++
		case i == len(base) || head[j] < base[i]:
			add = append(add, head[j])
			j++
		default:
			i++
			j++
		}
	}
	return add, rem
}

func metaChanges(b, h map[string]any) []MetaChange {
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range h {
		keys[k] = true
	}
	var out []MetaChange
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		ov, ook := b[k]
		nv, nok := h[k]
		if ook && nok && reflect.DeepEqual(ov, nv) {
			continue
		}
		out = append(out, MetaChange{Key: k, Old: ov, New: nv})
	}
	return out
}

// OUSummary counts the changes of one OU.
type OUSummary struct {
	OU                       string
	Groups, Created, Deleted int
	// Gaining and Losing count distinct people with at least one membership added/removed.
	Gaining, Losing int
}

// Summary counts the changes per OU (sorted by OU) and in total (OU "").
func (d *Diff) Summary() (perOU []OUSummary, total OUSummary) {
	type acc struct {
		s         OUSummary
		gain, los map[string]bool
	}
	by := map[string]*acc{}
	tg, tl := map[string]bool{}, map[string]bool{}
	for _, g := range d.Groups {
		a := by[g.OU]
		if a == nil {
			a = &acc{s: OUSummary{OU: g.OU}, gain: map[string]bool{}, los: map[string]bool{}}
			by[g.OU] = a
		}
		a.s.Groups++
		total.Groups++
		switch g.Status {
		case Created:
			a.s.Created++
			total.Created++
		case Deleted:
			a.s.Deleted++
			total.Deleted++
		}
		for _, m := range g.Added {
			a.gain[m.UID], tg[m.UID] = true, true
		}
		for _, m := range g.Removed {
			a.los[m.UID], tl[m.UID] = true, true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(by)) {
		a := by[k]
		a.s.Gaining, a.s.Losing = len(a.gain), len(a.los)
		perOU = append(perOU, a.s)
	}
	total.Gaining, total.Losing = len(tg), len(tl)
	return perOU, total
}

// because is a reason in one line and its first step when it goes on (see Member.Via).
type because struct{ text, via string }

// step is a reason of one step.
func step(text string) because { return because{text: text} }

// then is the reason "first (at) → rest": first is the step the people of a group share.
func then(pre, first, at string, rest string) because {
	return because{text: fmt.Sprintf("%s%s (%s) → %s", pre, first, at, rest), via: fmt.Sprintf("%s%s (%s)", pre, first, at)}
}

// withPrefix puts p in front of a reason and of its first step.
func (b because) withPrefix(p string) because {
	if b.text == "" {
		return b
	}
	b.text = p + b.text
	if b.via != "" {
		b.via = p + b.via
	}
	return b
}

// reason explains in one line why uid was added to (added) or removed from group key:
// res is the side where uid is a member, other the side where it is not (nil for a created
// group).
func reason(res, other *calc.Result, key, uid string, added bool) because {
	if other == nil {
		ex, err := res.Explain(key, uid)
		if err != nil || !ex.Known {
			return because{}
		}
		if r := why(ex.Rules, ex.File, 0); r.text != "" {
			return r
		}
		return step("matched by the rules of " + ex.File)
	}
	if r := changedPath(res, other, key, uid, added, 0); r.text != "" {
		return r
	}
	if added {
		return step("matched by the rules of the group")
	}
	return step("no longer matched by the rules of the group")
}

// changedPath finds what makes uid a member of key in from and not in to: a filter, a
// whole-file expiration, or the rule path that matches only in from, followed into
// referenced groups (whose own change is the real reason) and org-chart chains.
func changedPath(from, to *calc.Result, key, uid string, added bool, depth int) because {
	fx, err := from.Explain(key, uid)
	if err != nil || !fx.Known {
		return because{}
	}
	tx, err := to.Explain(key, uid)
	var nf *calc.NotFoundError
	if errors.As(err, &nf) && !added {
		return step("group " + key + " deleted (" + fx.File + ")")
	}
	if err != nil || !tx.Known {
		if added {
			return why(fx.Rules, fx.File, 0)
		}
		return why(fx.Rules, fx.File, 0).withPrefix("no longer matched: ")
	}
	// Filters and the whole-file expiration act after the rules.
	if tx.InRules && fx.InRules {
		for _, f := range tx.Filters {
			if f.Removed {
				if added {
					return step(fmt.Sprintf("no longer removed by filter %s (%s = %s in %s)", f.Filter, f.Filter, settingOf(fx, f.Filter), fx.File))
				}
				return step(fmt.Sprintf("removed by filter %s (%s = %s in %s)", f.Filter, f.Filter, f.Setting, tx.File))
			}
		}
		if fe := tx.FileExpiration; fe != nil && fe.Reached {
			if added {
				return step(fmt.Sprintf("the whole-file expiration %s no longer applies (%s)", fe.Date, fx.File))
			}
			return step(fmt.Sprintf("expiration %s passed: the whole file expired (%s:%d)", fe.Date, tx.File, fe.Line))
		}
	}
	lost := lostLeaf(fx.Rules, tx.Rules)
	if lost == nil {
		if r := why(fx.Rules, fx.File, 0); r.text != "" {
			return r.withPrefix(prefix(added))
		}
		return because{}
	}
	at := fmt.Sprintf("%s:%d", fx.File, lost.Line)
	// Through a referenced group: the reason is what changed in that group.
	for _, v := range lost.Via {
		if v.Expired || depth >= 6 {
			continue
		}
		if inner := changedPath(from, to, v.Group, uid, added, depth+1); inner.text != "" {
			if p := prefix(added); p != "" && strings.HasPrefix(inner.text, p) {
				return then(p, lost.Rule, at, strings.TrimPrefix(inner.text, p))
			}
			return then("", lost.Rule, at, inner.text)
		}
	}
	if !added {
		for _, l := range tx.ExpiredLines {
			if strings.Contains(l.Text, lost.Rule) || strings.Contains(strings.ToLower(l.Text), "= "+strings.ToLower(uid)) {
				return step(fmt.Sprintf("expiration %s passed: %s (%s:%d)", l.Date, strings.TrimSpace(l.Text), tx.File, l.Line))
			}
		}
	} else {
		for _, l := range tx.ExpiredLines {
			if strings.Contains(l.Text, lost.Rule) {
				return step(fmt.Sprintf("%s (%s; its expiration %s no longer applies)", lost.Rule, at, l.Date))
			}
		}
	}
	if len(lost.OrgChain) > 0 {
		was := "org chart"
		if !added {
			was = "org chart was"
		}
		return because{text: fmt.Sprintf("%s%s (%s; %s: %s)", prefix(added), lost.Rule, at, was, strings.Join(lost.OrgChain, " → ")),
			via: fmt.Sprintf("%s%s (%s)", prefix(added), lost.Rule, at)}
	}
	return step(fmt.Sprintf("%s%s (%s)", prefix(added), lost.Rule, at))
}
func prefix(added bool) string {
	if added {
		return ""
	}
	return "no longer matched: "
}

func settingOf(ex *calc.Explanation, filter string) string {
	for _, f := range ex.Filters {
		if f.Filter == filter {
			return f.Setting
		}
	}
	return "?"
}

// lostLeaf returns the rule node that matches in from but not in to, walking both trees in
// parallel (they have the same shape when the file did not change; otherwise the first
// matched path of from is the answer).
func lostLeaf(from, to *calc.Trace) *calc.Trace {
	if from == nil || !from.Matched {
		return nil
	}
	if to == nil || to.Rule != from.Rule || len(to.Children) != len(from.Children) {
		return firstMatched(from)
	}
	if len(from.Children) == 0 {
		if to.Matched && len(from.Via) == 0 {
			return nil
		}
		return from
	}
	for i, c := range from.Children {
		if c.Rule == "not" {
			continue
		}
		if l := lostLeaf(c, to.Children[i]); l != nil && !to.Children[i].Matched {
			return l
		}
	}
	// A negated condition that now holds (and fails), or a changed referenced group.
	for i, c := range from.Children {
		if c.Matched != to.Children[i].Matched {
			if c.Rule == "not" && len(c.Children) == 1 {
				return to.Children[i].Children[0]
			}
			return firstMatched(c)
		}
	}
	return firstMatched(from)
}

func firstMatched(t *calc.Trace) *calc.Trace {
	if t == nil || !t.Matched {
		return nil
	}
	if len(t.Children) == 0 {
		return t
	}
	for _, c := range t.Children {
		if c.Rule == "not" {
			continue
		}
		if l := firstMatched(c); l != nil {
			return l
		}
	}
	return nil
}

// why is the first matched path of a rule tree in one line: the rule and where it is,
// followed through referenced groups and org-chart chains.
func why(t *calc.Trace, file string, depth int) because {
	if t == nil || !t.Matched || depth > 8 {
		return because{}
	}
	switch {
	case t.Rule == "not":
		return because{}
	case len(t.Children) > 0:
		for _, c := range t.Children {
			if c.Rule == "not" {
				continue
			}
			if r := why(c, file, depth); r.text != "" {
				return r
			}
		}
		return because{}
	}
	at := fmt.Sprintf("%s:%d", file, t.Line)
	if len(t.OrgChain) > 0 {
		return because{text: fmt.Sprintf("%s (%s; org chart: %s)", t.Rule, at, strings.Join(t.OrgChain, " → ")),
			via: fmt.Sprintf("%s (%s)", t.Rule, at)}
	}
	for _, v := range t.Via {
		if v.Expired {
			continue
		}
		if inner := why(v.Rules, v.File, depth+1); inner.text != "" {
			return then("", t.Rule, at, inner.text)
		}
		return step(fmt.Sprintf("%s (%s)", t.Rule, at))
	}
	return step(fmt.Sprintf("%s (%s)", t.Rule, at))
}
