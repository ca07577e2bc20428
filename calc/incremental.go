package calc

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/internal/topmap"
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

// incState is the reuse plan of one incremental load.
type incState struct {
	base    *Repo
	changed func(string) bool
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
}

// setupIncremental decides what the load may reuse, after the config is loaded.
func (r *Repo) setupIncremental() {
	in := r.opt.Incremental
	if in == nil || in.Base == nil || in.Base.dir == nil {
		return
	}
	b := in.Base
	changed := in.Changed
	if changed == nil {
		changed = func(string) bool { return true }
	}
	st := &incState{base: b, changed: changed}
	// Definitions parsed with the same configuration are the same; a configuration loaded
	// again is the same when its file is.
	sameCfg := b.cfg == r.cfg || (b.cfg.File == r.cfg.File && !st.fileChanged(r, r.cfg.File))
	st.parse = sameCfg &&
		b.today == r.today && b.ignore == r.ignore && maps.Equal(b.methods, r.methods) &&
		b.opt.Strict == r.opt.Strict
	if b.result != nil && b.resultErr == nil {
		st.baseRes = b.result
	}
	r.inc = st
}

func (st *incState) fileChanged(r *Repo, path string) bool {
	return st.changed(r.fsys.Rel(path))
}

// reusePeople serves the people (and org chart) from the base when their files did not
// change. It reports whether the directory was reused.
func (r *Repo) reusePeople(peopleFile, mmFile string) bool {
	st := r.inc
	if st == nil || !st.parse || peopleFile == "" || st.fileChanged(r, peopleFile) {
		return false
	}
	b := st.base
	r.dir, r.universe = b.dir, b.universe
	st.sameIDs = true
	r.Reuse.People = true
	if r.cfg.Orgchart != nil && (mmFile == "" || !st.fileChanged(r, mmFile)) {
		r.org, r.orgErr, r.mm, r.mmProblems = b.org, b.orgErr, b.mm, b.mmProblems
		st.orgSame = true
		r.Reuse.Orgchart = true
	}
	return true
}

// afterPeople compares freshly read people with the base's: same uids in the same order
// keep every set comparable; a changed manager map names the managers whose sets move.
func (r *Repo) afterPeople() {
	st := r.inc
	if st == nil || !st.parse || r.dir == nil {
		return
	}
	b := st.base
	if !st.sameIDs {
		st.sameIDs = slices.Equal(r.dir.UIDs(), b.dir.UIDs())
	}
	if !st.sameIDs || st.orgSame || r.org == nil || b.org == nil || r.org.Err() != nil || b.org.Err() != nil {
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
				mark(r.mm, strings.ToLower(r.mm[k].UID))
			}
		}
	}
	diff(b.mm, r.mm)
	diff(r.mm, b.mm)
	st.orgAffected = aff
}

// reuseLeaves lets leaf lookups fall back to the base's rule-leaf sets that cannot differ
// (see baseLeaf); the base's map is consulted, not copied.
func (r *Repo) reuseLeaves() {
	st := r.inc
	if st == nil || !st.sameIDs {
		return
	}
	r.baseLeaves = st.base.leaves
	r.sameDir = r.dir == st.base.dir
}

// baseLeaf returns the base's set for a leaf when it cannot differ in this load.
func (r *Repo) baseLeaf(k leafKey) (leafResult, bool) {
	if r.baseLeaves == nil {
		return leafResult{}, false
	}
	st := r.inc
	switch k.method {
	case "username":
	case "management", "direct_report":
		if !st.orgSame && (st.orgAffected == nil || st.orgAffected[strings.ToLower(k.value)]) {
			return leafResult{}, false
		}
	case "ldap_group":
		return leafResult{}, false // read again: the reader decides what is current
	default:
		if !r.sameDir {
			return leafResult{}, false // custom methods see people attributes
		}
	}
	lr, ok := r.baseLeaves[k]
	return lr, ok
}

// reuseParse fills g from the base's parse of the same, unchanged file.
func (r *Repo) reuseParse(g *group) bool {
	st := r.inc
	if st == nil || !st.parse || st.fileChanged(r, g.path) {
		return false
	}
	bg := st.base.groups[g.key]
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
func (r *Repo) baseOf(g *group) *group {
	st := r.inc
	if st == nil || !st.sameIDs {
		return nil
	}
	if g.base != nil {
		return g.base
	}
	if bg := st.base.groups[g.key]; bg != nil && bg.path == g.path {
		g.base = bg
	}
	return g.base
}

// evalReused evaluates g, or takes the base's sets when none of its inputs changed. It sets
// g.same when g's sets equal the base's (so that dependents can be skipped too).
func (r *Repo) evalReused(g *group) {
	bg := r.baseOf(g)
	if bg == nil || bg.r == nil {
		g.r = r.eval(g, g.def.rules)
		g.ref = r.expire(g, g.r)
		return
	}
	if g.reused && g.def == bg.def && sameLinks(g, bg, g.def.rules) {
		g.r, g.ref, g.same = bg.r, bg.ref, true
		r.Reuse.Groups++
		return
	}
	g.r = r.eval(g, g.def.rules)
	g.ref = r.expire(g, g.r)
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
func (r *Repo) compareFilters() {
	st := r.inc
	if st == nil || !st.sameIDs {
		return
	}
	bf := st.base.filters
	if len(bf) != len(r.filters) {
		return
	}
	for i, f := range r.filters {
		b := bf[i]
		if b.cfg.Name != f.cfg.Name || (f.pop == nil) != (b.pop == nil) || (f.pop != nil && !f.pop.Equals(b.pop)) {
			return
		}
	}
	st.filterSame = true
}

// reusedOutput returns the base's final set and output group for g when nothing that
// decides them changed.
func (r *Repo) reusedOutput(g *group, key string, mirror bool) (*roaring.Bitmap, *Group) {
	st := r.inc
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

func (b *Repo) entryDocs() *entryDocs {
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
func (r *Repo) peopleFromBase(data []byte) ([]people.Person, bool) {
	if r.inc == nil || r.inc.base.peopleData == nil {
		return nil, false
	}
	bd := r.inc.base.entryDocs()
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
func (r *Repo) managerMapFromBase(data []byte) (map[string]people.Manager, bool) {
	if r.inc == nil || r.inc.base.mmData == nil {
		return nil, false
	}
	b := r.inc.base
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
