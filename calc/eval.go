package calc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/validate"
)

// evaluator computes the members of groups: the sets of rule leaves (username, management,
// direct_report, ldap_group and custom methods, each computed once per run), the rule trees
// of the linked groups in dependency order, the filters and the expirations. The linker asks
// it for leaf sets while it links (so that a leaf's error is reported at its line); Calculate
// evaluates every group once the graph is complete.
type evaluator struct {
	// ld is the loaded repository: the people, the org chart and "today" (read only).
	ld *loader
	// inc serves leaves and sets of an incremental base (nil for a full load).
	inc *incState
	// filters are the configured filters in config order: the linker resolves their
	// populations' groups, Calculate computes each population (pop) before the outputs.
	filters []*filterState
	// leaves memoises the rule-leaf sets of this run.
	leaves map[leafKey]leafResult
	// ldap are the LDAP groups that rules and filters name, read in bulk (prefetchLDAP).
	ldap map[string]*LDAPGroup
}

// leafKey names a rule leaf (method = value); a struct key costs no allocation per lookup.
type leafKey struct{ method, value string }

type leafResult struct {
	set *roaring.Bitmap
	err error
}

// filterState is one configured filter in a run: the linker fills what its population is
// made of (targets, ldapDN or extra; ok when that links), the evaluator the population.
type filterState struct {
	cfg     *config.Filter
	targets []*group // MemberOfGroup
	ldapDN  string
	extra   []string // custom class population (uids)
	linked  bool
	ok      bool
	pop     *roaring.Bitmap
}

// empty is the shared empty set. Every set the evaluator hands out is treated as immutable, so
// results can be shared between views (Ref is R when nothing expires; Final is R when no
// filter removes anyone) without copying.
var empty = roaring.New()

// evalAll evaluates the groups of order, dependencies first, then the filter populations.
func (ev *evaluator) evalAll(ctx context.Context, order []*group) error {
	for i, g := range order {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if ev.inc != nil {
			ev.evalReused(g)
			continue
		}
		g.r = ev.eval(g, g.def.rules)
		g.ref = ev.expire(g, g.r)
	}
	for _, f := range ev.filters {
		if f.ok {
			f.pop = ev.population(f)
		}
	}
	ev.inc.compareFilters(ev.filters)
	return nil
}

// expire is the whole-file expiration modifier: a group whose date has come is empty.
func (ev *evaluator) expire(g *group, s *roaring.Bitmap) *roaring.Bitmap {
	if ev.expired(g) && !s.IsEmpty() {
		return empty
	}
	return s
}

func (ev *evaluator) expired(g *group) bool {
	return !ev.ld.ignore && g.def.fileExp.Reached(ev.ld.today)
}

func (ev *evaluator) eval(g *group, n *rule) *roaring.Bitmap {
	switch n.op {
	case opNone:
		return empty
	case opMethod:
		if n.method != "group" {
			return g.link(n.id).leaf
		}
		return ev.union(g.link(n.id).targets)
	case opNot:
		return roaring.AndNot(ev.ld.universe, ev.eval(g, n.kids[0]))
	case opOr:
		switch len(n.kids) {
		case 0:
			return empty
		case 1:
			return ev.eval(g, n.kids[0])
		}
		sets := make([]*roaring.Bitmap, len(n.kids))
		for i, k := range n.kids {
			sets[i] = ev.eval(g, k)
		}
		return roaring.FastOr(sets...)
	}
	// and: intersect the positive children, then subtract the union of the negated ones. This
	// never materialises "everyone but X", which is what makes `!=` lines cheap.
	var pos, neg []*roaring.Bitmap
	var collect func(kids []*rule)
	collect = func(kids []*rule) {
		for _, k := range kids {
			switch {
			case k.op == opNot:
				neg = append(neg, ev.eval(g, k.kids[0]))
			case k.op == opAnd && allNot(k.kids):
				collect(k.kids)
			default:
				pos = append(pos, ev.eval(g, k))
			}
		}
	}
	collect(n.kids)
	var base *roaring.Bitmap
	switch len(pos) {
	case 0:
		base = ev.ld.universe
	case 1:
		base = pos[0]
	default:
		base = roaring.And(pos[0], pos[1])
		for _, p := range pos[2:] {
			if base.IsEmpty() {
				break
			}
			base.And(p)
		}
	}
	if base.IsEmpty() || len(neg) == 0 {
		return base
	}
	if len(neg) == 1 {
		return roaring.AndNot(base, neg[0])
	}
	return roaring.AndNot(base, roaring.FastOr(neg...))
}

func allNot(kids []*rule) bool {
	for _, k := range kids {
		if k.op != opNot {
			return false
		}
	}
	return len(kids) > 0
}

// union is the members of referenced groups (their Ref view).
func (ev *evaluator) union(gs []*group) *roaring.Bitmap {
	switch len(gs) {
	case 0:
		return empty
	case 1:
		return gs[0].ref
	}
	sets := make([]*roaring.Bitmap, len(gs))
	for i, g := range gs {
		sets[i] = g.ref
	}
	return roaring.FastOr(sets...)
}

func (ev *evaluator) population(f *filterState) *roaring.Bitmap {
	switch {
	case f.targets != nil:
		return ev.union(f.targets)
	case f.ldapDN != "":
		g, ok := ev.ldap[f.ldapDN]
		if !ok {
			return empty // a missing LDAP group filters nobody, as in the reference
		}
		uids, err := g.Members()
		if err != nil {
			return empty
		}
		return ev.idsOf(uids)
	default:
		return ev.idsOf(f.extra)
	}
}

// settingOf is the effective setting of filter f for group g: `all` when the filter's paths
// exclude the file (spec 9.4), otherwise the file's own setting or the default `none`.
func settingOf(g *group, f *filterState) *filterSetting {
	if !filterApplies(f.cfg, g.path) {
		return allSetting
	}
	if s, ok := g.def.filters[f.cfg.Name]; ok {
		return s
	}
	return noneSetting
}

// Shared read-only settings, so that asking for a default allocates nothing.
var (
	allSetting  = &filterSetting{mode: filterAll}
	noneSetting = &filterSetting{mode: filterNone}
)

func filterApplies(f *config.Filter, path string) bool {
	ex, in := f.ExcludedPaths != nil, f.IncludedPaths != nil
	matches := func(list []string) bool {
		return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(path, s) })
	}
	switch {
	case !ex && !in:
		return true
	case ex && !in:
		return !matches(f.ExcludedPaths)
	case !ex && in:
		return matches(f.IncludedPaths)
	default:
		return !matches(f.ExcludedPaths) || matches(f.IncludedPaths)
	}
}

// final is Filter then Expire: the membership written for g in its own OU. It also reports
// whether the whole-file expiration emptied a non-empty set (metadata no_members_ok), and the
// error of a broken filter-list entry that this group's members actually reach.
func (ev *evaluator) final(g *group) (*roaring.Bitmap, bool, *validate.Error) {
	s := g.r
	for _, f := range ev.filters {
		if s.IsEmpty() {
			break
		}
		st := settingOf(g, f)
		if st.mode == filterAll || f.pop == nil || f.pop.IsEmpty() {
			continue
		}
		removed := roaring.And(s, f.pop)
		if removed.IsEmpty() {
			continue
		}
		if st.mode == filterList {
			for i, e := range st.entries {
				broken := g.link(e.id).broken
				if broken == nil {
					continue
				}
				// The reference checks every username entry first, then the group entries in
				// order: a member none of those allow makes it resolve this entry, and fail.
				before := slices.DeleteFunc(slices.Clone(st.entries), func(x filterEntry) bool {
					return strings.Contains(x.value, "/")
				})
				for _, x := range st.entries[:i] {
					if strings.Contains(x.value, "/") {
						before = append(before, x)
					}
				}
				if !roaring.AndNot(removed, ev.allowed(g, before)).IsEmpty() {
					return nil, false, broken
				}
				break
			}
			removed.AndNot(ev.allowed(g, st.entries))
			if removed.IsEmpty() {
				continue
			}
		}
		s = roaring.AndNot(s, removed)
	}
	if ev.expired(g) && !s.IsEmpty() {
		return empty, true, nil
	}
	return s, false, nil
}

// allowed is the set of people a filter list of g lets through.
func (ev *evaluator) allowed(g *group, entries []filterEntry) *roaring.Bitmap {
	b := roaring.New()
	for _, e := range entries {
		l := g.link(e.id)
		switch {
		case l.broken != nil:
		case l.targets != nil:
			b.Or(ev.union(l.targets))
		default:
			if id, ok := ev.ld.dir.Lookup(e.value); ok {
				b.Add(id)
			}
		}
	}
	return b
}

var errLDAPGroupNotFound = errors.New("ldap group not found")

// leaf computes (once per run) the members of a non-group rule leaf.
func (ev *evaluator) leaf(ctx context.Context, method, value string) (*roaring.Bitmap, error) {
	key := leafKey{method, value}
	if lr, ok := ev.leaves[key]; ok {
		return lr.set, lr.err
	}
	if lr, ok := ev.inc.baseLeaf(key); ok {
		// Not stored in ev.leaves: at 50,000 people that map would grow by 100,000 entries
		// (10 MB) to serve lookups the base's map serves as well.
		ev.inc.counts.Leaves++
		return lr.set, lr.err
	}
	set, err := ev.computeLeaf(ctx, method, value)
	ev.leaves[key] = leafResult{set: set, err: err}
	return set, err
}

func (ev *evaluator) computeLeaf(ctx context.Context, method, value string) (*roaring.Bitmap, error) {
	if ev.ld.noPeople && method != "ldap_group" {
		return roaring.New(), nil
	}
	switch method {
	case "username":
		b := roaring.New()
		if id, ok := ev.ld.dir.Lookup(value); ok {
			b.Add(id)
		}
		return b, nil
	case "management", "direct_report":
		switch {
		case ev.ld.noOrg:
			return roaring.New(), nil
		case ev.ld.orgErr != nil:
			return nil, ev.ld.orgErr
		case method == "management":
			return ev.ld.org.Management(value)
		}
		return ev.ld.org.DirectReports(value)
	case "ldap_group":
		g, ok := ev.ldap[value]
		if !ok && ev.ld.opt.LDAPGroups != nil {
			// Not prefetched (a file parsed late): read this one group.
			got, err := ev.ld.opt.LDAPGroups.ReadLDAPGroups(ctx, []string{value})
			if err != nil {
				return nil, fmt.Errorf("reading LDAP group %s: %w", value, err)
			}
			g, ok = got[value]
		}
		if !ok {
			return nil, fmt.Errorf("Failed to read ldap_group = %s (no such LDAP group): %w", value, errLDAPGroupNotFound)
		}
		uids, err := g.Members()
		if err != nil {
			return nil, fmt.Errorf("%v: %w", err, errLDAPGroupNotFound)
		}
		return ev.idsOf(uids), nil
	}
	fn := ev.ld.opt.Methods[method]
	uids, err := fn(ctx, value, ev.ld.dir)
	if err != nil {
		return nil, fmt.Errorf("%s = %s: %v: %w", method, value, err, errCustom)
	}
	return ev.idsOf(uids), nil
}

var errCustom = errors.New("custom method failed")

// idsOf interns uids (case-insensitively; unknown uids are dropped, as the reference does).
func (ev *evaluator) idsOf(uids []string) *roaring.Bitmap {
	b := roaring.New()
	for _, u := range uids {
		if id, ok := ev.ld.dir.Lookup(u); ok {
			b.Add(id)
		}
	}
	return b
}

// prefetchLDAP collects every LDAP group DN that rules and filters name and reads them in one
// call, so an LDAP-backed reader can fetch them in bulk instead of one search per rule. It
// returns a warning when groups are named but nothing can read them.
func (ev *evaluator) prefetchLDAP(ctx context.Context) (*validate.Warning, error) {
	seen := map[string]bool{}
	var dns []string
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			dns = append(dns, d)
		}
	}
	for _, f := range ev.filters {
		if f.cfg.Class == config.FilterMemberOfLDAPGroup {
			add(f.cfg.LDAPGroup)
		}
	}
	for _, g := range ev.ld.groups {
		if g.def != nil {
			for _, d := range g.def.ldapDNs {
				add(d)
			}
		}
	}
	ev.ldap = map[string]*LDAPGroup{}
	if len(dns) == 0 {
		return nil, nil
	}
	slices.Sort(dns)
	if ev.ld.opt.LDAPGroups == nil {
		// Without a reader every lookup is "not found": rules fail with a clear error at their
		// line, MemberOfLDAPGroup filters have an empty population (as for a missing group).
		return &validate.Warning{Path: ev.ld.cfg.Rel(ev.ld.cfg.File),
			Msg: "LDAP groups are referenced but no LDAP group source is configured (give an LDAP group snapshot, or configure the ldap_group extra)"}, nil
	}
	got, err := ev.ld.opt.LDAPGroups.ReadLDAPGroups(ctx, dns)
	if err != nil {
		return nil, fmt.Errorf("reading LDAP groups: %w", err)
	}
	ev.ldap = got
	return nil, nil
}
