package calc

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/internal/topmap"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/people"
)

// Incremental lets a load reuse the work of a Repo loaded from another version of the same
// repository, which is what makes a pull-request diff cost little more than one calculation:
// files that did not change are not read or parsed again, and a group is evaluated again
// only when something it depends on (its file, a referenced group, the people or the org
// chart behind one of its rules, a filter population) differs.
//
// The results are exactly those of a full load; only the work differs. Reuse is all or
// nothing per input: a changed config file (unless both loads share one Options.Config),
// another "today" or other custom methods disable it entirely; a changed people file keeps the evaluated sets only when the uids are the
// same (then only the org-chart rules whose subtree moved are computed again).
type Incremental struct {
	// Base is the earlier Repo. When Base has been calculated, unchanged groups reuse its
	// sets and output groups. Base is only read, never changed; it stays usable (Explain).
	Base *Repo
	// Changed reports whether the file at path may differ from the one Base read (added,
	// modified or deleted). Paths are slash-separated and relative to the root of Options.FS
	// when it is set, absolute OS paths otherwise. Files it returns false for are not read.
	Changed func(path string) bool
}

// Reuse counts what an incremental load took from its base instead of doing it again (all
// zero for a full load). It shows whether a pull-request diff did the little work it should;
// tests use it to check that reuse is not silently lost.
type Reuse struct {
	// People and Orgchart: the people file and the manager map were not read again.
	People, Orgchart bool
	// Files are group files whose definitions were taken from the base, unread.
	Files int
	// Leaves are look-ups of rule leaves (username, management, ... = value) served from
	// the base's sets; a leaf that several rules name counts once per rule.
	Leaves int
	// Groups were not evaluated: none of their inputs changed.
	Groups int
	// Outputs are result groups (members after filters, attributes) taken from the base's
	// result.
	Outputs int
}

// incState is the incremental state of one load: what it may take from its base (the plan,
// decided as the config, the people and the files are read) and what it took (counts). The
// loader asks it for unchanged people, manager map and group definitions, the evaluator for
// leaf sets and groups whose inputs did not change, the result for unchanged output groups.
// Its methods accept a nil receiver: a full load has no incremental state and reuses nothing.
type incState struct {
	base    *Repo
	changed func(string) bool
	fsys    vfs.FS // the load's file system (paths given to changed are relative to it)
	// parse: definitions of unchanged files are reused (same config, date and methods).
	parse bool
	// sameIDs: both runs intern the same uids in the same order, so sets are comparable.
	sameIDs bool
	// orgAffected are the lower-case managers whose management or direct_report set may
	// differ; nil when the org chart is shared with the base (nothing moved).
	orgAffected map[string]bool
	orgSame     bool
	baseRes     *Result
	// filterSame is true when every filter population equals the base's.
	filterSame bool
	// baseLeaves are the base's leaves when they may be reused (see baseLeaf); sameDir: the
	// base's people directory is this load's.
	baseLeaves map[leafKey]leafResult
	sameDir    bool
	// counts are what this load took from its base (published as Repo.Reuse).
	counts Reuse
}

// newIncState decides what the load of ld may reuse, after the config is loaded and the
// methods registered. It returns nil for a full load.
func newIncState(ld *loader) *incState {
	in := ld.opt.Incremental
	if in == nil || in.Base == nil || in.Base.ld.dir == nil {
		return nil
	}
	b := in.Base
	changed := in.Changed
	if changed == nil {
		changed = func(string) bool { return true }
	}
	st := &incState{base: b, changed: changed, fsys: ld.fsys}
	bl := &b.ld
	// Definitions parsed with the same configuration are the same; a configuration loaded
	// again is the same when its file is.
	sameCfg := bl.cfg == ld.cfg || (bl.cfg.File == ld.cfg.File && !st.fileChanged(ld.cfg.File))
	st.parse = sameCfg &&
		bl.today == ld.today && bl.ignore == ld.ignore && maps.Equal(bl.methods, ld.methods) &&
		bl.opt.Strict == ld.opt.Strict
	if b.result != nil && b.resultErr == nil {
		st.baseRes = b.result
	}
	return st
}

func (st *incState) fileChanged(path string) bool {
	return st.changed(st.fsys.Rel(path))
}

// reusePeople serves the people (and org chart) from the base when their files did not
// change. It reports whether the directory was reused.
func (st *incState) reusePeople(ld *loader, peopleFile, mmFile string) bool {
	if st == nil || !st.parse || peopleFile == "" || st.fileChanged(peopleFile) {
		return false
	}
	b := &st.base.ld
	ld.dir, ld.universe = b.dir, b.universe
	st.sameIDs = true
	st.counts.People = true
	if ld.cfg.Orgchart != nil && (mmFile == "" || !st.fileChanged(mmFile)) {
		ld.org, ld.orgErr, ld.mm, ld.mmProblems = b.org, b.orgErr, b.mm, b.mmProblems
		st.orgSame = true
		st.counts.Orgchart = true
	}
	return true
}

// afterPeople compares freshly read people with the base's: same uids in the same order
// keep every set comparable; a changed manager map names the managers whose sets move.
func (st *incState) afterPeople(ld *loader) {
	if st == nil || !st.parse || ld.dir == nil {
		return
	}
	b := &st.base.ld
	if !st.sameIDs {
		st.sameIDs = slices.Equal(ld.dir.UIDs(), b.dir.UIDs())
	}
	if !st.sameIDs || st.orgSame || ld.org == nil || b.org == nil || ld.org.Err() != nil || b.org.Err() != nil {
		return
	}
	// Someone whose manager changed moves out of the subtrees of their old chain and into
	// those of the new one; direct_report sets change for the old and new manager only.
	aff := map[string]bool{}
	mark := func(mm map[string]people.Manager, from string) {
		// aff ends every walk, cycles in the manager map included.
		for cur := from; cur != "" && !aff[cur]; cur = strings.ToLower(mm[cur].UID) {
			aff[cur] = true
		}
	}
	diff := func(a, c map[string]people.Manager) {
		for k, v := range a {
			if w, ok := c[k]; !ok || v.None != w.None || !strings.EqualFold(v.UID, w.UID) {
				mark(b.mm, strings.ToLower(b.mm[k].UID))
				mark(ld.mm, strings.ToLower(ld.mm[k].UID))
			}
		}
	}
	diff(b.mm, ld.mm)
	diff(ld.mm, b.mm)
	st.orgAffected = aff
}

// reuseLeaves lets leaf lookups fall back to the base's rule-leaf sets that cannot differ
// (see baseLeaf); the base's map is consulted, not copied.
func (st *incState) reuseLeaves(ld *loader) {
	if st == nil || !st.sameIDs {
		return
	}
	st.baseLeaves = st.base.ev.leaves
	st.sameDir = ld.dir == st.base.ld.dir
}

// baseLeaf returns the base's set for a leaf when it cannot differ in this load.
func (st *incState) baseLeaf(k leafKey) (leafResult, bool) {
	if st == nil || st.baseLeaves == nil {
		return leafResult{}, false
	}
	switch k.method {
	case "username":
	case "management", "direct_report":
		if !st.orgSame && (st.orgAffected == nil || st.orgAffected[strings.ToLower(k.value)]) {
			return leafResult{}, false
		}
	case "ldap_group":
		return leafResult{}, false // read again: the reader decides what is current
	default:
		if !st.sameDir {
			return leafResult{}, false // custom methods see people attributes
		}
	}
	lr, ok := st.baseLeaves[k]
	return lr, ok
}

// reuseParse fills g from the base's parse of the same, unchanged file.
func (st *incState) reuseParse(g *group) bool {
	if st == nil || !st.parse || st.fileChanged(g.path) {
		return false
	}
	bg := st.base.ld.groups[g.key]
	if bg == nil || bg.path != g.path || (bg.def == nil && len(bg.perrs) == 0) {
		return false
	}
	g.base = bg
	g.reused = true
	g.perrs = bg.perrs
	g.sum = bg.sum
	g.pwarn = bg.pwarn
	g.descErrs = bg.descErrs
	g.def = bg.def // immutable: linking writes g.links, not the definition
	return true
}

// baseOf links g to the base's group of the same key and file, for comparisons.
func (st *incState) baseOf(g *group) *group {
	if st == nil || !st.sameIDs {
		return nil
	}
	if g.base != nil {
		return g.base
	}
	if bg := st.base.ld.groups[g.key]; bg != nil && bg.path == g.path {
		g.base = bg
	}
	return g.base
}

// evalReused evaluates g, or takes the base's sets when none of its inputs changed. It sets
// g.same when g's sets equal the base's (so that dependents can be skipped too).
func (ev *evaluator) evalReused(g *group) {
	bg := ev.inc.baseOf(g)
	if bg == nil || bg.r == nil {
		g.r = ev.eval(g, g.def.rules)
		g.ref = ev.expire(g, g.r)
		return
	}
	if g.reused && g.def == bg.def && sameLinks(g, bg, g.def.rules) {
		g.r, g.ref, g.same = bg.r, bg.ref, true
		ev.inc.counts.Groups++
		return
	}
	g.r = ev.eval(g, g.def.rules)
	g.ref = ev.expire(g, g.r)
	g.same = g.r.Equals(bg.r) && g.ref.Equals(bg.ref)
}

// sameLinks reports whether the rule tree n, which g shares with its base bg, has the same
// inputs in both: the same leaf sets and targets whose sets did not change.
func sameLinks(g, bg *group, n *rule) bool {
	switch n.op {
	case opOr, opAnd, opNot:
		for _, k := range n.kids {
			if !sameLinks(g, bg, k) {
				return false
			}
		}
		return true
	case opNone:
		return true
	}
	h, b := g.link(n.id), bg.link(n.id)
	if n.method != "group" {
		return h.leaf == b.leaf || h.leaf.Equals(b.leaf)
	}
	return sameTargets(h.targets, b.targets)
}

func sameTargets(h, b []*group) bool {
	if len(h) != len(b) {
		return false
	}
	for i, t := range h {
		if !t.same || t.base != b[i] {
			return false
		}
	}
	return true
}

// compareFilters records whether every filter population equals the base's.
func (st *incState) compareFilters(filters []*filterState) {
	if st == nil || !st.sameIDs {
		return
	}
	bf := st.base.ev.filters
	if len(bf) != len(filters) {
		return
	}
	for i, f := range filters {
		b := bf[i]
		if b.cfg.Name != f.cfg.Name || (f.pop == nil) != (b.pop == nil) || (f.pop != nil && !f.pop.Equals(b.pop)) {
			return
		}
	}
	st.filterSame = true
}

// reusedOutput returns the base's final set and output group for g when nothing that
// decides them changed.
func (st *incState) reusedOutput(g *group, key string, mirror bool) (*roaring.Bitmap, *Group) {
	if st == nil || st.baseRes == nil || !st.filterSame || !g.same || !g.reused {
		return nil, nil
	}
	for _, s := range g.def.filters {
		for i := range s.entries {
			l := g.link(s.entries[i].id)
			if l.broken != nil {
				return nil, nil
			}
			for _, t := range l.targets {
				if !t.same {
					return nil, nil
				}
			}
		}
	}
	fin := st.baseRes.finals[g.base]
	out := st.baseRes.byKey[key]
	if fin == nil || out == nil || out.File != g.rel || out.Mirror != mirror {
		return nil, nil
	}
	return fin, out
}

// entryDocs are a base's people file and manager map cut into entries (topmap), made once
// when an incremental load first asks: a pull request usually changes one entry of each,
// and every other entry is taken from the base instead of being parsed again.
type entryDocs struct {
	once    sync.Once
	people  *topmap.Doc
	persons []people.Person // by entry of people
	mm      *topmap.Doc
}

func (b *loader) entryDocs() *entryDocs {
	d := &b.docs
	d.once.Do(func() {
		if doc, ok := topmap.Split(b.peopleData); ok && len(doc.Keys) == len(b.peopleList) {
			aligned := true
			for i, p := range b.peopleList {
				if p.UID != doc.Keys[i] {
					aligned = false
					break
				}
			}
			if aligned {
				d.people, d.persons = doc, b.peopleList
			}
		}
		if b.mm != nil {
			if doc, ok := topmap.Split(b.mmData); ok && len(doc.Keys) == len(b.mm) {
				d.mm = doc
			}
		}
	})
	return d
}

// peopleFromBase parses a people file from the base's parse of an earlier version: entries
// with the same text are the base's persons, the others are parsed one by one. It gives up
// (false) whenever the full parse might differ: a layout topmap does not cut, an entry that
// does not parse on its own into exactly its person. The full parse then reports errors at
// their lines.
func (st *incState) peopleFromBase(data []byte) ([]people.Person, bool) {
	if st == nil || st.base.ld.peopleData == nil {
		return nil, false
	}
	bd := st.base.ld.entryDocs()
	if bd.people == nil {
		return nil, false
	}
	d, ok := topmap.Split(data)
	if !ok {
		return nil, false
	}
	out := make([]people.Person, 0, len(d.Keys))
	for i, k := range d.Keys {
		if j, same := d.Same(i, bd.people); same {
			out = append(out, bd.persons[j])
			continue
		}
		ps, err := people.ParseYAML(d.Entry(i))
		if err != nil || len(ps) != 1 || ps[0].UID != k {
			return nil, false
		}
		out = append(out, ps[0])
	}
	return out, true
}

// managerMapFromBase is peopleFromBase for the manager map.
func (st *incState) managerMapFromBase(data []byte) (map[string]people.Manager, bool) {
	if st == nil || st.base.ld.mmData == nil {
		return nil, false
	}
	b := &st.base.ld
	bd := b.entryDocs()
	if bd.mm == nil {
		return nil, false
	}
	d, ok := topmap.Split(data)
	if !ok {
		return nil, false
	}
	out := make(map[string]people.Manager, len(d.Keys))
	for i, k := range d.Keys {
		if _, same := d.Same(i, bd.mm); same {
			v, ok := b.mm[k]
			if !ok {
				return nil, false
			}
			out[k] = v
			continue
		}
		m, err := people.ParseManagerMap("", d.Entry(i))
		if err != nil || len(m) != 1 {
			return nil, false
		}
		v, ok := m[k]
		if !ok {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

// countFiles counts the group files whose definitions were taken from the base.
func (st *incState) countFiles(groups map[string]*group) {
	for _, g := range groups {
		if g.reused {
			st.counts.Files++
		}
	}
}
