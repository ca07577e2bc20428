package github

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/providers"
)

// The predictive state: a group whose cached state (the desired
// state last applied, as the audit log recorded it) equals its desired state is trusted as
// current without a request. A cached entry that differs is invalidated and the group joins
// the target's one bulk read, so only API data ever becomes a change. Drift made outside the
// tool is not seen while the definitions match the cache; `--full` (no predictive state) is
// the cure.

// cachedMatches reports whether the predictive entry of a desired group equals it: the same
// members (case-insensitively) and the same metadata as the audit log spells it. members
// are the cached members to compare (ignored users already left out).
func cachedMatches(d *providers.Group, e *cache.PredictiveEntry, members []string) bool {
	return providers.SameFold(members, d.Members) && cache.SameMetadata(d.Metadata, e)
}

// trusted is the current state of a group trusted from the predictive state: the desired
// state itself, which is what the cache says was applied.
func trusted(d *providers.Group) *providers.Group {
	g := &providers.Group{DN: d.DN, CN: groupCN(d), Members: slices.Clone(d.Members), Attrs: map[string][]string{}}
	for k, v := range d.Attrs {
		g.Attrs[k] = slices.Clone(v)
	}
	return g
}

// predictiveTeams splits the desired teams (by slug) into those trusted from the predictive
// state and those to read. Entries that differ are invalidated; the parent of a team to read
// is read as well.
func (p *TeamProvider) predictiveTeams(desired map[string]*providers.Group) (hits map[string]*providers.Group, read []string) {
	pred := p.s.h.reg.opt.Predictive
	hits = map[string]*providers.Group{}
	for _, slug := range slices.Sorted(maps.Keys(desired)) {
		d := desired[slug]
		if pred != nil {
			if e, ok := pred.Lookup(d.DN); ok {
				if cachedMatches(d, e, e.Members) {
					hits[slug] = trusted(d)
					continue
				}
				pred.Invalidate(d.DN)
			}
		}
		read = append(read, slug)
	}
	// A team that is read may be created or changed under its parent, and GitHub nests only
	// under closed teams: the parent's privacy must come from GitHub, which the cached state
	// does not record. So the parent of every team read is read too (the check in
	// secretParents needs it), up the chain.
	for i := 0; i < len(read); i++ {
		ps := first(desired[read[i]].Attrs["parent"])
		if hits[ps] != nil {
			delete(hits, ps)
			read = append(read, ps)
		}
	}
	slices.Sort(read)
	if n := int64(len(hits)); n > 0 {
		p.counters.predictive.Add(n)
		p.s.h.counters.predictive.Add(n)
	}
	return hits, read
}

// predictiveOrg returns the org's role groups from the predictive state when both role files
// are cached and both equal the desired roles, and no pending invitation would be
// cancelled (invitations are never cached: they are read, in one GraphQL query). Otherwise
// the entries are invalidated and ok is false: the caller reads the org.
func (p *OrgProvider) predictiveOrg(ctx context.Context, desired map[string]*providers.Group) (st *providers.State, ok bool, err error) {
	pred := p.s.h.reg.opt.Predictive
	if pred == nil || len(desired) != len(roles) {
		return nil, false, nil
	}
	miss := func() (*providers.State, bool, error) {
		for _, r := range roles {
			pred.Invalidate(p.roleDN(r))
		}
		return nil, false, nil
	}
	entries := map[string]*cache.PredictiveEntry{}
	for _, r := range roles {
		e, found := pred.Lookup(p.roleDN(r))
		if !found {
			return miss() // both role files must exist
		}
		entries[r] = e
	}
	want := map[string]bool{}
	for _, r := range roles {
		var members []string
		for _, m := range entries[r].Members {
			if !p.cfg.ignore[m] {
				members = append(members, m)
			}
		}
		if !cachedMatches(desired[r], entries[r], members) {
			return miss()
		}
		for _, m := range desired[r].Members {
			want[strings.ToLower(m)] = true
		}
	}
	if p.cfg.remove {
		pending, err := p.pending(ctx)
		if err != nil {
			return nil, false, err
		}
		for _, l := range pending {
			if k := strings.ToLower(l); !want[k] && !p.cfg.ignore[k] {
				return miss() // the read would cancel this invitation: plan it from API data
			}
		}
	}
	out := &providers.State{Groups: map[string]*providers.Group{}}
	for _, r := range roles {
		g := trusted(desired[r])
		g.Attrs = nil
		slices.Sort(g.Members)
		out.Groups[providers.Key(g.DN)] = g
	}
	p.counters.predictive.Add(int64(len(roles)))
	p.s.h.counters.predictive.Add(int64(len(roles)))
	return out, true, nil
}

// pending lists the org's pending invitations (none on GitHub Enterprise Server).
func (p *OrgProvider) pending(ctx context.Context) ([]string, error) {
	ghes, err := p.s.enterprise(ctx)
	if err != nil || ghes {
		return nil, err
	}
	_, pending, _, err := p.s.countAndPending(ctx, p.cfg.org, true)
	return pending, err
}
