package calc

import (
	"cmp"
	"slices"
)

// Dependency is one edge of the dependency graph: the members of group From depend on those
// of group To (both "ou/cn").
type Dependency struct {
	From, To string
	// Line is the line of From's file that creates the edge (0 for a config filter).
	Line int
	// Via says how: "rule" (a group reference), or "filter NAME" (the filter's population
	// group, or a group listed in From's setting of that filter).
	Via string
}

// Dependencies returns every edge of the dependency graph among the groups a run uses,
// sorted by From, To, Via and Line: it is why changing one file moves the members of others.
func (r *Repo) Dependencies() []Dependency {
	var out []Dependency
	seen := map[Dependency]bool{}
	add := func(d Dependency) {
		// A group never depends on itself: a rule reference to itself is a cycle (refused at
		// load), and a filter whose population is the group itself is computed from its
		// unfiltered rules, so an edge would only draw a loop that moves nothing.
		if d.From == d.To {
			return
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	var walk func(g *group, n *rule)
	walk = func(g *group, n *rule) {
		for _, t := range g.link(n.id).targets {
			add(Dependency{From: g.key, To: t.key, Line: n.line, Via: "rule"})
		}
		for _, k := range n.kids {
			walk(g, k)
		}
	}
	for _, g := range r.lk.order {
		walk(g, g.def.rules)
	}
	for _, o := range r.lk.outputs {
		if o.mirror {
			continue
		}
		g := o.g
		for _, f := range r.ev.filters {
			s := settingOf(g, f)
			if s.mode == filterAll {
				continue
			}
			via := "filter " + f.cfg.Name
			for _, t := range f.targets {
				add(Dependency{From: g.key, To: t.key, Via: via})
			}
			for _, e := range s.entries {
				for _, t := range g.link(e.id).targets {
					add(Dependency{From: g.key, To: t.key, Line: e.line, Via: via})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b Dependency) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Via, b.Via), cmp.Compare(a.Line, b.Line))
	})
	return out
}

// GroupKeys returns the key ("ou/cn") of every group a run uses (outputs and the groups they
// reference), sorted.
func (r *Repo) GroupKeys() []string {
	var out []string
	for _, g := range r.lk.order {
		out = append(out, g.key)
	}
	for _, o := range r.lk.outputs {
		if o.mirror {
			out = append(out, o.ou.Key+"/"+o.g.cn)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SuggestGroup is the key of the run's group closest to key, for a "did you mean" when a
// command is asked about a group that does not exist; "" when none is a plausible typo.
func (r *Repo) SuggestGroup(key string) string {
	return closest(key, slices.Values(r.GroupKeys()))
}
