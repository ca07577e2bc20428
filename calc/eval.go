package calc

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/validate"
)

// empty is the shared empty set. Every set the evaluator hands out is treated as immutable, so
// results can be shared between views (Ref is R when nothing expires; Final is R when no
// filter removes anyone) without copying.
var empty = roaring.New()

// Calculate evaluates every group exactly once, in dependency order, and returns the result.
// Repeated calls return the same result; it is safe to call from several goroutines.
func (r *Repo) Calculate(ctx context.Context) (*Result, error) {
	r.once.Do(func() { r.result, r.resultErr = r.calculate(ctx) })
	return r.result, r.resultErr
}

func (r *Repo) calculate(ctx context.Context) (*Result, error) {
	start := time.Now()
	for i, g := range r.order {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if r.inc != nil {
			r.evalReused(g)
			continue
		}
		g.r = r.eval(g, g.def.rules)
		g.ref = r.expire(g, g.r)
	}
	for _, f := range r.filters {
		if f.ok {
			f.pop = r.population(f)
		}
	}
	r.compareFilters()
	res, err := newResult(r)
	if err != nil {
		return nil, err
	}
	r.Timings.Calculate = time.Since(start)
	res.Timings = r.Timings
	res.Reuse = r.Reuse
	return res, nil
}

// expire is the whole-file expiration modifier: a group whose date has come is empty.
func (r *Repo) expire(g *group, s *roaring.Bitmap) *roaring.Bitmap {
	if r.expired(g) && !s.IsEmpty() {
		return empty
	}
	return s
}

func (r *Repo) expired(g *group) bool {
	return !r.ignore && g.def.fileExp.Reached(r.today)
}

func (r *Repo) eval(g *group, n *rule) *roaring.Bitmap {
	switch n.op {
	case opNone:
		return empty
	case opMethod:
		if n.method != "group" {
			return g.link(n.id).leaf
		}
		return r.union(g.link(n.id).targets)
	case opNot:
		return roaring.AndNot(r.universe, r.eval(g, n.kids[0]))
	case opOr:
		switch len(n.kids) {
		case 0:
			return empty
		case 1:
			return r.eval(g, n.kids[0])
		}
		sets := make([]*roaring.Bitmap, len(n.kids))
		for i, k := range n.kids {
			sets[i] = r.eval(g, k)
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
				neg = append(neg, r.eval(g, k.kids[0]))
			case k.op == opAnd && allNot(k.kids):
				collect(k.kids)
			default:
				pos = append(pos, r.eval(g, k))
			}
		}
	}
	collect(n.kids)
	var base *roaring.Bitmap
	switch len(pos) {
	case 0:
		base = r.universe
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
func (r *Repo) union(gs []*group) *roaring.Bitmap {
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

func (r *Repo) population(f *filterState) *roaring.Bitmap {
	switch {
	case f.targets != nil:
		return r.union(f.targets)
	case f.ldapDN != "":
		g, ok := r.ldap[f.ldapDN]
		if !ok {
			return empty // a missing LDAP group filters nobody, as in the reference
		}
		uids, err := g.Members()
		if err != nil {
			return empty
		}
		return r.idsOf(uids)
	default:
		return r.idsOf(f.extra)
	}
}

// final is Filter then Expire: the membership written for g in its own OU. It also reports
// whether the whole-file expiration emptied a non-empty set (metadata no_members_ok), and the
// error of a broken filter-list entry that this group's members actually reach.
func (r *Repo) final(g *group) (*roaring.Bitmap, bool, *validate.Error) {
	s := g.r
	for _, f := range r.filters {
		if s.IsEmpty() {
			break
		}
		st := r.setting(g, f)
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
				if !roaring.AndNot(removed, r.allowed(g, before)).IsEmpty() {
					return nil, false, broken
				}
				break
			}
			removed.AndNot(r.allowed(g, st.entries))
			if removed.IsEmpty() {
				continue
			}
		}
		s = roaring.AndNot(s, removed)
	}
	if r.expired(g) && !s.IsEmpty() {
		return empty, true, nil
	}
	return s, false, nil
}

// allowed is the set of people a filter list of g lets through.
func (r *Repo) allowed(g *group, entries []filterEntry) *roaring.Bitmap {
	b := roaring.New()
	for _, e := range entries {
		l := g.link(e.id)
		switch {
		case l.broken != nil:
		case l.targets != nil:
			b.Or(r.union(l.targets))
		default:
			if id, ok := r.dir.Lookup(e.value); ok {
				b.Add(id)
			}
		}
	}
	return b
}
