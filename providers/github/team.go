package github

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	gh "github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/entitlements-go/entitlements/providers"
)

// TeamProvider manages a `github_team` OU: one team per file, the team slug being the file
// name. Desired attributes come from metadata:
//
//   - parent_team_name (metadata_parent_team_name in a .txt file): the parent team's slug.
//     Missing parents are created first. A parent is never removed (Ruby parity): dropping
//     the key leaves the current parent alone.
//   - team_maintainers: comma-separated logins (or a YAML list). Only desired members can be
//     maintainers (others are ignored with a warning); an absent or empty value leaves
//     maintainers alone, so a missing key never demotes everyone.
//   - team_privacy: closed or secret. Used when a team is created (default closed) and
//     enforced on existing teams only when the key is set (the Ruby plugin forced closed on
//     every update). GitHub nests teams only under closed parents: a plan that names a
//     secret parent (by its file, or as read from GitHub when no file makes it closed) is
//     refused, naming both files.
//
// A team created with a user token gets its creator as maintainer (GitHub does that; an app
// installation token adds nobody): the creator is removed again in the same apply unless the
// team's file wants them, so one apply converges whichever the token.
//
// Teams are deleted only with `delete_teams: true` on the OU; that makes the OU own every
// team of the org (teams without a file are deleted), so do not enable it when several OUs
// manage one org. GitHub deletes a team's child teams with it, so a team without a file is
// never deleted while it is the parent of another team or is named as a parent_team_name
// (parents created on demand have no file): such teams are left out of the state read, and
// a hierarchy without files goes away leaves first, one level per run. Before a DELETE the
// team's child teams are listed again, and the delete is skipped if it has any now, so a
// deletion's Remove list (the team's members) is always everything GitHub removes.
type TeamProvider struct {
	target

	smu       sync.Mutex
	snaps     map[string]*teamSnap // slug → team as read (or created) this run
	createErr map[string]error     // slug → why its creation failed this run
	parents   singleflight.Group   // parents looked up or created on demand

	dmu    sync.Mutex
	bySlug map[string]*providers.Group // desired teams by slug (Desire)
}

// countManaged counts teams left alone because GitHub does not let the API change their
// membership (the managed_teams counter).
func (p *TeamProvider) countManaged(n int64) {
	p.counters.managedTeams.Add(n)
	p.s.h.counters.managedTeams.Add(n)
}

// skipSynced leaves alone the teams whose membership an identity provider manages (GitHub's
// team synchronization: "you will see an error if you attempt to use the API for making
// changes to the team's membership"): a team that would change (a desired team whose members
// or maintainers differ, or a team without a file that would be deleted) is looked up with
// GET /orgs/{org}/teams/{slug}/team-sync/group-mappings, and when it is mapped to groups, its
// members and maintainers are shown as desired (no change) and a team without a file is not a
// deletion candidate, with a warning. Teams that would not change cost no request. A lookup
// GitHub refuses (team synchronization not enabled, a token without the permission) means
// "not synced".
func (p *TeamProvider) skipSynced(ctx context.Context, desired map[string]*providers.Group, snaps map[string]*teamSnap, out *providers.State) {
	type cand struct {
		slug, key string
		d         *providers.Group
		groups    []string
	}
	var cands []*cand
	for slug := range snaps {
		d := desired[slug]
		key := providers.Key("cn=" + slug + "," + p.cfg.base)
		if d != nil {
			key = providers.Key(d.DN)
		}
		g := out.Groups[key]
		if g == nil {
			continue
		}
		if d != nil {
			want, manage := d.Attrs["maintainers"]
			if providers.SameFold(g.Members, d.Members) && (!manage || providers.SameFold(g.Attrs["maintainers"], want)) {
				continue
			}
		}
		cands = append(cands, &cand{slug: slug, key: key, d: d})
	}
	slices.SortFunc(cands, func(a, b *cand) int { return strings.Compare(a.slug, b.slug) })
	forEach(len(cands), p.s.h.reg.opt.ReadConcurrency, func(i int) {
		c := cands[i]
		groups, err := p.s.teamSyncGroups(ctx, p.cfg.org, c.slug)
		if err != nil {
			p.warn("could not tell whether the team is synced with an identity provider; treating it as not synced",
				"org", p.cfg.org, "team", c.slug, "err", err.Error())
		}
		c.groups = groups
	})
	for _, c := range cands {
		if len(c.groups) == 0 {
			continue
		}
		p.countManaged(1)
		if c.d == nil {
			delete(out.Groups, c.key)
			p.warn("team synced with an identity provider is not deleted: its membership is managed there",
				"org", p.cfg.org, "team", c.slug, "idp_groups", strings.Join(c.groups, ","))
			continue
		}
		g := out.Groups[c.key]
		g.Members = slices.Clone(c.d.Members)
		slices.Sort(g.Members)
		if want, ok := c.d.Attrs["maintainers"]; ok {
			g.Attrs["maintainers"] = slices.Clone(want)
		}
		p.warn("team synced with an identity provider: GitHub does not let the API change its members, so its membership is left alone (change it in the identity provider)",
			"org", p.cfg.org, "team", c.slug, "idp_groups", strings.Join(c.groups, ","))
	}
}

// slugify derives a team slug from a name as GitHub does: lower case, every run of
// characters other than letters, digits, '_' and '-' replaced by one '-'.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

func slugOf(g *providers.Group) string { return slugify(groupCN(g)) }

func metaString(md map[string]any, k string) string {
	switch v := md[k].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	default:
		return strings.TrimSpace(fmt.Sprint(v))
	}
}

func metaList(md map[string]any, k string) []string {
	var raw []string
	switch v := md[k].(type) {
	case nil:
	case string:
		raw = strings.Split(v, ",")
	case []string:
		raw = v
	case []any:
		for _, e := range v {
			raw = append(raw, fmt.Sprint(e))
		}
	default:
		raw = strings.Split(fmt.Sprint(v), ",")
	}
	var out []string
	for _, r := range raw {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// lowered returns the logins in lower case (a new slice: a desired group's members are shared
// with the calculation's result).
func lowered(v []string) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strings.ToLower(x)
	}
	return out
}

func lowerSet(v []string) map[string]bool {
	out := make(map[string]bool, len(v))
	for _, x := range v {
		out[strings.ToLower(x)] = true
	}
	return out
}

// Desire implements providers.Desirer: the attributes parent, maintainers and privacy from
// metadata (see TeamProvider). Logins are lower-cased (as the Ruby plugin does before every
// request and comparison). The description is cleared: GitHub team descriptions are not
// managed (Ruby parity), and comparing them would show a change on every run.
// The capabilities the team provider claims.
var (
	_ providers.Provider     = (*TeamProvider)(nil)
	_ providers.Desirer      = (*TeamProvider)(nil)
	_ providers.Counter      = (*TeamProvider)(nil)
	_ providers.DeletePolicy = (*TeamProvider)(nil)
)

// DeletesGroups implements providers.DeletePolicy: teams without a file are deleted only with
// delete_teams: true.
func (p *TeamProvider) DeletesGroups(*providers.Target) bool { return p.cfg.deleteTeams }

// Desire implements providers.Desirer. It turns a desired group into the team GitHub will
// be asked for: the slug from the group's name (refused when it yields none), lower-cased
// logins, no description (a team's description is not managed), and the parent, maintainers
// (members only; others are ignored with a warning) and privacy from the metadata, each
// checked (a team cannot be its own parent, a nested team cannot be secret). It records the
// team for Read, which must come after every Desire of the target.
func (p *TeamProvider) Desire(_ *providers.Target, g *providers.Group) error {
	slug := slugOf(g)
	if slug == "" {
		return fmt.Errorf("%s: %q is not a usable team name", g.DN, groupCN(g))
	}
	g.Description = ""
	g.Members = lowered(g.Members)
	attrs := map[string][]string{}
	if v := metaString(g.Metadata, "parent_team_name"); v != "" {
		ps := slugify(v)
		if ps == slug {
			return fmt.Errorf("team %s cannot be its own parent", slug)
		}
		attrs["parent"] = []string{ps}
	}
	if want := metaList(g.Metadata, "team_maintainers"); len(want) > 0 {
		members := lowerSet(g.Members)
		var keep, drop []string
		seen := map[string]bool{}
		for _, m := range want {
			k := strings.ToLower(m)
			switch {
			case seen[k]:
			case members[k]:
				keep = append(keep, k)
			default:
				drop = append(drop, m)
			}
			seen[k] = true
		}
		if len(drop) > 0 {
			p.warn("team maintainers who are not members of the team are ignored", "team", slug, "users", strings.Join(drop, ","))
		}
		if keep == nil {
			keep = []string{}
		}
		attrs["maintainers"] = keep
	}
	if v := strings.ToLower(metaString(g.Metadata, "team_privacy")); v != "" {
		if v == "visible" {
			v = "closed"
		}
		if v != "closed" && v != "secret" {
			return fmt.Errorf("team %s: team_privacy must be closed or secret, not %q", slug, v)
		}
		if v == "secret" && attrs["parent"] != nil {
			return fmt.Errorf("team %s (%s): a nested team (parent %s) cannot be secret", slug, fileOf(g), attrs["parent"][0])
		}
		attrs["privacy"] = []string{v}
	}
	g.Attrs = attrs
	if err := p.recordTeam(slug, g); err != nil {
		return err
	}
	p.record(g)
	return nil
}

// fileOf names a desired team's file for messages.
func fileOf(g *providers.Group) string {
	if g.File != "" {
		return g.File
	}
	return "the file of " + groupCN(g)
}

// secretParentError: GitHub nests teams only under closed (visible) parents ("When a team is
// nested, the privacy for parent teams cannot be secret"), so such a plan is refused before
// anything is written instead of failing half-way through an apply.
func secretParentError(child *providers.Group, parent string, parentWhere string) error {
	return fmt.Errorf("team %s (%s) names %s as its parent_team_name, but %s is secret (%s): GitHub does not nest teams under a secret team; make %s closed (team_privacy: closed) or drop the parent",
		slugOf(child), fileOf(child), parent, parent, parentWhere, parent)
}

// recordTeam indexes a desired team by slug and refuses a pair of desired teams where one is
// the parent of the other and the parent asks to be secret (whichever file is seen first).
func (p *TeamProvider) recordTeam(slug string, g *providers.Group) error {
	p.dmu.Lock()
	defer p.dmu.Unlock()
	if p.bySlug == nil {
		p.bySlug = map[string]*providers.Group{}
	}
	p.bySlug[slug] = g
	if ps := first(g.Attrs["parent"]); ps != "" {
		if par := p.bySlug[ps]; par != nil && first(par.Attrs["privacy"]) == "secret" {
			return secretParentError(g, ps, fileOf(par)+" sets team_privacy: secret")
		}
	}
	if first(g.Attrs["privacy"]) == "secret" {
		var errs []error
		for _, c := range p.bySlug {
			if first(c.Attrs["parent"]) == slug {
				errs = append(errs, secretParentError(c, slug, fileOf(g)+" sets team_privacy: secret"))
			}
		}
		return errors.Join(errs...)
	}
	return nil
}

// read is Read (see redact.go): every desired team in aliased GraphQL batches (plus
// every team of the org with delete_teams), together with the shared org read. A desired team
// that does not exist is absent (the diff creates it). Desired members who are not org
// members are shown as present, so that they are reported once here instead of appearing as
// an add that can never be applied.
func (p *TeamProvider) read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	ctx = p.withTarget(ctx)
	desired := map[string]*providers.Group{}
	for _, g := range p.desiredGroups() {
		desired[slugOf(g)] = g
	}
	hits, slugs := p.predictiveTeams(desired)
	// Parents named by desired teams but defined by no file are read too (in the same
	// batches): their privacy decides whether the plan can nest under them, and their IDs
	// spare a lookup when a child is created or moved.
	var parentOnly []string
	for _, d := range desired {
		if ps := first(d.Attrs["parent"]); ps != "" && desired[ps] == nil && !slices.Contains(parentOnly, ps) {
			parentOnly = append(parentOnly, ps)
		}
	}
	slices.Sort(parentOnly)
	// With every team trusted from the predictive state there is nothing to read.
	read := len(slugs) > 0 || len(parentOnly) > 0 || p.cfg.deleteTeams
	var st *orgState
	snaps := map[string]*teamSnap{}
	eg, ectx := errgroup.WithContext(ctx)
	if read {
		eg.Go(func() error {
			var err error
			st, err = p.orgState(ectx)
			return err
		})
	}
	eg.Go(func() error {
		if !read {
			return nil
		}
		all := append(slices.Clip(slugs), parentOnly...)
		if p.cfg.deleteTeams {
			listed, err := p.s.listTeamSlugs(ectx, p.cfg.org)
			if err != nil {
				return err
			}
			var ent []string
			for _, sl := range listed {
				switch {
				case strings.HasPrefix(sl, "ent:"):
					// An enterprise team shown in the org ("GitHub generates the enterprise
					// team's slug from the team name and adds the ent: prefix"): managed by
					// the enterprise, never by an org's files.
					ent = append(ent, sl)
				case desired[sl] == nil && !slices.Contains(parentOnly, sl):
					all = append(all, sl)
				}
			}
			if len(ent) > 0 {
				p.countManaged(int64(len(ent)))
				p.warn("enterprise teams are managed by the enterprise, not by this OU: left alone (never deleted)",
					"org", p.cfg.org, "teams", strings.Join(ent, ","))
			}
		}
		var err error
		snaps, err = p.s.readTeams(ectx, p.cfg.org, all, func(done, total int) {
			t.ReportRead(providers.ReadProgress{Groups: done, Total: total})
		})
		return err
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	// A team is the parent of another (existing, or named by a desired team and created on
	// demand): deleting it would delete its children too, so it is never a candidate.
	parents := map[string]bool{}
	for _, d := range desired {
		if ps := first(d.Attrs["parent"]); ps != "" {
			parents[ps] = true
		}
	}
	for _, snap := range snaps {
		if snap.Parent != "" {
			parents[snap.Parent] = true
		}
	}
	if err := secretParents(desired, snaps); err != nil {
		return nil, err
	}
	out := &providers.State{Groups: map[string]*providers.Group{}}
	for _, g := range hits {
		out.Groups[providers.Key(g.DN)] = g
	}
	leftOut, pending := map[string][]string{}, map[string][]string{}
	var kept []string
	for slug, snap := range snaps {
		if desired[slug] == nil && parents[slug] {
			if p.cfg.deleteTeams {
				kept = append(kept, slug)
			}
			continue
		}
		// Logins as read are lower-cased here, as desired ones are in Desire.
		g := &providers.Group{DN: "cn=" + slug + "," + p.cfg.base, CN: slug, Members: lowered(snap.Members),
			Attrs: map[string][]string{"privacy": {snap.Privacy}}}
		g.Attrs["maintainers"] = slices.Sorted(maps.Keys(snap.Maintainers))
		if snap.Parent != "" {
			g.Attrs["parent"] = []string{snap.Parent}
		}
		if d := desired[slug]; d != nil {
			g.DN, g.CN = d.DN, groupCN(d)
			lo, pend := p.fold(g, d, st)
			if len(lo) > 0 {
				leftOut[slug] = lo
			}
			if len(pend) > 0 {
				pending[slug] = pend
			}
		}
		slices.Sort(g.Members)
		out.Groups[providers.Key(g.DN)] = g
	}
	p.skipSynced(ctx, desired, snaps, out)
	if len(kept) > 0 {
		slices.Sort(kept)
		p.log.Info("teams without a file are kept: they are parents of other teams, and GitHub would delete their child teams with them",
			"org", p.cfg.org, "teams", strings.Join(kept, ","))
	}
	for _, slug := range slices.Sorted(maps.Keys(leftOut)) {
		n := int64(len(leftOut[slug]))
		p.counters.skippedUsers.Add(n)
		p.s.h.counters.skippedUsers.Add(n)
		p.warn("users who are not members of the org are left out of the team", "org", p.cfg.org, "team", slug,
			"users", strings.Join(leftOut[slug], ","))
	}
	for _, slug := range slices.Sorted(maps.Keys(pending)) {
		n := int64(len(pending[slug]))
		p.counters.pendingUsers.Add(n)
		p.s.h.counters.pendingUsers.Add(n)
		// Nothing changes for them, so this is no warning (the Ruby plugin names them nowhere).
		p.log.Debug("users whose invitation to the org is pending are not in the team yet (pending): they are added once they accept, never invited again meanwhile",
			"org", p.cfg.org, "team", slug, "users", strings.Join(pending[slug], ","))
	}
	p.smu.Lock()
	p.snaps, p.createErr = snaps, map[string]error{}
	p.smu.Unlock()
	return out, nil
}

// secretParents refuses desired teams whose parent is secret as read from GitHub while no
// file makes it closed (a parent's file that sets team_privacy: secret is refused by Desire).
func secretParents(desired map[string]*providers.Group, snaps map[string]*teamSnap) error {
	var errs []error
	for _, slug := range slices.Sorted(maps.Keys(desired)) {
		d := desired[slug]
		ps := first(d.Attrs["parent"])
		if ps == "" {
			continue
		}
		snap := snaps[ps]
		if snap == nil || snap.Privacy != "secret" {
			continue
		}
		par := desired[ps]
		switch {
		case par == nil:
			errs = append(errs, secretParentError(d, ps, "it has no file in this OU and is secret on GitHub"))
		case first(par.Attrs["privacy"]) == "":
			errs = append(errs, secretParentError(d, ps, "secret on GitHub, and "+fileOf(par)+" does not set team_privacy"))
		}
	}
	return errors.Join(errs...)
}

// fold shows desired members (and maintainers) who are not active org members as present:
// left is those who are not in the org at all, pending those whose invitation to the org
// (possibly sent by adding them to this team) is not accepted yet.
func (p *TeamProvider) fold(g, d *providers.Group, st *orgState) (left, pending []string) {
	cur := lowerSet(g.Members)
	for _, m := range d.Members {
		if !cur[strings.ToLower(m)] && !st.active(m) {
			g.Members = append(g.Members, m)
			if st.present(m) {
				pending = append(pending, m)
			} else {
				left = append(left, m)
			}
		}
	}
	if want, ok := d.Attrs["maintainers"]; ok {
		curM := lowerSet(g.Attrs["maintainers"])
		for _, m := range want {
			if !curM[strings.ToLower(m)] && !st.active(m) {
				g.Attrs["maintainers"] = append(g.Attrs["maintainers"], m)
			}
		}
	}
	return left, pending
}

func (p *TeamProvider) snap(slug string) *teamSnap {
	p.smu.Lock()
	defer p.smu.Unlock()
	return p.snaps[slug]
}

// knownID returns a team's database ID when this run has seen it: read or created, or named
// as the parent of a team that was read (the bulk read asks for parents' IDs too).
func (p *TeamProvider) knownID(slug string) (int64, bool) {
	p.smu.Lock()
	defer p.smu.Unlock()
	if s := p.snaps[slug]; s != nil {
		return s.ID, true
	}
	for _, s := range p.snaps {
		if s.Parent == slug && s.ParentID != 0 {
			return s.ParentID, true
		}
	}
	return 0, false
}

func (p *TeamProvider) setSnap(s *teamSnap) {
	p.smu.Lock()
	p.snaps[s.Slug] = s
	p.smu.Unlock()
}

func (p *TeamProvider) failCreate(slug string, err error) {
	p.smu.Lock()
	if p.createErr == nil {
		p.createErr = map[string]error{}
	}
	p.createErr[slug] = err
	p.smu.Unlock()
}

// apply is Apply (see redact.go): creates first, parents before children, then updates
// and deletes, every write under the host's write limit.
func (p *TeamProvider) apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	ctx = p.withTarget(ctx)
	out := make([]providers.Outcome, len(changes))
	st, err := p.orgState(ctx)
	if err != nil {
		for i, c := range changes {
			out[i] = providers.Outcome{Change: c, Status: providers.Failed, Err: fmt.Errorf("reading the org: %w", err)}
		}
		return out
	}
	pending := map[string]int{} // slug → index of its create
	var rest []int
	for i, c := range changes {
		switch c.Kind {
		case providers.CreateGroup:
			pending[slugOf(c.Desired)] = i
		case providers.UpdateGroup, providers.DeleteGroup:
			rest = append(rest, i)
		default:
			out[i] = providers.Outcome{Change: c, Status: providers.Failed,
				Err: fmt.Errorf("the GitHub team provider cannot apply %s changes", c.Kind)}
		}
	}
	// A parent whose privacy changes (to closed: GitHub nests only under closed teams) is
	// updated before any team is created under it or moved to it.
	nesting := map[string]bool{}
	for _, c := range changes {
		if c.Kind == providers.CreateGroup || (c.Kind == providers.UpdateGroup && slices.Contains(c.AttrsChanged, "parent")) {
			if ps := first(c.Desired.Attrs["parent"]); ps != "" {
				nesting[ps] = true
			}
		}
	}
	var early, later []int
	for _, i := range rest {
		c := changes[i]
		if c.Kind == providers.UpdateGroup && nesting[slugOf(c.Desired)] && slices.Contains(c.AttrsChanged, "privacy") {
			early = append(early, i)
		} else {
			later = append(later, i)
		}
	}
	forEach(len(early), p.writeSlots(), func(j int) { out[early[j]] = p.update(ctx, st, changes[early[j]]) })
	rest = later
	// Creates by level: a team whose parent is created in this run waits for it.
	for len(pending) > 0 {
		var level []int
		for _, i := range pending {
			if _, waiting := pending[first(changes[i].Desired.Attrs["parent"])]; !waiting {
				level = append(level, i)
			}
		}
		if len(level) == 0 {
			for _, i := range pending {
				out[i] = providers.Outcome{Change: changes[i], Status: providers.Failed,
					Err: fmt.Errorf("team %s: its parent teams form a cycle", slugOf(changes[i].Desired))}
			}
			break
		}
		for _, i := range level {
			delete(pending, slugOf(changes[i].Desired))
		}
		forEach(len(level), p.writeSlots(), func(j int) { out[level[j]] = p.create(ctx, st, changes[level[j]]) })
	}
	forEach(len(rest), p.writeSlots(), func(j int) {
		i := rest[j]
		c := changes[i]
		if c.Kind == providers.DeleteGroup {
			out[i] = outcome(c, []userResult{p.deleteTeam(ctx, c)})
		} else {
			out[i] = p.update(ctx, st, c)
		}
	})
	return out
}

// writeSlots is the number of goroutines that write for one level of Apply (teams, then
// the members of each team): the host's write limit, so no more goroutines wait than can
// write.
func (p *TeamProvider) writeSlots() int { return p.s.h.reg.opt.WriteConcurrency }

func (p *TeamProvider) create(ctx context.Context, st *orgState, c *providers.Change) providers.Outcome {
	d := c.Desired
	slug := slugOf(d)
	var parentID *int64
	parent := first(d.Attrs["parent"])
	if parent != "" {
		id, r := p.ensureParent(ctx, parent)
		if r != nil {
			p.failCreate(slug, r.err)
			return outcome(c, []userResult{*r})
		}
		parentID = &id
	}
	privacy := first(d.Attrs["privacy"])
	if privacy == "" {
		privacy = "closed"
	}
	snap, adopted, r := p.createTeam(ctx, slug, groupCN(d), privacy, parentID)
	if r.status != providers.Applied {
		p.failCreate(slug, r.err)
		return outcome(c, []userResult{r})
	}
	rs := []userResult{r}
	if adopted {
		// The team existed (made by someone else, or by an attempt whose answer was lost):
		// bring its parent and privacy in line too.
		changed := map[string]bool{}
		if parent != "" && snap.Parent != parent {
			changed["parent"] = true
		}
		if pv := first(d.Attrs["privacy"]); pv != "" && snap.Privacy != pv {
			changed["privacy"] = true
		}
		if len(changed) > 0 {
			rs = append(rs, p.patch(ctx, d, slug, changed))
		}
	}
	rs = append(rs, p.members(ctx, st, slug, c, nil)...)
	if !adopted {
		if r, ok := p.dropCreator(ctx, st, slug, d.Members); ok {
			rs = append(rs, r)
		}
	}
	return outcome(c, rs)
}

// dropCreator undoes what GitHub does to a team created with a user token ("When you create
// a new team, you automatically become a team maintainer"; an app installation token adds
// nobody): the token's user is removed again unless the team wants them (then the member
// writes already gave them the role the file asks for). Without it, every team created by
// a user token would show its creator as a removal in the next plan.
func (p *TeamProvider) dropCreator(ctx context.Context, st *orgState, slug string, want []string) (userResult, bool) {
	if p.s.app() || !st.userToken() || lowerSet(want)[strings.ToLower(st.viewer)] {
		return userResult{}, false
	}
	r := p.removeMember(ctx, slug, st.viewer)
	if r.status == providers.Applied || r.status == providers.AlreadyInState {
		// The creator's own membership is not a change of the plan: report it as done.
		r = userResult{status: providers.AlreadyInState}
	}
	return r, true
}

// ensureParent returns the database ID of a parent team: from this run's read or creates,
// else from GitHub; a parent that does not exist is created (closed, no members), as the Ruby
// plugin does. Concurrent children share one lookup.
func (p *TeamProvider) ensureParent(ctx context.Context, slug string) (int64, *userResult) {
	if id, ok := p.knownID(slug); ok {
		return id, nil
	}
	p.smu.Lock()
	cerr := p.createErr[slug]
	p.smu.Unlock()
	if cerr != nil {
		r := failed(fmt.Errorf("parent team %s could not be created: %w", slug, cerr))
		return 0, &r
	}
	v, err, _ := p.parents.Do(slug, func() (any, error) {
		if id, ok := p.knownID(slug); ok {
			return id, nil
		}
		s, err := p.getTeam(ctx, slug)
		if err != nil {
			return nil, err
		}
		if s != nil {
			p.setSnap(s)
			return s.ID, nil
		}
		p.warn("creating a parent team that no file of the OU defines", "team", slug)
		s, adopted, r := p.createTeam(ctx, slug, slug, "closed", nil)
		if r.status != providers.Applied {
			return nil, r.err
		}
		if st, err := p.orgState(ctx); err == nil && !adopted {
			// A parent created on demand has no members, as the Ruby plugin creates it.
			if r, ok := p.dropCreator(ctx, st, slug, nil); ok && r.err != nil {
				p.warn("could not remove the token's user from a parent team it created", "team", slug, "err", r.err.Error())
			}
		}
		return s.ID, nil
	})
	if err != nil {
		r := writeFailure(err, "parent team %s", slug)
		return 0, &r
	}
	return v.(int64), nil
}

func snapFromTeam(t *gh.Team) *teamSnap {
	s := &teamSnap{ID: t.GetID(), Slug: strings.ToLower(t.GetSlug()), Name: t.GetName(), Privacy: t.GetPrivacy(),
		Maintainers: map[string]string{}}
	if s.Privacy == "" {
		s.Privacy = "closed"
	}
	if t.Parent != nil {
		s.Parent, s.ParentID = strings.ToLower(t.Parent.GetSlug()), t.Parent.GetID()
	}
	return s
}

// getTeam reads one team by slug with REST; nil when it does not exist.
func (p *TeamProvider) getTeam(ctx context.Context, slug string) (*teamSnap, error) {
	if !validSlug(slug) {
		return nil, badSlug(slug)
	}
	var t *gh.Team
	err := p.s.read(ctx, func(ctx context.Context) error {
		var err error
		t, _, err = p.s.gh.Teams.GetTeamBySlug(ctx, p.cfg.org, slug)
		return err
	})
	if httpStatus(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading team %s/%s: %w", p.cfg.org, slug, err)
	}
	return snapFromTeam(t), nil
}

// createTeam creates a team. The POST is never replayed blindly: when its answer is lost
// (timeout, reset, gateway error) the team is read back by slug first, and adopted if it is
// there; a 422 (the name exists) is adopted the same way.
func (p *TeamProvider) createTeam(ctx context.Context, slug, name, privacy string, parentID *int64) (*teamSnap, bool, userResult) {
	if !validSlug(slug) {
		return nil, false, failed(badSlug(slug))
	}
	parent := ""
	if parentID != nil {
		parent = strconv.FormatInt(*parentID, 10)
	}
	snap, adopted, r := p.createTeamOnce(ctx, slug, name, privacy, parentID)
	msg := "created team"
	if adopted {
		msg = "adopted existing team"
	}
	p.logWrite(msg, r, "team", slug, "name", name, "privacy", privacy, "parent_id", parent)
	return snap, adopted, r
}

func (p *TeamProvider) createTeamOnce(ctx context.Context, slug, name, privacy string, parentID *int64) (*teamSnap, bool, userResult) {
	org := p.cfg.org
	nt := gh.NewTeam{Name: name, Privacy: &privacy, ParentTeamID: parentID}
	attempts := p.s.h.reg.opt.MaxAttempts
	var lastErr error
	for attempt := 1; attempt <= attempts; attempt++ {
		var t *gh.Team
		err := p.s.write(ctx, func(ctx context.Context) error {
			var err error
			t, _, err = p.s.gh.Teams.CreateTeam(ctx, org, nt)
			return err
		})
		if err == nil {
			s := snapFromTeam(t)
			if s.Slug != slug {
				return nil, false, failed(fmt.Errorf("GitHub created team %q with slug %q, not %q: rename the file to the slug GitHub uses", name, s.Slug, slug))
			}
			p.setSnap(s)
			return s, false, applied()
		}
		if httpStatus(err) == http.StatusUnprocessableEntity {
			s, gerr := p.getTeam(ctx, slug)
			if gerr == nil && s != nil {
				p.warn("team already existed; adopting it", "team", slug)
				p.setSnap(s)
				return s, true, applied()
			}
			return nil, false, failed(fmt.Errorf("creating team %s/%s: %s", org, slug, apiMessage(err)))
		}
		if !unseen(err) {
			return nil, false, writeFailure(err, "creating team %s/%s", org, slug)
		}
		lastErr = err
		// The answer was lost: the team may exist now. Look before asking again.
		s, gerr := p.getTeam(ctx, slug)
		if gerr != nil {
			return nil, false, userResult{status: providers.Unknown,
				err: fmt.Errorf("creating team %s/%s: no answer (%v), and reading it back failed: %w", org, slug, err, gerr)}
		}
		if s != nil {
			p.setSnap(s)
			return s, true, applied()
		}
		if attempt < attempts {
			if berr := p.s.backoff(ctx, attempt, 0); berr != nil {
				return nil, false, userResult{status: providers.Unknown, err: fmt.Errorf("creating team %s/%s: %w", org, slug, errors.Join(err, berr))}
			}
		}
	}
	return nil, false, failed(fmt.Errorf("creating team %s/%s: no answer after %d tries (the team does not exist): %w", org, slug, attempts, lastErr))
}

// patch sets a team's parent and/or privacy (PATCH is idempotent: it sets values).
func (p *TeamProvider) patch(ctx context.Context, d *providers.Group, slug string, changed map[string]bool) userResult {
	if !validSlug(slug) {
		return failed(badSlug(slug))
	}
	s := p.snap(slug)
	if s == nil {
		var err error
		if s, err = p.getTeam(ctx, slug); err != nil || s == nil {
			return failed(fmt.Errorf("team %s: cannot read it to change it: %v", slug, err))
		}
	}
	nt := gh.NewTeam{Name: s.Name}
	if changed["parent"] {
		id, r := p.ensureParent(ctx, first(d.Attrs["parent"]))
		if r != nil {
			return *r
		}
		nt.ParentTeamID = &id
		if s.Privacy == "secret" && !changed["privacy"] {
			// GitHub refuses to nest a secret team; the parent was asked for explicitly.
			closed := "closed"
			nt.Privacy = &closed
			p.warn("a nested team cannot be secret; setting it to closed", "team", slug)
		}
	}
	if changed["privacy"] {
		pv := first(d.Attrs["privacy"])
		nt.Privacy = &pv
	}
	var what []any
	if changed["parent"] {
		what = append(what, "parent", first(d.Attrs["parent"]))
	}
	if nt.Privacy != nil {
		what = append(what, "privacy", *nt.Privacy)
	}
	err := p.s.write(ctx, func(ctx context.Context) error {
		_, _, err := p.s.gh.Teams.EditTeamBySlug(ctx, p.cfg.org, slug, nt, false)
		return err
	})
	var r userResult
	switch {
	case err == nil:
		r = applied()
	case httpStatus(err) == http.StatusUnprocessableEntity:
		r = failed(fmt.Errorf("changing team %s: %s", slug, apiMessage(err)))
	default:
		r = writeFailure(err, "changing team %s", slug)
	}
	p.logWrite("changed team", r, append([]any{"team", slug}, what...)...)
	return r
}

func (p *TeamProvider) update(ctx context.Context, st *orgState, c *providers.Change) providers.Outcome {
	slug := slugOf(c.Desired)
	changed := map[string]bool{}
	for _, a := range c.AttrsChanged {
		changed[a] = true
	}
	var rs []userResult
	if changed["parent"] || changed["privacy"] {
		rs = append(rs, p.patch(ctx, c.Desired, slug, changed))
	}
	return outcome(c, append(rs, p.members(ctx, st, slug, c, changed)...))
}

// members applies member adds and removes, and maintainer promotions and demotions when the
// maintainers attribute changed. New members who should be maintainers get that role in the
// same PUT.
func (p *TeamProvider) members(ctx context.Context, st *orgState, slug string, c *providers.Change, changed map[string]bool) []userResult {
	d := c.Desired
	want, manage := d.Attrs["maintainers"]
	maint := lowerSet(want)
	type op struct{ login, role string }
	var ops []op
	for _, u := range c.Add {
		role := "member"
		if manage && maint[strings.ToLower(u)] {
			role = "maintainer"
		}
		ops = append(ops, op{u, role})
	}
	for _, u := range c.Remove {
		ops = append(ops, op{u, ""})
	}
	if changed["maintainers"] && c.Current != nil {
		adds, removes := lowerSet(c.Add), lowerSet(c.Remove)
		cur := lowerSet(c.Current.Attrs["maintainers"])
		members := lowerSet(d.Members)
		for _, u := range want {
			k := strings.ToLower(u)
			if !cur[k] && !adds[k] {
				ops = append(ops, op{u, "maintainer"})
			}
		}
		for _, u := range c.Current.Attrs["maintainers"] {
			k := strings.ToLower(u)
			if !maint[k] && !removes[k] && members[k] {
				ops = append(ops, op{u, "member"})
			}
		}
	}
	rs := make([]userResult, len(ops))
	forEach(len(ops), p.writeSlots(), func(i int) {
		o := ops[i]
		if o.role == "" {
			rs[i] = p.removeMember(ctx, slug, o.login)
		} else {
			rs[i] = p.putMember(ctx, st, slug, o.login, o.role)
		}
		if rs[i].warn != "" {
			p.warn(rs[i].warn)
		}
	})
	return rs
}

func (p *TeamProvider) putMember(ctx context.Context, st *orgState, slug, login, role string) userResult {
	org := p.cfg.org
	if !validLogin(login) {
		return badLogin(login, "not added to team "+slug)
	}
	if !validSlug(slug) {
		return failed(badSlug(slug))
	}
	if !st.active(login) {
		p.counters.skippedUsers.Add(1)
		p.s.h.counters.skippedUsers.Add(1)
		return skipped("%s: not a member of org %s, not added to team %s", login, org, slug)
	}
	var m *gh.Membership
	err := p.s.write(ctx, func(ctx context.Context) error {
		var err error
		m, _, err = p.s.gh.Teams.AddTeamMembershipBySlug(ctx, org, slug, login, &gh.TeamAddTeamMembershipOptions{Role: role})
		return err
	})
	r := p.putResult(ctx, m, err, slug, login, role)
	if r.status == providers.Applied && m.GetState() == "pending" {
		// They left the org since it was read: GitHub invited them back for this team. The
		// next plan sees the pending invitation and does not add them again.
		st.set(login, "member", "pending")
		r.warn = fmt.Sprintf("%s: no longer an org member, so GitHub invited them to %s for team %s; the membership is pending until they accept", login, org, slug)
	}
	p.logWrite("set team membership", r, "team", slug, "user", login, "role", role)
	return r
}

func (p *TeamProvider) putResult(ctx context.Context, m *gh.Membership, err error, slug, login, role string) userResult {
	org := p.cfg.org
	switch code := httpStatus(err); {
	case err == nil:
	case code == http.StatusUnprocessableEntity && classifyInviteRefusal(err) == refusedLimit:
		// They left the org since it was read, so the add would have invited them back.
		return skipped("%s: not added to team %s: no longer an org member, and %v (%s)", login, slug, ErrInvitationLimit, apiMessage(err))
	case code == http.StatusNotFound && p.cfg.ignoreNotFound:
		return skipped("%s: no such GitHub user, not added to team %s (ignore_not_found)", login, slug)
	case code == http.StatusUnprocessableEntity || code == http.StatusNotFound || (code == http.StatusForbidden && !isRateLimit(err)):
		return failed(p.s.classifyItem(ctx, fmt.Errorf("adding %s to team %s/%s as %s: %w", login, org, slug, role, err), org, slug, login))
	default:
		return writeFailure(err, "adding %s to team %s/%s as %s", login, org, slug, role)
	}
	if s := m.GetState(); s != "active" && s != "pending" {
		return failed(fmt.Errorf("adding %s to team %s/%s: GitHub answered state %q", login, org, slug, s))
	}
	return applied()
}

// removeMember removes a planned team membership. The DELETE is always sent, whatever the org
// snapshot says: a user it shows as no org member may have joined since (or been missed),
// and reporting the removal as done without asking GitHub would leave them in the team. A
// 404 (not in the team, e.g. because they left the org) is already in state.
func (p *TeamProvider) removeMember(ctx context.Context, slug, login string) userResult {
	if !validLogin(login) {
		return badLogin(login, "not removed from team "+slug)
	}
	if !validSlug(slug) {
		return failed(badSlug(slug))
	}
	err := p.s.write(ctx, func(ctx context.Context) error {
		_, err := p.s.gh.Teams.RemoveTeamMembershipBySlug(ctx, p.cfg.org, slug, login)
		return err
	})
	r := deleted(err, "removing %s from team %s/%s", login, p.cfg.org, slug)
	if httpStatus(err) == http.StatusForbidden && !isRateLimit(err) {
		r = failed(p.s.classifyItem(ctx, fmt.Errorf("removing %s from team %s/%s: %w", login, p.cfg.org, slug, err), p.cfg.org, slug, login))
	}
	p.logWrite("removed team membership", r, "team", slug, "user", login)
	return r
}

// deleteTeam deletes a team that no file defines. GitHub deletes child teams with their
// parent, and the plan never deletes a parent; the child teams are listed again here, just
// before the DELETE, so that a child added since the plan is not deleted with its parent
// (nor its members removed without the removal guard having counted them).
func (p *TeamProvider) deleteTeam(ctx context.Context, c *providers.Change) userResult {
	slug := slugify(groupCN(c.Current))
	if !validSlug(slug) || slug != strings.ToLower(groupCN(c.Current)) {
		return failed(badSlug(groupCN(c.Current)))
	}
	var children []*gh.Team
	err := p.s.read(ctx, func(ctx context.Context) error {
		var err error
		children, _, err = p.s.gh.Teams.ListChildTeamsByParentSlug(ctx, p.cfg.org, slug, &gh.ListOptions{PerPage: pageSize})
		return err
	})
	switch {
	case httpStatus(err) == http.StatusNotFound:
		r := already()
		p.logWrite("deleted team", r, "team", slug)
		return r
	case err != nil:
		return failed(fmt.Errorf("listing the child teams of %s/%s before deleting it (not deleted): %w", p.cfg.org, slug, err))
	case len(children) > 0:
		var names []string
		for _, t := range children {
			names = append(names, t.GetSlug())
		}
		slices.Sort(names)
		r := skipped("team %s was not deleted: it now has child teams (%s), which GitHub would delete with it",
			slug, strings.Join(names, ", "))
		p.warn(r.warn)
		return r
	}
	err = p.s.write(ctx, func(ctx context.Context) error {
		_, err := p.s.gh.Teams.DeleteTeamBySlug(ctx, p.cfg.org, slug)
		return err
	})
	r := deleted(err, "deleting team %s/%s", p.cfg.org, slug)
	p.logWrite("deleted team", r, "team", slug, "members", strings.Join(c.Remove, ","))
	return r
}
