package synth

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The checker below re-reads the generated text independently of the
// generator (it never looks at generator state), so it catches bugs in
// both the shape and the rendering.

var (
	cnRe    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	lineRe  = regexp.MustCompile(`^([A-Za-z0-9_-]+)\s*(=|!=|&=)\s*(.+)$`)
	predRe  = regexp.MustCompile(`^(\w+)\s*=\s*(\S+)$`)
	dateRe  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	ouDirOf = map[string]string{
		OUTeams:    "ldap-config/pizza_teams",
		OUApps:     "ldap-config/entitlements/apps",
		OUGitHub:   "ldap-config/github/teams",
		OUAAD:      "ldap-config/aad/groups",
		OUInternal: "internal",
	}
)

type ruleRef struct {
	method, op, value string
	expired           bool
}

type groupInfo struct {
	key         string // ou/cn
	file        string
	rules       []ruleRef
	contractors []string // unexpired filter values
	fileExp     string
	fileExpired bool
}

type checker struct {
	t       testing.TB
	repo    *Repo
	now     time.Time
	people  map[string]string // lower uid -> people.yaml key
	mgr     map[string]string // lower uid -> lower manager (manager map)
	status  map[string]string // lower uid -> employee|contractor
	reports map[string][]string
	groups  map[string]*groupInfo

	pastLine, futureLine, pastFile, futureFile int
}

func (c *checker) errorf(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf(format, args...)
}

func newChecker(t testing.TB, repo *Repo, now time.Time) *checker {
	t.Helper()
	c := &checker{
		t: t, repo: repo, now: now,
		people:  map[string]string{},
		mgr:     map[string]string{},
		status:  map[string]string{},
		reports: map[string][]string{},
		groups:  map[string]*groupInfo{},
	}
	c.loadPeople()
	c.loadGroups()
	return c
}

func (c *checker) file(p string) []byte {
	b, ok := c.repo.Files[p]
	if !ok {
		c.t.Fatalf("missing file %s", p)
	}
	return b
}

func (c *checker) loadPeople() {
	var people map[string]map[string]string
	if err := yaml.Unmarshal(c.file("people.yaml"), &people); err != nil {
		c.t.Fatalf("people.yaml: %v", err)
	}
	var mm map[string]struct {
		Manager string   `yaml:"manager"`
		Status  []string `yaml:"status"`
	}
	if err := yaml.Unmarshal(c.file("manager-map.yaml"), &mm); err != nil {
		c.t.Fatalf("manager-map.yaml: %v", err)
	}
	for _, uid := range sortedKeys(people) {
		low := strings.ToLower(uid)
		if _, dup := c.people[low]; dup {
			c.errorf("people.yaml: uid %s duplicated case-insensitively", uid)
		}
		c.people[low] = uid
		attrs := people[uid]
		if attrs["cn"] == "" {
			c.errorf("people.yaml: %s has no cn", uid)
		}
		e, ok := mm[low]
		if !ok {
			c.errorf("manager-map.yaml: no entry for %s", low)
			continue
		}
		if strings.ToLower(attrs["manager"]) != e.Manager {
			c.errorf("%s: people manager %q vs manager map %q", uid, attrs["manager"], e.Manager)
		}
		if len(e.Status) != 1 || (e.Status[0] != "employee" && e.Status[0] != "contractor") {
			c.errorf("%s: bad status %v", low, e.Status)
		}
		c.mgr[low] = e.Manager
		c.status[low] = e.Status[0]
	}
	if len(mm) != len(people) {
		c.errorf("manager map has %d entries, people %d", len(mm), len(people))
	}
	for _, low := range sortedKeys(mm) {
		if low != strings.ToLower(low) {
			c.errorf("manager map key %s is not lower case", low)
		}
		if m := mm[low].Manager; m != low {
			if _, ok := c.people[m]; !ok {
				c.errorf("%s: manager %s is not a person", low, m)
			}
			// The manager map value must spell the people key of the manager
			// (exact case) for the root, which is checked separately.
			c.reports[m] = append(c.reports[m], low)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (c *checker) loadGroups() {
	ouOfDir := map[string]string{}
	for ou, d := range ouDirOf {
		ouOfDir[d] = ou
	}
	for _, p := range c.repo.Paths() {
		switch p {
		case "config.yaml", "people.yaml", "manager-map.yaml":
			continue
		}
		dir, base := path.Split(p)
		ou, ok := ouOfDir[strings.TrimSuffix(dir, "/")]
		if !ok {
			c.errorf("unexpected file %s", p)
			continue
		}
		ext := path.Ext(base)
		cn := strings.TrimSuffix(base, ext)
		if !cnRe.MatchString(cn) {
			c.errorf("%s: illegal cn %q", p, cn)
		}
		key := ou + "/" + cn
		if _, dup := c.groups[key]; dup {
			c.errorf("%s: two files for %s", p, key)
		}
		g := &groupInfo{key: key, file: p}
		c.groups[key] = g
		switch ext {
		case ".txt":
			c.parseTxt(g, string(c.repo.Files[p]))
		case ".yaml":
			c.parseYAML(g, c.repo.Files[p])
		default:
			c.errorf("%s: bad extension", p)
		}
	}
}

// expired reports whether a strict YYYY-MM-DD date has been reached.
func (c *checker) expired(file, d string, perLine bool) bool {
	if !dateRe.MatchString(d) {
		c.errorf("%s: bad date %q", file, d)
		return false
	}
	t, err := time.Parse(dateLayout, d)
	if err != nil {
		c.errorf("%s: bad date %q: %v", file, d, err)
		return false
	}
	past := !t.After(c.now)
	switch {
	case perLine && past:
		c.pastLine++
	case perLine:
		c.futureLine++
	case past:
		c.pastFile++
	default:
		c.futureFile++
	}
	return past
}

func (c *checker) parseTxt(g *groupInfo, text string) {
	descs := 0
	meta := map[string]int{}
	hasAff := false
	var cvals []string
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		m := lineRe.FindStringSubmatch(line)
		if m == nil {
			c.errorf("%s: unparseable line %q", g.file, line)
			continue
		}
		key, op, val := m[1], m[2], strings.TrimRight(m[3], " \t")
		if key == "description" {
			descs++
			if op != "=" {
				c.errorf("%s: description with %s", g.file, op)
			}
			continue
		}
		if i := strings.IndexByte(val, '#'); i >= 0 {
			val = strings.TrimRight(val[:i], " \t")
		}
		parts := strings.Split(val, ";")
		val = strings.TrimSpace(parts[0])
		exp := ""
		for _, pr := range parts[1:] {
			pr = strings.TrimSpace(pr)
			pm := predRe.FindStringSubmatch(pr)
			if pm == nil || pm[1] != "expiration" {
				c.errorf("%s: bad predicate %q", g.file, pr)
				continue
			}
			exp = pm[2]
		}
		expired := exp != "" && c.expired(g.file, exp, true)
		switch {
		case strings.HasPrefix(key, "metadata_"):
			meta[key]++
			if op != "=" || exp != "" || meta[key] > 1 || key == "metadata_" {
				c.errorf("%s: bad metadata line %q", g.file, line)
			}
		case key == "expiration":
			if op != "=" || exp != "" || g.fileExp != "" {
				c.errorf("%s: bad whole-file expiration %q", g.file, line)
			}
			g.fileExp = val
			g.fileExpired = c.expired(g.file, val, false)
		case key == "contractors":
			if op != "=" {
				c.errorf("%s: filter with %s", g.file, op)
			}
			if !expired {
				cvals = append(cvals, val)
			}
		case key == "username" || key == "group" || key == "management":
			g.rules = append(g.rules, ruleRef{method: key, op: op, value: val, expired: expired})
			if op == "=" && !expired {
				hasAff = true
			}
		default:
			c.errorf("%s: unknown key %q", g.file, key)
		}
	}
	if descs > 1 {
		c.errorf("%s: %d descriptions", g.file, descs)
	}
	c.checkFilter(g, cvals)
	if !hasAff {
		ok := false
		for _, l := range strings.Split(text, "\n") {
			if strings.TrimSpace(l) == "metadata_no_conditions_ok = true" {
				ok = true
			}
		}
		if !ok {
			c.errorf("%s: no live affirmative rule", g.file)
		}
	}
}

func (c *checker) checkFilter(g *groupInfo, vals []string) {
	for _, v := range vals {
		if (v == "all" || v == "none") && len(vals) > 1 {
			c.errorf("%s: filter mixes %s with other entries", g.file, v)
		}
		if v != "all" && v != "none" && !strings.Contains(v, "/") {
			if _, ok := c.people[strings.ToLower(v)]; !ok {
				c.errorf("%s: filter names unknown person %s", g.file, v)
			}
		}
	}
	g.contractors = vals
}

func mapPairs(n *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	return out
}

// quotedDate checks a YAML expiration value: double-quoted strict date.
func (c *checker) quotedDate(file string, n *yaml.Node, perLine bool) bool {
	if n.Kind != yaml.ScalarNode || n.Style != yaml.DoubleQuotedStyle {
		c.errorf("%s: expiration %q is not a double-quoted string (line %d)", file, n.Value, n.Line)
	}
	return c.expired(file, n.Value, perLine)
}

func (c *checker) parseYAML(g *groupInfo, data []byte) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		c.errorf("%s: %v", g.file, err)
		return
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		c.errorf("%s: not a map", g.file)
		return
	}
	sawRules := false
	for _, kv := range mapPairs(doc.Content[0]) {
		k, v := kv[0].Value, kv[1]
		switch k {
		case "description":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				c.errorf("%s: description is not a string", g.file)
			}
		case "rules":
			sawRules = true
			if !c.yamlRule(g, v, false) {
				c.errorf("%s: rules are empty after expiration pruning", g.file)
			}
		case "filters":
			for _, fv := range mapPairs(v) {
				if fv[0].Value != "contractors" {
					c.errorf("%s: unknown filter %s", g.file, fv[0].Value)
				}
				var vals []string
				switch fv[1].Kind {
				case yaml.ScalarNode:
					vals = append(vals, fv[1].Value)
				case yaml.SequenceNode:
					for _, it := range fv[1].Content {
						if it.Kind == yaml.ScalarNode {
							vals = append(vals, it.Value)
							continue
						}
						var key string
						exp := false
						for _, iv := range mapPairs(it) {
							switch iv[0].Value {
							case "key":
								key = iv[1].Value
							case "expiration":
								exp = c.quotedDate(g.file, iv[1], true)
							default:
								c.errorf("%s: bad filter item key %s", g.file, iv[0].Value)
							}
						}
						if !exp {
							vals = append(vals, key)
						}
					}
				default:
					c.errorf("%s: bad filter value", g.file)
				}
				c.checkFilter(g, vals)
			}
		case "metadata":
			if v.Kind != yaml.MappingNode {
				c.errorf("%s: metadata not a map", g.file)
			}
			for _, mv := range mapPairs(v) {
				if mv[0].Tag != "!!str" {
					c.errorf("%s: metadata key %s not a string", g.file, mv[0].Value)
				}
			}
		case "expiration":
			g.fileExp = v.Value
			g.fileExpired = c.quotedDate(g.file, v, false)
		default:
			c.errorf("%s: unknown top-level key %s", g.file, k)
		}
	}
	if !sawRules {
		c.errorf("%s: no rules", g.file)
	}
}

// yamlRule validates one rule node and reports whether it survives
// expiration pruning with something to evaluate.
func (c *checker) yamlRule(g *groupInfo, n *yaml.Node, insideNot bool) bool {
	if n.Kind != yaml.MappingNode {
		c.errorf("%s: rule is not a map (line %d)", g.file, n.Line)
		return false
	}
	var key string
	var val *yaml.Node
	alive := true
	nkeys := 0
	for _, kv := range mapPairs(n) {
		if kv[0].Value == "expiration" {
			if insideNot {
				c.errorf("%s: expiration inside not is never pruned (line %d)", g.file, kv[0].Line)
			}
			if c.quotedDate(g.file, kv[1], true) {
				alive = false
			}
			continue
		}
		nkeys++
		key, val = kv[0].Value, kv[1]
	}
	if nkeys != 1 {
		c.errorf("%s: rule with %d keys (line %d)", g.file, nkeys, n.Line)
		return false
	}
	switch key {
	case "or", "and":
		if val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
			c.errorf("%s: %s needs a non-empty list", g.file, key)
			return false
		}
		any, all := false, true
		for _, ch := range val.Content {
			if c.yamlRule(g, ch, insideNot) {
				any = true
			} else {
				all = false
			}
		}
		if key == "and" && !all {
			c.errorf("%s: and child may be pruned (widening) (line %d)", g.file, n.Line)
		}
		return alive && any
	case "not":
		c.yamlRule(g, val, true)
		return alive
	case "username", "group", "management":
		if val.Kind != yaml.ScalarNode {
			c.errorf("%s: %s value not a string", g.file, key)
		}
		g.rules = append(g.rules, ruleRef{method: key, op: "=", value: val.Value, expired: !alive})
		return alive
	default:
		c.errorf("%s: unknown rule key %s", g.file, key)
		return false
	}
}

// checkReferences verifies every rule target and returns the reference graph.
func (c *checker) checkReferences() map[string][]string {
	edges := map[string][]string{}
	for _, key := range sortedKeys(c.groups) {
		g := c.groups[key]
		refs := slices.Clone(g.contractors)
		for _, r := range g.rules {
			switch r.method {
			case "username":
				if _, ok := c.people[strings.ToLower(r.value)]; !ok {
					c.errorf("%s: unknown user %s", g.file, r.value)
				}
			case "management":
				low := strings.ToLower(r.value)
				if _, ok := c.people[low]; !ok {
					c.errorf("%s: unknown manager %s", g.file, r.value)
				} else if len(c.reports[low]) == 0 {
					c.errorf("%s: manager %s has no reports", g.file, r.value)
				}
			case "group":
				refs = append(refs, r.value)
			}
		}
		for _, ref := range refs {
			if !strings.Contains(ref, "/") {
				continue
			}
			i := strings.LastIndexByte(ref, '/')
			if _, ok := ouDirOf[ref[:i]]; !ok {
				c.errorf("%s: reference %s to unknown OU", g.file, ref)
			}
			if strings.Contains(ref, "*") {
				c.errorf("%s: unexpected wildcard %s", g.file, ref)
			}
			if _, ok := c.groups[ref]; !ok {
				c.errorf("%s: reference to missing group %s", g.file, ref)
			}
			edges[key] = append(edges[key], ref)
		}
	}
	return edges
}

// findCycle returns a cycle in the graph, or nil.
func findCycle(nodes []string, edges map[string][]string) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		color[n] = grey
		stack = append(stack, n)
		for _, m := range edges[n] {
			switch color[m] {
			case grey:
				i := slices.Index(stack, m)
				return append(slices.Clone(stack[i:]), m)
			case white:
				if cyc := visit(m); cyc != nil {
					return cyc
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return nil
	}
	for _, n := range nodes {
		if color[n] == white {
			if cyc := visit(n); cyc != nil {
				return cyc
			}
		}
	}
	return nil
}

// checkOrg verifies the org-chart shape.
func (c *checker) checkOrg(minFan, maxFan int) {
	roots := 0
	for _, low := range sortedKeys(c.mgr) {
		m := c.mgr[low]
		if m == low {
			roots++
			if c.people[low] != low {
				c.errorf("root %s must be spelled in lower case to be its own manager exactly", c.people[low])
			}
		}
		// Every chain reaches the root without looping.
		x := low
		for range len(c.mgr) + 1 {
			if c.mgr[x] == x {
				break
			}
			x = c.mgr[x]
		}
		if c.mgr[x] != x {
			c.errorf("%s does not reach the root", low)
		}
		if n := len(c.reports[low]); n > 0 && (n < minFan || n > maxFan) {
			c.errorf("%s has %d direct reports, want %d..%d", low, n, minFan, maxFan)
		}
		if c.status[low] == "contractor" && len(c.reports[low]) > 0 {
			c.errorf("contractor %s has reports", low)
		}
	}
	if roots != 1 {
		c.errorf("%d roots, want 1", roots)
	}
}

// subtreeEmployees counts the employees managed (transitively) by m, m included.
func (c *checker) subtreeEmployees(m string, seen map[string]bool) {
	if seen[m] {
		return
	}
	seen[m] = true
	for _, r := range c.reports[m] {
		c.subtreeEmployees(r, seen)
	}
}

func (c *checker) checkAll() map[string][]string {
	edges := c.checkReferences()
	if cyc := findCycle(sortedKeys(c.groups), edges); cyc != nil {
		c.errorf("reference cycle: %s", strings.Join(cyc, " -> "))
	}
	// contractors.txt lists exactly the people with status contractor.
	var listed []string
	for _, r := range c.groups[OUInternal+"/contractors"].rules {
		listed = append(listed, strings.ToLower(r.value))
	}
	slices.Sort(listed)
	var want []string
	for _, low := range sortedKeys(c.status) {
		if c.status[low] == "contractor" {
			want = append(want, low)
		}
	}
	if !slices.Equal(listed, want) {
		c.errorf("contractors.txt lists %d people, manager map has %d contractors", len(listed), len(want))
	}
	return edges
}

func generate(t testing.TB, opt Options) *Repo {
	t.Helper()
	repo, err := Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestDeterministic(t *testing.T) {
	a := generate(t, Options{People: 600, Seed: 7})
	b := generate(t, Options{People: 600, Seed: 7})
	if !slices.Equal(a.Paths(), b.Paths()) {
		t.Fatal("same seed, different file sets")
	}
	for _, p := range a.Paths() {
		if !bytes.Equal(a.Files[p], b.Files[p]) {
			t.Fatalf("same seed, %s differs", p)
		}
	}
	if a.Stats != b.Stats {
		t.Fatalf("same seed, stats differ: %+v vs %+v", a.Stats, b.Stats)
	}

	c := generate(t, Options{People: 600, Seed: 8})
	differ := 0
	for _, p := range []string{"people.yaml", "manager-map.yaml"} {
		if !bytes.Equal(a.Files[p], c.Files[p]) {
			differ++
		}
	}
	if differ != 2 || slices.Equal(a.Paths(), c.Paths()) {
		t.Fatal("different seeds produced the same repo")
	}

	// Seed 0 means the documented default 1; Now defaults to 2026-01-01.
	d := generate(t, Options{People: 600})
	e := generate(t, Options{People: 600, Seed: 1, Now: time.Date(2026, 1, 1, 15, 30, 0, 0, time.UTC)})
	if !bytes.Equal(d.Files["ldap-config/entitlements/apps/"+firstApp(d)], e.Files["ldap-config/entitlements/apps/"+firstApp(e)]) ||
		!bytes.Equal(d.Files["config.yaml"], e.Files["config.yaml"]) {
		t.Fatal("zero Options fields do not match their documented defaults")
	}
}

func firstApp(r *Repo) string {
	for _, p := range r.Paths() {
		if strings.HasPrefix(p, "ldap-config/entitlements/apps/") {
			return path.Base(p)
		}
	}
	return ""
}

func TestValidRepo600(t *testing.T) {
	const P = 600
	now := DefaultNow
	repo := generate(t, Options{People: P, Seed: 3})
	c := newChecker(t, repo, now)
	c.checkOrg(2, 9)
	c.checkAll()
	checkCounts(t, repo, P)
	checkConfig(t, repo)
}

func TestValidRepo5000(t *testing.T) {
	const P = 5000
	now := time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)
	repo := generate(t, Options{People: P, Seed: 11, Now: now})
	c := newChecker(t, repo, now)
	c.checkOrg(2, 9)
	c.checkAll()
	checkCounts(t, repo, P)

	st := repo.Stats
	if frac := float64(st.YAMLApps) / float64(st.Apps); frac < 0.35 || frac > 0.45 {
		t.Errorf("YAML apps are %.2f of apps, want ~0.40", frac)
	}
	if c.pastLine == 0 || c.futureLine == 0 || c.pastFile == 0 || c.futureFile == 0 {
		t.Errorf("expiration mix: past/future lines %d/%d, past/future files %d/%d",
			c.pastLine, c.futureLine, c.pastFile, c.futureFile)
	}
	if c.futureFile <= c.pastFile {
		t.Errorf("whole-file expirations should be mostly future: %d future, %d past", c.futureFile, c.pastFile)
	}

	// Large AAD groups: groups made only of management rules (no
	// contractors setting) whose employee count exceeds 999.
	large := 0
	for _, key := range sortedKeys(c.groups) {
		g := c.groups[key]
		if !strings.HasPrefix(key, OUAAD+"/") || len(g.contractors) > 0 {
			continue
		}
		seen := map[string]bool{}
		onlyMgmt := len(g.rules) > 0
		for _, r := range g.rules {
			if r.method != "management" || r.op != "=" || r.expired {
				onlyMgmt = false
				break
			}
			c.subtreeEmployees(strings.ToLower(r.value), seen)
		}
		if !onlyMgmt {
			continue
		}
		emp := 0
		for p := range seen {
			if c.status[p] == "employee" {
				emp++
			}
		}
		if emp > 999 {
			large++
		}
	}
	if large < 3 || large != st.LargeAADGroups {
		t.Errorf("%d AAD groups exceed 999 members (stats say %d), want >= 3", large, st.LargeAADGroups)
	}
	t.Logf("P=%d stats: %+v", P, st)
}

// TestSmallOrgs covers the edge cases of the tree fill and of empty OUs.
func TestSmallOrgs(t *testing.T) {
	for p := 2; p <= 60; p++ {
		repo := generate(t, Options{People: p, Seed: int64(p)})
		c := newChecker(t, repo, DefaultNow)
		if p >= 3 {
			c.checkOrg(2, 9)
		} else {
			c.checkOrg(1, 9)
		}
		c.checkAll()
		checkCounts(t, repo, p)
		if t.Failed() {
			t.Fatalf("P=%d failed", p)
		}
	}
	if _, err := Generate(Options{People: 1}); err == nil {
		t.Error("People=1 accepted")
	}
}

func checkCounts(t *testing.T, repo *Repo, p int) {
	t.Helper()
	st := repo.Stats
	perOU := map[string]int{}
	for _, f := range repo.Paths() {
		perOU[path.Dir(f)]++
	}
	want := []struct {
		name      string
		got, want int
	}{
		{"people", st.People, p},
		{"contractors", st.Contractors, (p + 5) / 10},
		{"teams", st.Teams, p/6 + 1},
		{"apps", st.Apps, p / 2},
		{"github teams", st.GitHubTeams, p / 3},
		{"aad groups", st.AADGroups, p / 3},
		{"team files", perOU[ouDirOf[OUTeams]], st.Teams},
		{"app files", perOU[ouDirOf[OUApps]], st.Apps},
		{"github files", perOU[ouDirOf[OUGitHub]], st.GitHubTeams},
		{"aad files", perOU[ouDirOf[OUAAD]], st.AADGroups},
		{"files", st.Files, len(repo.Files)},
		{"files total", st.Files, 4 + st.Teams + st.Apps + st.GitHubTeams + st.AADGroups},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("P=%d: %s = %d, want %d", p, w.name, w.got, w.want)
		}
	}
	total := 0
	for _, b := range repo.Files {
		total += len(b)
	}
	if total != st.Bytes {
		t.Errorf("Bytes = %d, files hold %d", st.Bytes, total)
	}
}

func checkConfig(t *testing.T, repo *Repo) {
	t.Helper()
	var cfg struct {
		ConfigurationPath string                    `yaml:"configuration_path"`
		Backends          map[string]map[string]any `yaml:"backends"`
		Groups            map[string]map[string]any `yaml:"groups"`
		Extras            map[string]map[string]any `yaml:"extras"`
		Filters           map[string]map[string]any `yaml:"filters"`
		People            map[string]map[string]any `yaml:"people"`
		PeopleDataSource  string                    `yaml:"people_data_source"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(repo.Files["config.yaml"]))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	if cfg.ConfigurationPath != "./ldap-config" || cfg.PeopleDataSource != "yaml" {
		t.Errorf("config: %+v", cfg)
	}
	if _, ok := repo.Files[strings.TrimPrefix(fmt.Sprint(cfg.Extras["orgchart"]["manager_map_file"]), "./")]; !ok {
		t.Error("manager_map_file does not name a generated file")
	}
	if pw, ok := cfg.Backends["synth-ldap"]["ldap_bindpw"].(string); !ok || !strings.Contains(pw, `ENV["LDAP_BINDPW"]`) {
		t.Errorf("ldap_bindpw = %v", cfg.Backends["synth-ldap"]["ldap_bindpw"])
	}
	for ou, dir := range ouDirOf {
		e, ok := cfg.Groups[ou]
		if !ok {
			t.Errorf("OU %s missing from config", ou)
			continue
		}
		if ou == OUInternal {
			// dir is relative to configuration_path.
			if got := path.Clean(path.Join("ldap-config", fmt.Sprint(e["dir"]))); got != dir {
				t.Errorf("internal dir resolves to %s", got)
			}
		} else if e["base"] == nil {
			t.Errorf("OU %s has no base", ou)
		}
	}
	if got := cfg.Groups[OUAAD]["user_principal_format"]; got != "%KEY%@corp.example.com" {
		t.Errorf("user_principal_format = %v", got)
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	opt := Options{People: 600, Seed: 5}
	st, err := Write(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	repo := generate(t, opt)
	if st != repo.Stats {
		t.Fatalf("Write stats %+v, Generate stats %+v", st, repo.Stats)
	}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		rel, _ := filepath.Rel(dir, p)
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if want, ok := repo.Files[filepath.ToSlash(rel)]; !ok || !bytes.Equal(got, want) {
			t.Errorf("%s differs from Generate", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != st.Files {
		t.Errorf("wrote %d files, stats say %d", n, st.Files)
	}
	if _, err := Write(dir, opt); err == nil {
		t.Error("Write into a non-empty directory succeeded")
	}
}

func BenchmarkGenerate50k(b *testing.B) {
	for b.Loop() {
		if _, err := Generate(Options{People: 50000}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite50k(b *testing.B) {
	root := b.TempDir()
	i := 0
	var st Stats
	for b.Loop() {
		i++
		var err error
		st, err = Write(filepath.Join(root, fmt.Sprint(i)), Options{People: 50000})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Files), "files")
	b.ReportMetric(float64(st.Bytes)/1e6, "MB")
}

// recorder captures Errorf calls so the checker itself can be tested.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckerCatchesFaults makes sure the validity checks above are not
// vacuous: each injected fault must be reported.
func TestCheckerCatchesFaults(t *testing.T) {
	base := generate(t, Options{People: 120, Seed: 2})
	var team, leaf string
	for _, p := range base.Paths() {
		if team == "" && strings.HasPrefix(p, "ldap-config/pizza_teams/") && !strings.HasSuffix(p, "/everyone.txt") {
			team = strings.TrimSuffix(path.Base(p), ".txt")
		}
	}
	{
		c := newChecker(t, base, DefaultNow)
		for _, low := range sortedKeys(c.mgr) {
			if len(c.reports[low]) == 0 {
				leaf = c.people[low]
				break
			}
		}
	}
	faults := []struct {
		name, file, text, want string
	}{
		{"self cycle", "ldap-config/pizza_teams/" + team + ".txt", "group = pizza_teams/" + team + "\n", "cycle"},
		{"two-file cycle", "ldap-config/pizza_teams/zz-a.txt", "group = pizza_teams/zz-b\n", "cycle"},
		{"missing reference", "ldap-config/aad/groups/x.txt", "group = pizza_teams/nope\n", "missing group"},
		{"unknown OU", "ldap-config/aad/groups/x.txt", "group = nope/x\n", "unknown OU"},
		{"manager without reports", "ldap-config/aad/groups/x.txt", "management = " + leaf + "\n", "no reports"},
		{"only expired rules", "ldap-config/aad/groups/x.txt", "username = " + leaf + "; expiration = 2020-01-01\n", "no live affirmative"},
		{"bad cn", "ldap-config/aad/groups/a.b.txt", "username = " + leaf + "\n", "illegal cn"},
		{"unquoted yaml date", "ldap-config/entitlements/apps/x.yaml",
			"rules:\n  or:\n  - username: " + leaf + "\n  - username: " + leaf + "\n    expiration: 2030-01-01\n", "double-quoted"},
		{"all plus list", "ldap-config/aad/groups/x.txt", "username = " + leaf + "\ncontractors = all\ncontractors = " + leaf + "\n", "mixes"},
	}
	for _, f := range faults {
		files := maps.Clone(base.Files)
		files[f.file] = append(slices.Clone(files[f.file]), f.text...)
		if f.name == "two-file cycle" {
			files["ldap-config/pizza_teams/zz-b.txt"] = []byte("group = pizza_teams/zz-a\n")
		}
		rec := &recorder{TB: t}
		c := newChecker(rec, &Repo{Files: files, Stats: base.Stats}, DefaultNow)
		c.checkAll()
		if !slices.ContainsFunc(rec.errs, func(e string) bool { return strings.Contains(e, f.want) }) {
			t.Errorf("%s: not detected (errors: %q)", f.name, rec.errs)
		}
	}
}
