// Package synth generates deterministic, production-shaped entitlements
// configuration repositories for benchmarks.
//
// The conformance corpus is small and hand-shaped; the performance questions
// we care about (how long a full calculation of tens of thousands of groups
// takes, how many people a group reference graph fans out to, how big AAD
// groups get) only show up at production scale. Real configuration repos
// cannot be checked in, so this package writes a synthetic one whose shape
// (OU mix, file formats, rule mix, reference depth, expirations, contractor
// filter, org-chart depth) follows the production repo while every name is
// made up.
//
// A generated repo for P people contains:
//
//	config.yaml                       entitlements configuration (entry point)
//	people.yaml                       YAML people source: uid -> {cn, manager}
//	manager-map.yaml                  org chart: lower-case uid -> {manager, status}
//	internal/contractors.txt          dummy OU listing the contractors (filter population)
//	ldap-config/pizza_teams/*.txt     P/6 teams + everyone.txt            (ldap)
//	ldap-config/entitlements/apps/*   P/2 apps, ~60% .txt / ~40% .yaml    (ldap)
//	ldap-config/github/teams/*.txt    P/3 GitHub teams                    (github_team)
//	ldap-config/aad/groups/*.txt      P/3 Azure AD groups                 (aad)
//
// Every file is valid under the semantics spec (docs in /work/shared/spec):
// references only point at files generated earlier in a fixed dependency
// order (teams -> earlier teams; apps -> teams or earlier apps; GitHub and
// AAD groups -> teams or apps), so the reference graph is acyclic; every
// management rule names a person with reports; every text file keeps at
// least one unexpired "=" rule; cns match ^[A-Za-z0-9_-]+$.
//
// Working directory: the reference implementation resolves the people file
// name ("people.yaml" in config.yaml) against the process working directory,
// not against the config directory. Benchmarks must therefore chdir into the
// generated directory (or resolve the name themselves) before calculating.
//
// ERB: the LDAP bind password, GitHub token and AAD tenant id are written as
// single-quoted '<%= ENV["..."] %>' templates. Quoting keeps the rendered
// value a string even when the variable is unset (an unquoted empty
// rendering would be YAML null and fail the required-string checks), so a
// calculation-only benchmark needs no environment.
//
// Determinism: all randomness comes from math/rand/v2 PCG generators seeded
// from Options.Seed (one independent stream per section, so changing how one
// section is generated does not reshuffle the others), and nothing iterates
// a Go map in unsorted order. The same Options always produce byte-identical
// files.
package synth

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options controls the size and randomness of a generated repo.
type Options struct {
	// People is the number of people P (at least 2). Group counts scale
	// with it: P/6 teams, P/2 apps, P/3 GitHub teams, P/3 AAD groups.
	People int
	// Seed selects the random streams. Zero means 1, so the zero Options
	// value (plus People) is a stable, documented default.
	Seed int64
	// Now is the reference "today": per-line and whole-file expirations
	// are generated up to two years before or after it, so a calculation
	// run with the same date sees a known mix of expired and live rules.
	// Only its UTC date is used. Zero means 2026-01-01 UTC, the date the
	// conformance corpus uses.
	Now time.Time
}

// Stats describes a generated repo.
type Stats struct {
	People      int // people in people.yaml
	Contractors int // people with status contractor (all listed in internal/contractors.txt)
	Teams       int // group files in pizza_teams, including everyone.txt
	Apps        int // group files in entitlements/apps (.txt and .yaml)
	GitHubTeams int // group files in github/teams
	AADGroups   int // group files in aad/groups
	Files       int // every file written, including config.yaml, people.yaml, manager-map.yaml

	Managers       int // people with at least one direct report
	YAMLApps       int // how many of Apps are .yaml files
	LargeAADGroups int // AAD groups built from management rules to exceed 999 members (P >= ~1200)
	Bytes          int // total size of all files
}

// Repo is a generated repository held in memory.
type Repo struct {
	// Files maps a slash-separated path relative to the repo root to the
	// file's content. The byte slices share one backing array; treat them
	// as read-only.
	Files map[string][]byte
	Stats Stats
}

// Paths returns the file paths of the repo in sorted order, the order to
// use whenever output or iteration order matters.
func (r *Repo) Paths() []string {
	ps := make([]string, 0, len(r.Files))
	for p := range r.Files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// OU keys as written in config.yaml and in group references. Exported as
// constants so benchmarks can name the OUs without string duplication.
const (
	OUTeams    = "pizza_teams"
	OUApps     = "entitlements/apps"
	OUInternal = "internal"
	OUGitHub   = "github/teams"
	OUAAD      = "aad/groups"
)

const (
	defaultSeed = 1
	dateLayout  = "2006-01-02"
	// largeTarget is the number of employees a "large" AAD group is built
	// to reach: above 999 (the Graph page size ceiling) with some margin.
	largeTarget = 1050
)

// DefaultNow is the "today" used when Options.Now is zero.
var DefaultNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Write generates the repo for opt and writes it under dir, creating dir if
// needed. dir must be empty or absent: stale files from an earlier run would
// silently become part of the configuration, so Write refuses to mix.
// Files are written in parallel; each is written with a single write call
// from the in-memory content.
func Write(dir string, opt Options) (Stats, error) {
	ents, err := os.ReadDir(dir)
	switch {
	case err == nil && len(ents) > 0:
		return Stats{}, fmt.Errorf("synth: directory %q is not empty", dir)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return Stats{}, fmt.Errorf("synth: %w", err)
	}
	repo, err := Generate(opt)
	if err != nil {
		return Stats{}, err
	}
	paths := repo.Paths()

	// Create each directory once, parents first (sorted order gives that).
	var dirs []string
	seen := map[string]bool{}
	for _, p := range paths {
		d := filepath.Dir(filepath.Join(dir, filepath.FromSlash(p)))
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Stats{}, fmt.Errorf("synth: %w", err)
		}
	}

	// File creation is syscall-bound, not CPU-bound: a few more workers
	// than CPUs keeps the file system busy.
	workers := min(max(runtime.GOMAXPROCS(0)*2, 4), 32)
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(paths) {
					return
				}
				p := paths[i]
				if err := writeNew(filepath.Join(dir, filepath.FromSlash(p)), repo.Files[p]); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("synth: %w", err) })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return Stats{}, firstErr
	}
	return repo.Stats, nil
}

// writeNew creates name (which must not exist: O_EXCL turns a race with
// another writer into an error instead of a silently mixed repo) and
// writes data with one write call.
func writeNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Generate builds the repo for opt in memory.
func Generate(opt Options) (*Repo, error) {
	if opt.People < 2 {
		return nil, fmt.Errorf("synth: People must be at least 2, got %d", opt.People)
	}
	if opt.People > 99_999_999 {
		return nil, fmt.Errorf("synth: People must be at most 99999999, got %d", opt.People)
	}
	if opt.Seed == 0 {
		opt.Seed = defaultSeed
	}
	if opt.Now.IsZero() {
		opt.Now = DefaultNow
	}
	g := newGen(opt)
	g.buildOrg()
	g.nameGroups()

	g.writeConfig()
	g.writePeople()
	g.writeManagerMap()
	g.writeContractors()
	g.writeEveryone()
	g.writeTeams()
	g.writeApps()
	g.writeGitHub()
	g.writeAAD()

	files := make(map[string][]byte, len(g.files))
	for _, f := range g.files {
		files[f.path] = g.buf[f.start:f.end:f.end]
	}
	st := g.stats
	st.People = g.p
	st.Contractors = len(g.contractors)
	st.Managers = len(g.allMgrs)
	st.Files = len(files)
	st.Bytes = len(g.buf)
	return &Repo{Files: files, Stats: st}, nil
}

// ---------------------------------------------------------------------------
// generator state

type fileSpan struct {
	path       string
	start, end int
}

type gen struct {
	opt   Options
	now   time.Time // UTC midnight of opt.Now
	p     int
	width int // digits in a uid

	// org chart; indices are person numbers, assigned breadth-first so a
	// manager's direct reports are the contiguous range
	// [first[m], first[m]+nrep[m]).
	uid         []string // people.yaml key (sometimes mixed case)
	low         []string // lower-cased uid (manager-map key)
	mgr         []int32
	first       []int32
	nrep        []int32
	level       []int8
	contractor  []bool
	subEmp      []int32 // employees in the subtree, self included
	allMgrs     []int32 // everyone with reports, ascending
	teamMgrs    []int32 // managers below the VP level (team-sized subtrees)
	contractors []int32 // ascending

	teams, apps, ghTeams, aadGroups []string // cns in generation order

	buf   []byte // arena holding every file's content
	files []fileSpan
	stats Stats
}

// stream returns an independent PCG stream for one section of the repo.
func (g *gen) stream(section uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(g.opt.Seed), 0x9e3779b97f4a7c15^section))
}

func newGen(opt Options) *gen {
	now := opt.Now.UTC()
	now = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	width := max(6, len(strconv.Itoa(opt.People-1)))
	return &gen{
		opt:   opt,
		now:   now,
		p:     opt.People,
		width: width,
		// ~330 bytes of output per person at production shape.
		buf: make([]byte, 0, 360*opt.People+4096),
	}
}

func (g *gen) begin() int { return len(g.buf) }

func (g *gen) end(path string, start int) {
	g.files = append(g.files, fileSpan{path: path, start: start, end: len(g.buf)})
}

func (g *gen) s(x string) { g.buf = append(g.buf, x...) }

func (g *gen) b(c byte) { g.buf = append(g.buf, c) }

func (g *gen) int(n int) { g.buf = strconv.AppendInt(g.buf, int64(n), 10) }

// date appends today+days as YYYY-MM-DD.
func (g *gen) date(days int) { g.buf = g.now.AddDate(0, 0, days).AppendFormat(g.buf, dateLayout) }

// expDays returns a day offset for an expiration: in the past (1..730 days
// ago, so already reached) when past is set, else 1..730 days ahead (not yet
// reached: a date counts as reached from its own 00:00 UTC).
func expDays(r *rand.Rand, past bool) int {
	d := 1 + r.IntN(730)
	if past {
		return -d
	}
	return d
}

// person appends the uid of person i as a rule value. About one reference
// in twenty is written in upper case: rules match case-insensitively, and
// production files are not consistent about case.
func (g *gen) person(r *rand.Rand, i int32) {
	u := g.uid[i]
	if r.IntN(20) != 0 {
		g.s(u)
		return
	}
	for k := 0; k < len(u); k++ {
		c := u[k]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		g.b(c)
	}
}

// ---------------------------------------------------------------------------
// org chart

func (g *gen) buildOrg() {
	p := g.p
	r := g.stream(1)
	g.uid = make([]string, p)
	g.low = make([]string, p)
	g.mgr = make([]int32, p)
	g.first = make([]int32, p)
	g.nrep = make([]int32, p)
	g.level = make([]int8, p)
	g.contractor = make([]bool, p)
	g.subEmp = make([]int32, p)

	// uids: u000123; every 17th person (never the root, whose manager
	// must equal its own uid exactly) is spelled U000123 so that
	// case-insensitive matching and the "output uses the people file's
	// spelling" rule are exercised.
	raw := make([]byte, 0, 1+g.width)
	var db [20]byte
	for i := range p {
		raw = append(raw[:0], 'u')
		digits := strconv.AppendInt(db[:0], int64(i), 10)
		for range g.width - len(digits) {
			raw = append(raw, '0')
		}
		raw = append(raw, digits...)
		g.low[i] = string(raw)
		if i%17 == 16 {
			raw[0] = 'U'
			g.uid[i] = string(raw)
		} else {
			g.uid[i] = g.low[i]
		}
	}

	// Breadth-first fill: person m (in index order) gets the next 2..9
	// unassigned people as direct reports. The count is nudged so that a
	// single person is never left over, which would force a manager with
	// one report (impossible to avoid only when P == 2).
	next := int32(1)
	for m := int32(0); int(next) < p; m++ {
		remaining := int32(p) - next
		k := int32(2 + r.IntN(8))
		k = min(k, remaining)
		if remaining-k == 1 {
			if k < 9 {
				k++
			} else {
				k--
			}
		}
		g.first[m], g.nrep[m] = next, k
		for j := next; j < next+k; j++ {
			g.mgr[j] = m
			g.level[j] = g.level[m] + 1
		}
		next += k
	}

	// ~10% contractors, chosen among the leaves (contractors manage no one).
	var leaves []int32
	for i := range int32(p) {
		if g.nrep[i] == 0 && i != 0 {
			leaves = append(leaves, i)
		} else if g.nrep[i] > 0 {
			g.allMgrs = append(g.allMgrs, i)
		}
	}
	nc := min((p+5)/10, len(leaves))
	r.Shuffle(len(leaves), func(a, b int) { leaves[a], leaves[b] = leaves[b], leaves[a] })
	g.contractors = slices.Clone(leaves[:nc])
	slices.Sort(g.contractors)
	for _, c := range g.contractors {
		g.contractor[c] = true
	}

	// Employee subtree sizes, bottom-up (a manager's index is always lower
	// than its reports').
	for i := p - 1; i >= 0; i-- {
		if !g.contractor[i] {
			g.subEmp[i]++
		}
		if i > 0 {
			g.subEmp[g.mgr[i]] += g.subEmp[i]
		}
	}

	// Teams are managed by line managers, not by the CEO or VPs, which
	// would turn a team into a whole division.
	for _, m := range g.allMgrs {
		if g.level[m] >= 2 {
			g.teamMgrs = append(g.teamMgrs, m)
		}
	}
	if len(g.teamMgrs) == 0 {
		g.teamMgrs = g.allMgrs
	}
}

func (g *gen) randMgr(r *rand.Rand) int32 { return g.teamMgrs[r.IntN(len(g.teamMgrs))] }

func (g *gen) randPerson(r *rand.Rand) int32 { return int32(r.IntN(g.p)) }

// ---------------------------------------------------------------------------
// names

var (
	adjectives = []string{
		"amber", "arctic", "azure", "bold", "brave", "bright", "calm", "cobalt",
		"coral", "crimson", "swift", "dusty", "eager", "electric", "emerald", "fuzzy",
		"gentle", "golden", "grumpy", "hidden", "indigo", "jolly", "lucky", "lunar",
		"mellow", "misty", "nimble", "quiet", "rapid", "rusty", "silver", "solar",
	}
	nouns = []string{
		"badger", "beacon", "comet", "condor", "falcon", "ferret", "gecko", "harbor",
		"heron", "koala", "lynx", "marmot", "meadow", "otter", "panda", "pelican",
		"puffin", "quokka", "raven", "reef", "river", "robin", "salmon", "sparrow",
		"summit", "tiger", "tundra", "walrus", "willow", "wombat", "yak", "zebra",
	}
	systems = []string{
		"aws", "gcp", "azure", "vault", "jenkins", "grafana", "datadog", "pagerduty",
		"okta", "splunk", "kafka", "mysql", "redis", "k8s", "consul", "sentry",
		"jira", "salesforce", "zendesk", "tableau", "snowflake", "looker", "s3", "bastion",
	}
	envs  = []string{"prod", "staging", "dev", "sandbox", "eu", "us", "gov", "shared"}
	roles = []string{"admins", "readers", "writers", "deployers", "oncall", "auditors", "owners", "operators"}

	firstNames = []string{
		"Ada", "Alan", "Alex", "Ana", "Ben", "Chen", "Dana", "Eli", "Emma", "Farah",
		"Grace", "Hana", "Ivan", "Jade", "Kai", "Lena", "Leo", "Maya", "Nia", "Omar",
		"Priya", "Quinn", "Ravi", "Sara", "Tom", "Uma", "Vic", "Wen", "Yara", "Zoe",
	}
	lastNames = []string{
		"Adams", "Baker", "Costa", "Diaz", "Evans", "Fischer", "Garcia", "Hughes",
		"Ito", "Jensen", "Kim", "Lopez", "Moreau", "Nakamura", "Okafor", "Patel",
		"Quist", "Rossi", "Silva", "Tanaka", "Umar", "Varga", "Wong", "Xu", "Young", "Zhou",
	}
)

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// nameGroups decides every cn up front, because files reference groups
// generated later in the same pass (GitHub/AAD reference any team or app).
// cns carry their generation index, so they are unique, and the words make
// byte order differ from generation order, as in a real repo.
func (g *gen) nameGroups() {
	r := g.stream(2)
	nt, na, ngh, naad := g.p/6, g.p/2, g.p/3, g.p/3
	var nb []byte
	name := func(a, b, c string, i int) string {
		nb = nb[:0]
		for _, part := range [3]string{a, b, c} {
			if part != "" {
				nb = append(append(nb, part...), '-')
			}
		}
		return string(strconv.AppendInt(nb, int64(i), 10))
	}
	g.teams = make([]string, nt)
	for i := range g.teams {
		g.teams[i] = name(pick(r, adjectives), pick(r, nouns), "", i)
	}
	g.apps = make([]string, na)
	for i := range g.apps {
		g.apps[i] = name(pick(r, systems), pick(r, envs), pick(r, roles), i)
	}
	g.ghTeams = make([]string, ngh)
	for i := range g.ghTeams {
		g.ghTeams[i] = name("gh", pick(r, adjectives), pick(r, nouns), i)
	}
	g.aadGroups = make([]string, naad)
	for i := range g.aadGroups {
		g.aadGroups[i] = name("sg", pick(r, systems), pick(r, roles), i)
	}
}

// ---------------------------------------------------------------------------
// top-level files

func (g *gen) writeConfig() {
	st := g.begin()
	g.s("---\n# Generated by internal/synth (seed ")
	g.buf = strconv.AppendInt(g.buf, g.opt.Seed, 10)
	g.s(", ")
	g.int(g.p)
	g.s(" people, now ")
	g.buf = g.now.AppendFormat(g.buf, dateLayout)
	g.s(`). Do not edit.
# The people filename is resolved against the working directory: run from here.
configuration_path: ./ldap-config
backends:
  synth-ldap:
    type: ldap
    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: uid=entitlements,ou=Service_Accounts,dc=example,dc=net
    ldap_bindpw: '<%= ENV["LDAP_BINDPW"] %>'
    person_dn_format: uid=%KEY%,ou=People,dc=example,dc=net
groups:
  pizza_teams:
    backend: synth-ldap
    base: ou=Pizza_Teams,ou=Groups,dc=example,dc=net
  entitlements/apps:
    backend: synth-ldap
    base: ou=Apps,ou=Entitlements,ou=Groups,dc=example,dc=net
  internal:
    type: dummy
    dir: ../internal
  github/teams:
    type: github_team
    org: synth-org
    token: '<%= ENV["GITHUB_TOKEN"] %>'
    base: ou=synth-org,ou=GitHub,dc=example,dc=net
  aad/groups:
    type: aad
    tenant_id: '<%= ENV["AZURE_TENANT_ID"] %>'
    base: ou=aad,dc=example,dc=net
    user_principal_format: "%KEY%@corp.example.com"
extras:
  orgchart:
    manager_map_file: ./manager-map.yaml
filters:
  contractors:
    class: Entitlements::Data::Groups::Calculated::Filters::MemberOfGroup
    config:
      group: internal/contractors
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`)
	g.end("config.yaml", st)
}

func (g *gen) writePeople() {
	r := g.stream(3)
	st := g.begin()
	g.s("---\n")
	for i := range g.p {
		g.s(g.uid[i])
		g.s(":\n  cn: ")
		g.s(pick(r, firstNames))
		g.b(' ')
		g.s(pick(r, lastNames))
		g.s("\n  manager: ")
		g.s(g.uid[g.mgr[i]])
		g.b('\n')
	}
	g.end("people.yaml", st)
}

func (g *gen) writeManagerMap() {
	st := g.begin()
	g.s("---\n")
	for i := range g.p {
		g.s(g.low[i])
		g.s(":\n  manager: ")
		g.s(g.low[g.mgr[i]])
		if g.contractor[i] {
			g.s("\n  status:\n  - contractor\n")
		} else {
			g.s("\n  status:\n  - employee\n")
		}
	}
	g.end("manager-map.yaml", st)
}

// writeContractors writes the dummy-OU group that is the population of the
// contractors filter. A dummy OU is only evaluated when referenced, so it
// needs no "contractors = all" of its own.
func (g *gen) writeContractors() {
	st := g.begin()
	g.s("description = Listing of contractors\n")
	if len(g.contractors) == 0 {
		g.s("metadata_no_conditions_ok = true\n")
	}
	for _, c := range g.contractors {
		g.s("username = ")
		g.s(g.uid[c])
		g.b('\n')
	}
	g.end("internal/contractors.txt", st)
}

func (g *gen) writeEveryone() {
	st := g.begin()
	g.s("# Org-wide group: the CEO and everyone who reports to them.\n")
	g.s("description = Everyone at the company, employees and contractors\n")
	g.s("management = ")
	g.s(g.uid[0])
	g.s("\ncontractors = all\n")
	g.end("ldap-config/pizza_teams/everyone.txt", st)
	g.stats.Teams++
}

// ---------------------------------------------------------------------------
// pizza_teams

// usernameLines appends n "username = " lines for a team: the members are
// a manager's direct-report block (contiguous indices, so a team is a real
// org neighbourhood) topped up with people from anywhere. A few lines carry
// an expiration; the first never does, so the file always keeps a live
// "=" rule.
func (g *gen) usernameLines(r *rand.Rand, n int) {
	m := g.allMgrs[r.IntN(len(g.allMgrs))]
	base, k := g.first[m], int(g.nrep[m])
	off := r.IntN(k)
	for j := range n {
		var who int32
		if j < k {
			who = base + int32((off+j)%k)
		} else {
			who = g.randPerson(r)
		}
		g.s("username = ")
		g.person(r, who)
		if j > 0 && r.IntN(16) == 0 {
			g.s("; expiration = ")
			g.date(expDays(r, r.IntN(2) == 0))
		} else if r.IntN(40) == 0 {
			g.s(" # on-call rotation")
		}
		g.b('\n')
	}
}

func (g *gen) writeTeams() {
	r := g.stream(4)
	path := make([]byte, 0, 64)
	for t, cn := range g.teams {
		st := g.begin()
		if r.IntN(8) == 0 {
			g.s("# Owned by ")
			g.s(cn)
			g.s(". Changes need a review from the team lead.\n\n")
		}
		g.s("description = The ")
		g.s(cn)
		g.s(" pizza team (")
		g.s(pick(r, systems))
		g.s(" on-call, ")
		g.int(t%7 + 2)
		g.s(" pizzas)\n")
		if r.IntN(10) < 3 {
			g.s("management = ")
			g.person(r, g.randMgr(r))
			g.b('\n')
		} else {
			g.usernameLines(r, 2+r.IntN(11))
		}
		if t > 0 && r.IntN(4) == 0 {
			for range 1 + r.IntN(2) {
				g.s("group = " + OUTeams + "/")
				g.s(g.teams[r.IntN(t)])
				g.b('\n')
			}
		}
		if r.IntN(10) == 0 {
			g.s("contractors = all\n")
		}
		if r.IntN(3) == 0 {
			g.s("metadata_slack_channel = ")
			g.s(cn)
			g.b('\n')
		}
		path = append(append(path[:0], "ldap-config/"+OUTeams+"/"...), cn...)
		path = append(path, ".txt"...)
		g.end(string(path), st)
		g.stats.Teams++
	}
}

// ---------------------------------------------------------------------------
// entitlements/apps

const (
	kUser uint8 = iota
	kTeam
	kApp
	kMgmt
	kAndNot // YAML only: and(group: team, not(username: user))
)

type rule struct {
	kind   uint8
	target int32 // person, team or app index
	extra  int32 // kAndNot: the excluded person
	exp    int32 // days from now; 0 = no expiration
}

type app struct {
	aff, mand, neg []rule
	contractors    int8    // 0 = no setting, 1 = all, 2 = list
	cList          []int32 // contractors allowed by name
	cExp           int32   // expiration (days) on the last named contractor, 0 = none
	owner          int32   // team index for metadata owner, -1 = none
	tier           int
	fileExp        int32 // whole-file expiration (days), 0 = none
}

// pickRule draws one rule for app a (generation index) from the
// production-like mix: 40% username, 35% team, 15% earlier app, 10%
// management. Kinds whose target set is empty fall back to username.
func (g *gen) pickRule(r *rand.Rand, a int) rule {
	x := r.IntN(100)
	switch {
	case x < 35 && len(g.teams) > 0:
		return rule{kind: kTeam, target: int32(r.IntN(len(g.teams)))}
	case x >= 35 && x < 50 && a > 0:
		return rule{kind: kApp, target: int32(r.IntN(a))}
	case x >= 50 && x < 60:
		return rule{kind: kMgmt, target: g.randMgr(r)}
	default:
		return rule{kind: kUser, target: g.randPerson(r)}
	}
}

func (g *gen) makeApp(r *rand.Rand, a int, yaml bool, ap *app) {
	ap.aff, ap.mand, ap.neg, ap.cList = ap.aff[:0], ap.mand[:0], ap.neg[:0], ap.cList[:0]
	n := 1 + r.IntN(6)
	for i := range n {
		ru := g.pickRule(r, a)
		if yaml && i > 0 && len(g.teams) > 0 && r.IntN(10) == 0 {
			ru = rule{kind: kAndNot, target: int32(r.IntN(len(g.teams))), extra: g.randPerson(r)}
		}
		// Per-rule expirations on all but the first rule, which keeps
		// every file with a live affirmative rule.
		if i > 0 && r.IntN(8) == 0 {
			ru.exp = int32(expDays(r, r.IntN(2) == 0))
		}
		ap.aff = append(ap.aff, ru)
	}
	if r.IntN(7) == 0 {
		for range 1 + r.IntN(2) {
			var ru rule
			if len(g.teams) > 0 && r.IntN(3) == 0 {
				ru = rule{kind: kTeam, target: int32(r.IntN(len(g.teams)))}
			} else {
				ru = rule{kind: kUser, target: g.randPerson(r)}
			}
			if !yaml && r.IntN(6) == 0 { // YAML cannot expire inside not
				ru.exp = int32(expDays(r, r.IntN(2) == 0))
			}
			ap.neg = append(ap.neg, ru)
		}
	}
	if r.IntN(20) == 0 {
		if len(g.teams) > 0 && r.IntN(2) == 0 {
			ap.mand = append(ap.mand, rule{kind: kTeam, target: int32(r.IntN(len(g.teams)))})
		} else {
			ap.mand = append(ap.mand, rule{kind: kMgmt, target: g.randMgr(r)})
		}
	}
	ap.contractors, ap.cExp = 0, 0
	switch x := r.IntN(100); {
	case x < 10:
		ap.contractors = 1
	case x < 15 && len(g.contractors) > 0:
		ap.contractors = 2
		for range 1 + r.IntN(2) {
			ap.cList = append(ap.cList, g.contractors[r.IntN(len(g.contractors))])
		}
		if r.IntN(4) == 0 {
			ap.cExp = int32(expDays(r, r.IntN(3) == 0))
		}
	}
	ap.owner = -1
	if len(g.teams) > 0 && r.IntN(2) == 0 {
		ap.owner = int32(r.IntN(len(g.teams)))
	}
	ap.tier = 0
	if r.IntN(4) == 0 {
		ap.tier = 1 + r.IntN(3)
	}
	ap.fileExp = 0
	if r.IntN(33) == 0 {
		ap.fileExp = int32(expDays(r, r.IntN(5) == 0)) // mostly future
	}
}

// value appends the rule's value (uid or ou/cn reference).
func (g *gen) value(r *rand.Rand, ru rule) {
	switch ru.kind {
	case kUser, kMgmt:
		g.person(r, ru.target)
	case kTeam:
		g.s(OUTeams + "/")
		g.s(g.teams[ru.target])
	case kApp:
		g.s(OUApps + "/")
		g.s(g.apps[ru.target])
	}
}

func methodName(k uint8) string {
	switch k {
	case kUser:
		return "username"
	case kMgmt:
		return "management"
	default:
		return "group"
	}
}

func (g *gen) txtRule(r *rand.Rand, op string, ru rule) {
	g.s(methodName(ru.kind))
	g.s(op)
	g.value(r, ru)
	if ru.exp != 0 {
		g.s("; expiration = ")
		g.date(int(ru.exp))
	}
	g.b('\n')
}

func (g *gen) appDescription(r *rand.Rand, cn string) {
	g.s("Access to ")
	g.s(cn)
	if r.IntN(3) == 0 {
		g.s(" (requested via the access portal)")
	}
}

func (g *gen) writeAppTxt(r *rand.Rand, cn string, ap *app) {
	if r.IntN(10) == 0 {
		g.s("# Break-glass access is handled elsewhere.\n")
	}
	if r.IntN(10) != 0 {
		g.s("description = ")
		g.appDescription(r, cn)
		g.b('\n')
	}
	for _, ru := range ap.aff {
		g.txtRule(r, " = ", ru)
	}
	for _, ru := range ap.mand {
		g.txtRule(r, " &= ", ru)
	}
	for _, ru := range ap.neg {
		g.txtRule(r, " != ", ru)
	}
	switch ap.contractors {
	case 1:
		g.s("contractors = all\n")
	case 2:
		for i, c := range ap.cList {
			g.s("contractors = ")
			g.s(g.uid[c])
			if i == len(ap.cList)-1 && ap.cExp != 0 {
				g.s("; expiration = ")
				g.date(int(ap.cExp))
			}
			g.b('\n')
		}
	}
	if ap.owner >= 0 {
		g.s("metadata_owner = ")
		g.s(g.teams[ap.owner])
		g.b('\n')
	}
	if ap.tier > 0 {
		g.s("metadata_tier = ")
		g.int(ap.tier)
		g.b('\n')
	}
	if ap.fileExp != 0 {
		g.s("expiration = ")
		g.date(int(ap.fileExp))
		g.b('\n')
	}
}

// yamlRule appends one rule as a YAML sequence item at the given indent.
// Expirations are always quoted: a plain date is a Date object in Ruby's
// YAML and crashes the per-rule expiration code.
func (g *gen) yamlRule(r *rand.Rand, indent string, ru rule) {
	g.s(indent)
	g.s("- ")
	if ru.kind == kAndNot {
		g.s("and:\n")
		g.s(indent)
		g.s("  - group: " + OUTeams + "/")
		g.s(g.teams[ru.target])
		g.b('\n')
		g.s(indent)
		g.s("  - not:\n")
		g.s(indent)
		g.s("      username: ")
		g.person(r, ru.extra)
		g.b('\n')
	} else {
		g.s(methodName(ru.kind))
		g.s(": ")
		g.value(r, ru)
		g.b('\n')
	}
	if ru.exp != 0 {
		g.s(indent)
		g.s("  expiration: \"")
		g.date(int(ru.exp))
		g.s("\"\n")
	}
}

func (g *gen) writeAppYAML(r *rand.Rand, cn string, ap *app) {
	g.s("---\n")
	if r.IntN(10) != 0 {
		g.s("description: ")
		g.appDescription(r, cn)
		g.b('\n')
	}
	g.s("rules:\n")
	if len(ap.mand) == 0 && len(ap.neg) == 0 {
		g.s("  or:\n")
		for _, ru := range ap.aff {
			g.yamlRule(r, "  ", ru)
		}
	} else {
		// and( or(affirmative), or(mandatory), not(or(negative)) )
		g.s("  and:\n  - or:\n")
		for _, ru := range ap.aff {
			g.yamlRule(r, "    ", ru)
		}
		if len(ap.mand) > 0 {
			g.s("  - or:\n")
			for _, ru := range ap.mand {
				g.yamlRule(r, "    ", ru)
			}
		}
		if len(ap.neg) > 0 {
			g.s("  - not:\n      or:\n")
			for _, ru := range ap.neg {
				g.yamlRule(r, "      ", ru)
			}
		}
	}
	switch ap.contractors {
	case 1:
		g.s("filters:\n  contractors: all\n")
	case 2:
		g.s("filters:\n  contractors:\n")
		for i, c := range ap.cList {
			if i == len(ap.cList)-1 && ap.cExp != 0 {
				g.s("  - key: ")
				g.s(g.uid[c])
				g.s("\n    expiration: \"")
				g.date(int(ap.cExp))
				g.s("\"\n")
			} else {
				g.s("  - ")
				g.s(g.uid[c])
				g.b('\n')
			}
		}
	}
	if ap.owner >= 0 || ap.tier > 0 {
		g.s("metadata:\n")
		if ap.owner >= 0 {
			g.s("  owner: ")
			g.s(g.teams[ap.owner])
			g.b('\n')
		}
		if ap.tier > 0 {
			g.s("  tier: ")
			g.int(ap.tier)
			g.b('\n')
		}
	}
	if ap.fileExp != 0 {
		g.s("expiration: \"")
		g.date(int(ap.fileExp))
		g.s("\"\n")
	}
}

func (g *gen) writeApps() {
	r := g.stream(5)
	var ap app
	path := make([]byte, 0, 96)
	for a, cn := range g.apps {
		yaml := r.IntN(10) < 4
		g.makeApp(r, a, yaml, &ap)
		st := g.begin()
		path = append(append(path[:0], "ldap-config/"+OUApps+"/"...), cn...)
		if yaml {
			g.writeAppYAML(r, cn, &ap)
			path = append(path, ".yaml"...)
			g.stats.YAMLApps++
		} else {
			g.writeAppTxt(r, cn, &ap)
			path = append(path, ".txt"...)
		}
		g.end(string(path), st)
		g.stats.Apps++
	}
}

// ---------------------------------------------------------------------------
// github/teams and aad/groups

// groupRef appends a "group = " line naming a random team (70%) or app.
func (g *gen) groupRef(r *rand.Rand) {
	if len(g.teams) > 0 && (r.IntN(10) < 7 || len(g.apps) == 0) {
		g.s("group = " + OUTeams + "/")
		g.s(g.teams[r.IntN(len(g.teams))])
	} else {
		g.s("group = " + OUApps + "/")
		g.s(g.apps[r.IntN(len(g.apps))])
	}
	g.b('\n')
}

func (g *gen) writeGitHub() {
	r := g.stream(6)
	path := make([]byte, 0, 96)
	for _, cn := range g.ghTeams {
		st := g.begin()
		g.s("description = GitHub team ")
		g.s(cn)
		g.b('\n')
		for range 1 + r.IntN(3) {
			g.groupRef(r)
		}
		if r.IntN(5) == 0 {
			g.s("username = ")
			g.person(r, g.randPerson(r))
			g.b('\n')
		}
		if r.IntN(10) == 0 {
			g.s("contractors = all\n")
		}
		if r.IntN(3) == 0 {
			g.s("metadata_team_maintainers = ")
			g.s(g.uid[g.randPerson(r)])
			if r.IntN(4) == 0 {
				g.b(',')
				g.s(g.uid[g.randPerson(r)])
			}
			g.b('\n')
		}
		path = append(append(path[:0], "ldap-config/"+OUGitHub+"/"...), cn...)
		path = append(path, ".txt"...)
		g.end(string(path), st)
		g.stats.GitHubTeams++
	}
}

// largeAADPlan picks, for each large AAD group, a set of VPs whose
// disjoint subtrees together hold at least largeTarget employees. Group j
// starts at the j-th biggest non-CEO manager, so the groups differ. If the
// non-CEO managers cannot reach the target, the CEO is used.
func (g *gen) largeAADPlan(n int) [][]int32 {
	cands := make([]int32, 0, len(g.allMgrs))
	for _, m := range g.allMgrs {
		if m != 0 && g.level[m] <= 3 {
			cands = append(cands, m)
		}
	}
	slices.SortStableFunc(cands, func(a, b int32) int { return int(g.subEmp[b] - g.subEmp[a]) })
	cands = cands[:min(len(cands), 64)]
	isUnder := func(x, anc int32) bool {
		for x != 0 {
			if x == anc {
				return true
			}
			x = g.mgr[x]
		}
		return anc == 0
	}
	plans := make([][]int32, n)
	for j := range n {
		var picked []int32
		total := int32(0)
		for k := 0; k < len(cands) && total < largeTarget; k++ {
			c := cands[(j+k)%len(cands)]
			overlap := false
			for _, p := range picked {
				if isUnder(c, p) || isUnder(p, c) {
					overlap = true
					break
				}
			}
			if !overlap {
				picked = append(picked, c)
				total += g.subEmp[c]
			}
		}
		if total < largeTarget || len(picked) == 0 {
			picked = []int32{0}
		}
		plans[j] = picked
	}
	return plans
}

func (g *gen) writeAAD() {
	r := g.stream(7)
	path := make([]byte, 0, 96)
	// A handful of division-wide groups: 3 plus one per 25k people, only
	// once the org is big enough for them to mean "large".
	nLarge := 0
	if g.p >= 1200 {
		nLarge = min(3+g.p/25000, len(g.aadGroups))
	}
	plans := g.largeAADPlan(nLarge)
	for i, cn := range g.aadGroups {
		st := g.begin()
		if i < nLarge {
			g.s("# Division-wide group; expected to exceed the Graph page size.\n")
			g.s("description = Division group ")
			g.s(cn)
			g.b('\n')
			for _, vp := range plans[i] {
				g.s("management = ")
				g.s(g.uid[vp])
				g.b('\n')
			}
			g.s("metadata_division = true\n")
			g.stats.LargeAADGroups++
		} else {
			g.s("description = Azure AD group ")
			g.s(cn)
			g.b('\n')
			for range 1 + r.IntN(3) {
				g.groupRef(r)
			}
			switch x := r.IntN(10); {
			case x == 0:
				g.s("management = ")
				g.person(r, g.randMgr(r))
				g.b('\n')
			case x <= 2:
				g.s("username = ")
				g.person(r, g.randPerson(r))
				if r.IntN(4) == 0 {
					g.s("; expiration = ")
					g.date(expDays(r, r.IntN(2) == 0))
				}
				g.b('\n')
			}
			if r.IntN(12) == 0 {
				g.s("username != ")
				g.person(r, g.randPerson(r))
				g.b('\n')
			}
			if r.IntN(10) == 0 {
				g.s("contractors = all\n")
			}
		}
		path = append(append(path[:0], "ldap-config/"+OUAAD+"/"...), cn...)
		path = append(path, ".txt"...)
		g.end(string(path), st)
		g.stats.AADGroups++
	}
}
