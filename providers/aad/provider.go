package aad

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/providers"
)

// Provider manages the groups of one `aad` OU.
type Provider struct {
	reg *Registry
	svc *service

	ou, base             string
	identity             string // "kind:tenant/client" (or "static"), for doctor
	upnPrefix, upnSuffix string
	createMissing        bool
	ignoreNotFound       bool
	deleteGroups         bool
	managedPrefix        string

	mu sync.Mutex
	// desired are the groups Desire saw, by key: Entra has no container to enumerate, so Read
	// reads the groups the plan is about (plus, with delete_groups, the prefix listing).
	desired map[string]*providers.Group
	// rejected are the groups Desire refused, by key, with why. Read does not know which
	// Entra groups they claim, so it plans no deletion while there are any.
	rejected map[string]string
	// state is what the last Read learnt that Apply needs: object IDs of groups and members.
	state    *readState
	warnings []string
}

// readState is what Apply needs from Read.
type readState struct {
	groups map[string]*readGroup // by providers.Key(DN)
}

type readGroup struct {
	id string
	// members maps a lower-case uid to the member's object ID.
	members map[string]string
	// leftAlone is why Graph cannot write the group ("" when it can).
	leftAlone string
	// deletable is set for an orphan that Read checked may be deleted (unclaimed, under
	// managed_prefix, shaped like the groups this provider creates). Apply deletes nothing
	// else.
	deletable bool
}

var (
	_ providers.Provider     = (*Provider)(nil)
	_ providers.Desirer      = (*Provider)(nil)
	_ providers.Counter      = (*Provider)(nil)
	_ providers.DeletePolicy = (*Provider)(nil)
)

// Desire implements providers.Desirer. It sets nothing on the group: it records it, because
// Read must know which groups the plan is about (deploy calls Desire for every desired group
// of a target before Read). It also checks what Graph would refuse later: a malformed
// metadata_aad_object_id, or a name that cannot be a mailNickname.
func (p *Provider) Desire(_ *providers.Target, g *providers.Group) error {
	err := checkDesired(g)
	k := providers.Key(g.DN)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		delete(p.desired, k)
		p.rejected[k] = err.Error()
		return err
	}
	delete(p.rejected, k)
	p.desired[k] = g
	return nil
}

func checkDesired(g *providers.Group) error {
	if oid := objectID(g); oid != "" && !looksLikeGUID(oid) {
		return fmt.Errorf("%s: metadata_aad_object_id %q is not an object ID", g.DN, oid)
	}
	// The other rules of a mailNickname are checked by Read, and only for a group that must be
	// created: a group that exists already has a name Graph holds, whatever it contains (a
	// group synchronised from Active Directory can hold a period, say). No group has a longer
	// one.
	if cn := groupName(g); objectID(g) == "" && len(cn) > maxNickLen {
		return badNickError(g, cn, fmt.Sprintf("it is %d characters long; a mailNickname is at most %d", len(cn), maxNickLen))
	}
	return nil
}

// Forget drops the groups recorded (or refused) by Desire (a long-running embedder that
// reuses one Provider for several plans calls it before each).
func (p *Provider) Forget() {
	p.mu.Lock()
	p.desired = map[string]*providers.Group{}
	p.rejected = map[string]string{}
	p.mu.Unlock()
}

// DeletesGroups implements providers.DeletePolicy: only with delete_groups: true.
func (p *Provider) DeletesGroups(*providers.Target) bool { return p.deleteGroups }

// Counters implements providers.Counter: the Registry's counters (every AAD OU of a run
// shares one transport and one request budget).
func (p *Provider) Counters() map[string]int64 { return p.reg.Counters() }

// Warnings returns what Read and Apply reported and left alone (users not found, members
// that are not users, dynamic groups), in order.
func (p *Provider) Warnings() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.warnings)
}

func (p *Provider) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.mu.Lock()
	p.warnings = append(p.warnings, msg)
	p.mu.Unlock()
	p.svc.log(msg, "ou", p.ou)
}

func objectID(g *providers.Group) string {
	if v, ok := g.Metadata["aad_object_id"]; ok && v != nil {
		return strings.TrimSpace(fmt.Sprint(v))
	}
	return ""
}

func groupName(g *providers.Group) string {
	if g.CN != "" {
		return g.CN
	}
	return dn.FirstValue(g.DN)
}

func looksLikeGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

// upn maps a uid to its user principal name.
func (p *Provider) upn(uid string) string { return p.upnPrefix + uid + p.upnSuffix }

// uid maps a user principal name back to a uid; false when it does not fit the format.
func (p *Provider) uid(upn string) (string, bool) {
	if len(upn) <= len(p.upnPrefix)+len(p.upnSuffix) ||
		!strings.EqualFold(upn[:len(p.upnPrefix)], p.upnPrefix) ||
		!strings.EqualFold(upn[len(upn)-len(p.upnSuffix):], p.upnSuffix) {
		return "", false
	}
	return upn[len(p.upnPrefix) : len(upn)-len(p.upnSuffix)], true
}

// Read implements providers.Provider: the current state of the groups recorded by Desire.
func (p *Provider) Read(ctx context.Context, _ *providers.Target) (*providers.State, error) {
	p.mu.Lock()
	desired := make([]*providers.Group, 0, len(p.desired))
	for _, g := range p.desired {
		desired = append(desired, g)
	}
	var rejected []string
	for _, why := range p.rejected {
		rejected = append(rejected, why)
	}
	p.mu.Unlock()
	slices.SortFunc(desired, func(a, b *providers.Group) int { return cmp.Compare(providers.Key(a.DN), providers.Key(b.DN)) })
	slices.Sort(rejected)
	st, err := p.read(ctx, desired, rejected)
	return st, p.reg.secrets.Error(err)
}

// ReadDesired reads the current state of the given desired groups (and records them as
// Desire does). It is Read for callers that can pass the desired groups explicitly.
func (p *Provider) ReadDesired(ctx context.Context, t *providers.Target, desired []*providers.Group) (*providers.State, error) {
	p.Forget()
	for _, g := range desired {
		if err := p.Desire(t, g); err != nil {
			return nil, err
		}
	}
	return p.Read(ctx, t)
}

// target is one desired group during Read, or an orphan (a deletion candidate).
type target struct {
	d      *providers.Group
	key    string
	name   string
	oid    string
	info   *groupInfo
	orphan bool
}

// claims are what the definitions of the OU claim in Entra ID: object IDs (named by
// metadata_aad_object_id, or found for a file's name), lower-case mailNicknames (the files'
// names) and DN keys.
type claims struct {
	ids, names, keys map[string]bool
}

// orphans returns the deletion candidates with delete_groups: the groups under managed_prefix
// that no definition claims and that look like groups this provider creates. They are
// computed only from a complete picture: if any desired group was refused (its claims are
// unknown), no deletion is planned, and the reason is reported.
func (p *Provider) orphans(ctx context.Context, cl claims, rejected []string) ([]*target, error) {
	if !p.deleteGroups {
		return nil, nil
	}
	if len(rejected) > 0 {
		p.warn("delete_groups: no group deletion planned in this run, because %d definitions were refused and the groups they "+
			"name are unknown: %s", len(rejected), abbreviate(rejected))
		return nil, nil
	}
	listed, err := p.svc.listPrefix(ctx, p.managedPrefix)
	if err != nil {
		return nil, err
	}
	var out []*target
	for _, g := range listed {
		dnStr := "cn=" + dn.EscapeValue(g.MailNickname) + "," + p.base
		k := providers.Key(dnStr)
		if cl.ids[strings.ToLower(g.ID)] || cl.names[strings.ToLower(g.MailNickname)] || cl.keys[k] {
			continue
		}
		if !strings.HasPrefix(strings.ToLower(g.MailNickname), strings.ToLower(p.managedPrefix)) {
			continue // never trust the filter alone with a deletion
		}
		cl.keys[k] = true // one deletion per DN: a duplicate name waits for the next run
		if why := g.undeletable(); why != "" {
			p.warn("%s: group %s has no definition but is not deleted: %s", dnStr, g.ID, why)
			continue
		}
		out = append(out, &target{d: &providers.Group{DN: dnStr, CN: g.MailNickname}, key: k, name: g.MailNickname, info: g, orphan: true})
	}
	return out, nil
}

// read does the work of Read in three bulk steps: find the groups (by name or object ID),
// read their members, then resolve the desired users that no member list showed. Users that
// do not exist are dropped from the desired group with ignore_not_found (so the plan shows
// only what will happen and a second run is a no-op), and fail the read otherwise. rejected
// are the groups Desire refused (why, for each).
func (p *Provider) read(ctx context.Context, desired []*providers.Group, rejected []string) (*providers.State, error) {
	// A read starts a plan: its estimates continue the client's window from what it has sent.
	p.svc.g.pacer.resetSim()
	st := &providers.State{Groups: make(map[string]*providers.Group, len(desired))}
	targets := make([]*target, 0, len(desired))
	// What the definitions claim, whatever Graph says and whether or not the group is read
	// (a predictive hit is not): the group a file names by metadata_aad_object_id, the group
	// whose mailNickname is a file's name, and the DN a file defines. delete_groups deletes
	// only groups that none of them claims.
	cl := claims{ids: map[string]bool{}, names: map[string]bool{}, keys: map[string]bool{}}
	var nicks, ids []string
	for _, d := range desired {
		t := &target{d: d, key: providers.Key(d.DN), name: groupName(d), oid: objectID(d)}
		cl.keys[t.key] = true
		cl.names[strings.ToLower(t.name)] = true
		if t.oid != "" {
			cl.ids[strings.ToLower(t.oid)] = true
		}
		if pred := p.reg.opt.Predictive; pred != nil {
			if e, ok := pred.Lookup(d.DN); ok {
				if providers.SameFold(e.Members, d.Members) {
					// Trusted as current (spec 2.3): the diff is empty, no request needed.
					p.reg.counters.predictive.Add(1)
					st.Groups[t.key] = &providers.Group{DN: d.DN, CN: t.name, Description: d.Description, Members: slices.Clone(e.Members)}
					continue
				}
				pred.Invalidate(d.DN)
			}
		}
		if t.oid != "" {
			ids = append(ids, t.oid)
		} else {
			nicks = append(nicks, t.name)
		}
		targets = append(targets, t)
	}
	found, err := p.svc.lookupGroups(ctx, nicks, ids, false)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, t := range targets {
		var gs []*groupInfo
		if t.oid != "" {
			gs = found["id:"+strings.ToLower(t.oid)]
			if len(gs) == 0 {
				errs = append(errs, fmt.Errorf("%s: metadata_aad_object_id %s names no group", t.d.DN, t.oid))
				continue
			}
		} else {
			gs = found["nick:"+strings.ToLower(t.name)]
		}
		switch len(gs) {
		case 0:
			if !p.createMissing {
				p.warn("%s: no Entra ID group has mailNickname %q (set create_if_missing: true to create it)", t.d.DN, t.name)
			} else if why := nickProblem(t.name); why != "" {
				// Refused now, with the file and the character, rather than by Graph at apply.
				errs = append(errs, badNickError(t.d, t.name, why))
			}
		case 1:
			t.info = gs[0]
			cl.ids[strings.ToLower(gs[0].ID)] = true
		default:
			err := ambiguous(t.d.DN, t.name, gs)
			p.warn("%v", err)
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	orphans, err := p.orphans(ctx, cl, rejected)
	if err != nil {
		return nil, err
	}

	var readIDs []string
	for _, t := range slices.Concat(targets, orphans) {
		if t.info != nil && t.info.unmanageable() == "" {
			readIDs = append(readIDs, t.info.ID)
		}
	}
	lists, err := p.svc.readMembers(ctx, readIDs)
	if err != nil {
		return nil, err
	}

	rs := &readState{groups: map[string]*readGroup{}}
	known := map[string]bool{} // lower-case uids whose object ID a member list showed
	for _, t := range slices.Concat(targets, orphans) {
		if t.info == nil {
			continue
		}
		g := &providers.Group{DN: t.d.DN, CN: t.name, Description: deref(t.info.Description)}
		rg := &readGroup{id: t.info.ID, members: map[string]string{}, leftAlone: t.info.unmanageable(), deletable: t.orphan}
		if rg.leftAlone != "" {
			// Report it and make the current state equal the desired one, so that the diff
			// proposes nothing Graph would refuse.
			p.warn("%s: group %s left alone: %s", t.d.DN, t.info.ID, rg.leftAlone)
			g.Members, g.Description = slices.Clone(t.d.Members), t.d.Description
		} else {
			ml := lists[t.info.ID]
			if ml == nil {
				// Never take a list we do not have for an empty one.
				return nil, fmt.Errorf("%s: the members of group %s were not read", t.d.DN, t.info.ID)
			}
			var err error
			if g.Members, err = p.currentMembers(t.d.DN, ml, rg); err != nil {
				errs = append(errs, err)
				continue
			}
			for uid := range rg.members {
				known[uid] = true
			}
		}
		st.Groups[t.key] = g
		rs.groups[t.key] = rg
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	if err := p.checkUsers(ctx, targets, rs, known); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.state = rs
	p.mu.Unlock()
	return st, nil
}

// currentMembers turns a member list into uids; members that are not users, or users whose
// UPN does not fit user_principal_format, are reported and left out (so never removed). A
// member that neither the list nor a lookup by ID identified fails the read of the group:
// left out, it would look absent, and the plan would add it on every run.
func (p *Provider) currentMembers(groupDN string, ml *memberList, rg *readGroup) ([]string, error) {
	out := make([]string, 0, len(ml.members))
	var others, foreign, unknown []string
	for _, m := range ml.members {
		if !m.identified() {
			unknown = append(unknown, m.ID)
			continue
		}
		if !m.isUser() {
			others = append(others, fmt.Sprintf("%s (%s)", m.ID, strings.TrimPrefix(m.Type, "#microsoft.graph.")))
			continue
		}
		uid, ok := p.uid(m.UPN)
		if !ok {
			foreign = append(foreign, m.UPN)
			continue
		}
		out = append(out, uid)
		rg.members[strings.ToLower(uid)] = m.ID
	}
	if len(others) > 0 {
		p.warn("%s: %d members that are not users left alone: %s", groupDN, len(others), abbreviate(others))
	}
	if len(foreign) > 0 {
		p.warn("%s: %d users outside user_principal_format left alone: %s", groupDN, len(foreign), abbreviate(foreign))
	}
	if len(unknown) > 0 {
		why := "a lookup by object ID did not find them as users"
		if ml.unresolved != nil {
			why = fmt.Sprintf("looking them up by object ID failed: %v", ml.unresolved)
		}
		return nil, fmt.Errorf("%s: %d members of group %s could not be identified (Graph returned only their object ID, "+
			"as it does when the application may not read their type; %s): %s; nothing is planned for this group: grant the "+
			"application User.Read.All (or Directory.Read.All)", groupDN, len(unknown), rg.id, why, abbreviate(unknown))
	}
	slices.Sort(out)
	return out, nil
}

// checkUsers resolves the desired members that no member list of the target showed (new
// members of existing groups, every member of a group to create).
func (p *Provider) checkUsers(ctx context.Context, targets []*target, rs *readState, known map[string]bool) error {
	var upns []string
	seen := map[string]bool{}
	for _, t := range targets {
		if rg := rs.groups[t.key]; (rg != nil && rg.leftAlone != "") || (t.info == nil && !p.createMissing) {
			continue
		}
		for _, m := range t.d.Members {
			l := strings.ToLower(m)
			if known[l] || seen[l] {
				continue
			}
			seen[l] = true
			upns = append(upns, p.upn(m))
		}
	}
	if len(upns) == 0 {
		return nil
	}
	ids, err := p.svc.resolveUsers(ctx, upns)
	if err != nil {
		return err
	}
	missing := map[string]bool{}
	for _, u := range upns {
		if _, ok := ids[strings.ToLower(u)]; !ok {
			missing[strings.ToLower(u)] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var errs []string
	for _, t := range targets {
		var gone []string
		keep := t.d.Members[:0:0]
		for _, m := range t.d.Members {
			if missing[strings.ToLower(p.upn(m))] {
				gone = append(gone, m)
			} else {
				keep = append(keep, m)
			}
		}
		if len(gone) == 0 {
			continue
		}
		if p.ignoreNotFound {
			p.warn("%s: %d users not found in Entra ID, skipped: %s", t.d.DN, len(gone), abbreviate(gone))
			// A new slice: the calculated group's member slice is shared with the caller.
			t.d.Members = keep
		} else {
			errs = append(errs, fmt.Sprintf("%s: %s", t.d.DN, abbreviate(gone)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("users not found in Entra ID (set ignore_not_found: true to skip them): %s", strings.Join(errs, "; "))
	}
	return nil
}

// abbreviate joins at most 10 names.
func abbreviate(s []string) string {
	if len(s) <= 10 {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:10], ", ") + fmt.Sprintf(" and %d more", len(s)-10)
}
