package calc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

// linker resolves references and orders the groups. It walks the dependency graph
// depth-first in the reference's evaluation order (OUs sorted, files sorted, rules left to
// right): it resolves every group reference and filter entry against the loader's listings,
// detects cycles with the whole chain, and records the post-order, which is the evaluation
// order. What it resolves is kept in each group's links (see link) for the evaluator.
type linker struct {
	ld *loader
	ev *evaluator // serves the leaf sets, reported at their lines
	// order is every usable group in dependency order (dependencies first).
	order []*group
	// outputs are the groups a run produces, in OU processing order then file order, mirror
	// copies last.
	outputs []*output

	// The walk in progress (link): where errors go and the groups being visited.
	ctx   context.Context
	c     *validate.Collector
	stack []*group
}

// link links every output group of the loader, drops those that cannot be calculated and
// adds the mirror copies.
func (lk *linker) link(ctx context.Context, c *validate.Collector) {
	lk.ctx, lk.c = ctx, c
	defer func() { lk.ctx, lk.c = nil, nil }()
	var soft []*output
	for _, o := range lk.ld.enumerated {
		if !o.ou.Spec.Enumerates && !lk.ld.opt.Strict {
			soft = append(soft, o)
			continue
		}
		if lk.visit(o.g) {
			lk.final(o.g)
		} else if o.g.def != nil {
			lk.filterPeople(o.g) // still report the file's filter entries naming nobody
		}
		for _, e := range o.g.descErrs {
			c.AddError(e)
			o.g.bad = true
		}
	}
	// Files of dummy OUs that nothing referenced: the reference never opens them, so their
	// problems are warnings and they are left out of the result. The filtered view of a
	// referenced dummy group is never computed by the reference either (references use the
	// Ref view), so problems found only there are warnings too.
	for _, o := range soft {
		if o.g.state == done && o.g.bad {
			continue
		}
		var sc validate.Collector
		lk.c = &sc
		if lk.visit(o.g) {
			lk.final(o.g)
		}
		lk.c = c
		for _, e := range o.g.descErrs {
			sc.AddError(e)
		}
		if err := sc.Err(); err != nil {
			o.g.bad = true
			for _, e := range err.(validate.List) {
				c.Warn(e.Path, e.Line, "unused group file left out of the result: %s", e.Msg)
			}
		}
	}
	lk.outputs = slices.DeleteFunc(lk.ld.enumerated, func(o *output) bool { return o.g.bad })
	lk.ld.enumerated = nil // handed over: the slice is lk.outputs now
	lk.addMirrors()
}

func (lk *linker) fail(g *group, line int, kind validate.Kind, format string, args ...any) {
	// Errors without a group come from filter definitions: they belong to the config file.
	path := lk.ld.cfg.Rel(lk.ld.cfg.File)
	if g != nil {
		path = g.rel
	}
	lk.c.AddError(&validate.Error{Path: path, Line: line, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// visit links g and everything its rules reference. It reports whether g is usable.
func (lk *linker) visit(g *group) bool {
	switch g.state {
	case done:
		return !g.bad
	case active:
		return true // callers check for cycles before recursing
	}
	g.state = active
	lk.stack = append(lk.stack, g)
	ok := true
	if g.def == nil {
		lk.ld.parse(g) // a referenced file of an OU that was not parsed up front
	}
	for _, w := range g.pwarn {
		lk.c.Warn(w.Path, w.Line, "%s", w.Msg)
	}
	if g.def == nil {
		for _, e := range g.perrs {
			lk.c.AddError(e)
		}
		// What can still be known about a broken file (its references exist, no cycle runs
		// through it) is reported now rather than after the parse errors are fixed.
		for _, n := range g.refs {
			lk.reference(g, n)
		}
		ok = false
	} else {
		ok = lk.rule(g, g.def.rules)
	}
	lk.stack = lk.stack[:len(lk.stack)-1]
	g.state = done
	g.bad = !ok
	if ok {
		lk.order = append(lk.order, g)
	}
	return ok
}

func (lk *linker) rule(g *group, n *rule) bool {
	switch n.op {
	case opOr, opAnd, opNot:
		ok := true
		for _, k := range n.kids {
			ok = lk.rule(g, k) && ok
		}
		return ok
	case opNone:
		return true
	}
	if n.method == "group" {
		return lk.reference(g, n)
	}
	set, err := lk.ev.leaf(lk.ctx, n.method, n.value)
	if err != nil {
		kind := validate.KindConfig
		switch {
		case errors.Is(err, people.ErrUnknownManager):
			kind = validate.KindUnknownManager
		case errors.Is(err, people.ErrNoReports):
			kind = validate.KindNoReports
		case errors.Is(err, errLDAPGroupNotFound):
			kind = validate.KindLDAPGroup
		case errors.Is(err, people.ErrManagerMap):
			kind = validate.KindPeople
		}
		msg := message(err)
		if kind == validate.KindUnknownManager {
			if c := lk.ld.closestUID(n.value); c != "" {
				msg += fmt.Sprintf(" Did you mean %q?", c)
			}
		}
		lk.fail(g, n.line, kind, "%s", msg)
		return false
	}
	lk.linksOf(g)[n.id].leaf = set
	if n.method == "username" && set.IsEmpty() {
		return lk.unknownPerson(g, n.line, "username", n.value)
	}
	return true
}

// unknownPerson reports a uid that names nobody: a warning, or an error under Strict. It
// reports whether linking may go on.
func (lk *linker) unknownPerson(g *group, line int, what, uid string) bool {
	if lk.ld.noPeople {
		return true // the people data failed to load; that error is reported already
	}
	msg := fmt.Sprintf("%s %q names nobody in the people data%s", what, uid, lk.ld.unknownPersonHint(uid))
	if lk.ld.opt.Strict {
		lk.fail(g, line, validate.KindUnknownPerson, "%s", msg)
		return false
	}
	lk.c.Warn(g.rel, line, "%s", msg)
	return true
}

// resolve turns a group reference into the matching group records of its OU.
func (lk *linker) resolve(from *group, line int, value string) ([]*group, bool) {
	out, err := lk.lookup(from, line, value)
	if err != nil {
		lk.c.AddError(err)
		return nil, false
	}
	return out, true
}

// lookup is resolve without reporting: the caller decides whether the error counts.
func (lk *linker) lookup(from *group, line int, value string) ([]*group, *validate.Error) {
	fail := func(kind validate.Kind, format string, args ...any) ([]*group, *validate.Error) {
		path := lk.ld.cfg.Rel(lk.ld.cfg.File)
		if from != nil {
			path = from.rel
		}
		return nil, &validate.Error{Path: path, Line: line, Kind: kind, Msg: fmt.Sprintf(format, args...)}
	}
	// Most references name one existing group exactly as its record is keyed ("ou/cn"):
	// the record is the answer the listing below would give.
	if g := lk.ld.groups[value]; g != nil && !strings.Contains(value, "*") {
		return []*group{g}, nil
	}
	slash := strings.LastIndexByte(value, '/')
	if slash <= 0 || slash == len(value)-1 {
		return fail(validate.KindInvalidReference,
			"invalid group reference %s: expected <ou>/<name> (for an LDAP DN use ldap_group)", textsafe.Excerpt(value))
	}
	ouKey, pattern := value[:slash], value[slash+1:]
	ou := lk.ld.cfg.OU(ouKey)
	if ou == nil {
		return fail(validate.KindMissingReference,
			"group reference %s: OU %s is not defined in the entitlements configuration%s", textsafe.Excerpt(value), textsafe.Excerpt(ouKey), lk.ld.ouHint(ouKey))
	}
	l := lk.ld.listOU(ou, false, lk.c)
	if l.err != nil {
		return fail(validate.KindMissingReference, "group reference %s: %v", textsafe.Excerpt(value), l.err)
	}
	var names []string
	if !strings.Contains(pattern, "*") {
		if _, ok := l.entries[pattern]; ok {
			names = []string{pattern}
		}
	} else {
		names = matchWildcard(l.names, pattern)
		slices.SortFunc(names, func(a, b string) int { return l.rank[a] - l.rank[b] })
	}
	if len(names) == 0 {
		refBy := "nil"
		if from != nil {
			refBy = fmt.Sprintf("%q", from.rel)
		}
		return fail(validate.KindMissingReference, "Could not find a configuration for %s/%s.(rb|txt|yaml) (filename: %s)%s",
			lk.ld.cfg.Rel(ou.Dir), textsafe.ExcerptRaw(pattern), refBy, groupHint(ou.Key, pattern, l.names))
	}
	out := make([]*group, len(names))
	for i, n := range names {
		out[i] = lk.ld.groupFor(ou, l, n)
	}
	return out, nil
}

// matchWildcard matches sorted names against a pattern where * is any run of characters.
func matchWildcard(names []string, pattern string) []string {
	prefix, _, _ := strings.Cut(pattern, "*")
	lo, _ := slices.BinarySearch(names, prefix)
	var out []string
	for _, n := range names[lo:] {
		if !strings.HasPrefix(n, prefix) {
			break
		}
		if globMatch(pattern, n) {
			out = append(out, n)
		}
	}
	return out
}

// globMatch matches s against a pattern that has at least one *.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := len(parts) - 1
	for i := 1; i < last; i++ {
		j := strings.Index(s, parts[i])
		if j < 0 {
			return false
		}
		s = s[j+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[last])
}

func (lk *linker) reference(g *group, n *rule) bool {
	targets, ok := lk.resolve(g, n.line, n.value)
	if !ok {
		return false
	}
	if strings.Contains(n.value, "*") {
		// A wildcard skips groups being computed (itself, typically) when it matched several
		// files, even if that leaves none; a single match that is being computed is an error.
		if len(targets) == 1 && targets[0].state == active {
			lk.fail(g, n.line, validate.KindSelfWildcard, "Invalid self-referencing wildcard in %s/%s.%s (%s matches only a group that depends on this one)",
				targets[0].ou.Key, targets[0].cn, targets[0].ext, n.value)
			return false
		}
		live := slices.DeleteFunc(slices.Clone(targets), func(t *group) bool { return t.state == active })
		for _, t := range targets {
			if t.state == active && t != g {
				lk.c.Warn(g.rel, n.line, "wildcard %s skips %s, which is being computed (an order-dependent cycle)", n.value, t.key)
			}
		}
		targets = live
	} else if t := targets[0]; t.state == active {
		chain := make([]string, 0, len(lk.stack)+1)
		for _, s := range lk.stack {
			chain = append(chain, s.key)
		}
		chain = append(chain, t.key)
		lk.fail(g, n.line, validate.KindCircular, "Error: Circular dependency %s", strings.Join(chain, " -> "))
		return false
	}
	ok = true
	for _, t := range targets {
		ok = lk.visit(t) && ok
	}
	if g.def != nil { // the references of a file that failed to parse are only checked
		lk.linksOf(g)[n.id].targets = targets
	}
	return ok
}

// linksOf returns g's links, made on first use.
func (lk *linker) linksOf(g *group) []link {
	if g.links == nil {
		g.links = make([]link, g.def.nlinks)
	}
	return g.links
}

// final links what the filtered (final) view of an output group needs: the populations of the
// filters that apply to it and the groups named in its own filter lists.
func (lk *linker) final(g *group) {
	if g.finalDepOK {
		return
	}
	g.finalDepOK = true
	for _, f := range lk.ev.filters {
		s := settingOf(g, f)
		if s.mode == filterAll {
			continue
		}
		if !lk.linkPopulation(f) {
			g.bad = true
		}
		if s.mode != filterList {
			continue
		}
		for i := range s.entries {
			e := &s.entries[i]
			if !strings.Contains(e.value, "/") {
				if _, ok := lk.ld.dir.Lookup(e.value); !ok && !lk.unknownPerson(g, e.line, "filter "+f.cfg.Name+" entry", e.value) {
					g.bad = true
				}
				continue
			}
			targets, err := lk.lookup(g, e.line, e.value)
			if err != nil {
				// The reference only resolves a filter list entry when it checks a member who
				// is in the filter's population and not allowed by an earlier entry, so a
				// broken entry fails the run only then (checked when the group is computed).
				lk.linksOf(g)[e.id].broken = err
				continue
			}
			for _, t := range targets {
				if !lk.visit(t) {
					g.bad = true
				}
			}
			lk.linksOf(g)[e.id].targets = targets
		}
	}
}

// filterPeople reports the uids of g's filter lists that name nobody (final does it for
// groups that link).
func (lk *linker) filterPeople(g *group) {
	for _, f := range lk.ev.filters {
		s := settingOf(g, f)
		if s.mode != filterList {
			continue
		}
		for _, e := range s.entries {
			if strings.Contains(e.value, "/") {
				continue
			}
			if _, ok := lk.ld.dir.Lookup(e.value); !ok {
				lk.unknownPerson(g, e.line, "filter "+f.cfg.Name+" entry", e.value)
			}
		}
	}
}

// linkPopulation resolves what filter f's population is made of, once per run: the groups
// of a MemberOfGroup filter (linked like any reference), the DN of a MemberOfLDAPGroup one,
// the uids of a custom class. It reports whether the filter can be applied.
func (lk *linker) linkPopulation(f *filterState) bool {
	if f.linked {
		return f.ok
	}
	f.linked = true
	switch f.cfg.Class {
	case config.FilterMemberOfGroup:
		targets, ok := lk.resolve(nil, f.cfg.Line, f.cfg.Group)
		if !ok {
			return false
		}
		saved := lk.stack
		lk.stack = nil
		for _, t := range targets {
			ok = lk.visit(t) && ok
		}
		lk.stack = saved
		f.targets, f.ok = targets, ok
	case config.FilterMemberOfLDAPGroup:
		f.ldapDN = f.cfg.LDAPGroup
		f.ok = true
		// A missing LDAP group filters nobody, as in the reference; one whose members cannot be
		// read (an unknown object class) is an error there too.
		if g, found := lk.ev.ldap[f.ldapDN]; found {
			if _, err := g.Members(); err != nil {
				lk.fail(nil, f.cfg.Line, validate.KindFilter, "filter %s: %v", f.cfg.Name, err)
				f.ok = false
			}
		}
	default:
		fn := lk.ld.opt.FilterClasses[f.cfg.Class]
		uids, err := fn(lk.ctx, f.cfg, lk.ld.dir)
		if err != nil {
			lk.fail(nil, f.cfg.Line, validate.KindFilter, "filter %s: %v", f.cfg.Name, err)
			return false
		}
		f.extra, f.ok = uids, true
	}
	return f.ok
}

// message is err's text without the sentinel that classified it.
func message(err error) string {
	if u := errors.Unwrap(err); u != nil {
		return strings.TrimSuffix(err.Error(), ": "+u.Error())
	}
	return err.Error()
}

// addMirrors appends, for every mirror OU, a copy of each output group of the OU it mirrors.
func (lk *linker) addMirrors() {
	var out []*output
	bySrc := map[string][]*output{}
	for _, o := range lk.outputs {
		bySrc[o.ou.Key] = append(bySrc[o.ou.Key], o)
	}
	for _, ou := range lk.ld.cfg.SortedOUs() {
		if ou.Mirror != "" {
			for _, src := range bySrc[ou.Mirror] {
				out = append(out, &output{ou: ou, g: src.g, mirror: true})
			}
		}
	}
	lk.outputs = append(lk.outputs, out...)
}
