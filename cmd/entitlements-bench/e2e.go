package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
	"github.com/entitlements-go/entitlements/validate"
)

// The e2e benchmark measures what users of the reference feel: the wall time of a no-op
// deployment plan against every provider, over a network with latency. It generates the
// synthetic repo, starts the back ends on this machine (slapd through internal/testldap,
// fakegithub, fakegraph), applies once (with the GitRepo audit log on a local bare repo),
// then plans three times as `entitlements plan` does (runPlan: the CLI's library calls, in
// process): cold (--full), with the audit log checkout as the predictive state, and after a
// small change set. Nothing here is a benchmark-only read path.

// benchStats are a fake back end's counters.
type benchStats struct{ requests, connections, memberReads int64 }

// benchBackend is a fake back end the benchmark controls.
type benchBackend interface {
	setLatency(time.Duration)
	stats() benchStats
	resetStats()
	close()
}

// Pool sizes of the providers' defaults, for the connections-per-host check.
const (
	benchGitHubPool = 8
	benchGraphPool  = 4
	benchLDAPPool   = 2
)

type e2eOptions struct {
	people  int
	seed    int64
	latency time.Duration
	changes int
	dir     string
	profile string // directory for one CPU profile per plan run
	log     io.Writer
}

// e2eTarget is one target's figures in one run. Providers that share a client (LDAP per
// server, AAD per registry) report shared totals; Shared says so.
type e2eTarget struct {
	Type           string `json:"type"`
	WallMS         int64  `json:"wall_ms"`
	Requests       int64  `json:"requests"`
	Connections    int64  `json:"connections"`
	LDAPSearches   int64  `json:"ldap_searches"`
	PredictiveHits int64  `json:"predictive_hits"`
	MemberReads    int64  `json:"member_reads"`
	Changes        int64  `json:"changes"`
	Shared         bool   `json:"shared_counters,omitempty"`
	Error          string `json:"error,omitempty"`
}

type e2eHost struct {
	Connections int64 `json:"connections"`
	Pool        int64 `json:"pool"`
}

// e2eRun is one plan's figures: totals over all targets, then per target and per host.
type e2eRun struct {
	WallMS         int64                 `json:"wall_ms"`
	CalcMS         int64                 `json:"calculation_ms"`
	Requests       int64                 `json:"requests"`
	Connections    int64                 `json:"connections"`
	LDAPSearches   int64                 `json:"ldap_searches"`
	PredictiveHits int64                 `json:"predictive_hits"`
	MemberReads    int64                 `json:"member_reads"`
	Changes        int64                 `json:"changes"`
	Targets        map[string]*e2eTarget `json:"targets"`
	Hosts          map[string]e2eHost    `json:"hosts"`
}

type e2eResult struct {
	People    int               `json:"people"`
	Groups    int               `json:"groups"`
	LatencyMS float64           `json:"latency_ms"`
	Skipped   map[string]string `json:"skipped,omitempty"`
	ApplyMS   int64             `json:"apply_ms"`
	Cold      *e2eRun           `json:"cold"`
	Pred      *e2eRun           `json:"predictive"`
	Change    *e2eRun           `json:"change"`
	Notes     []string          `json:"notes"`
}

func cmdE2E(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("entitlements-bench --e2e", flag.ContinueOnError)
	fs.Bool("e2e", true, "end-to-end plan benchmark against local back ends")
	n := fs.Int("people", 5000, "number of people in the generated repo")
	latency := fs.Duration("latency", 50*time.Millisecond, "latency added to every request to the fake GitHub and Graph servers")
	format := fs.String("format", "text", "output format: text or json")
	dir := fs.String("dir", "", "work here and keep the repo, audit log and server files (default: a temporary directory, removed after)")
	seed := fs.Int64("seed", 1, "generator seed")
	changes := fs.Int("changes", 3, "groups changed per provider before the change run")
	profile := fs.String("cpuprofile-dir", "", "write a CPU profile of each plan run (cold.pprof, predictive.pprof, change.pprof) to this directory")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "entitlements-bench: unknown --format %q (text, json)\n", *format)
		return exitUsage
	}
	if *n < 10 {
		fmt.Fprintln(stderr, "entitlements-bench: --people must be at least 10")
		return exitUsage
	}
	work := *dir
	if work == "" {
		tmp, err := os.MkdirTemp("", "entitlements-e2e-")
		if err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
			return exitError
		}
		defer os.RemoveAll(tmp)
		work = tmp
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
		return exitError
	}
	res, err := runE2E(ctx, e2eOptions{people: *n, seed: *seed, latency: *latency, changes: *changes, dir: work, profile: *profile, log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
		return exitError
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		writeE2EText(stdout, res)
	}
	return exitOK
}

func runE2E(ctx context.Context, o e2eOptions) (*e2eResult, error) {
	res := &e2eResult{People: o.people, LatencyMS: float64(o.latency) / float64(time.Millisecond), Skipped: map[string]string{}}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("the e2e benchmark needs git: the predictive state is the GitRepo audit log the apply writes")
	}
	repoDir := filepath.Join(o.dir, "repo")
	t0 := time.Now()
	st, err := synth.Write(repoDir, synth.Options{People: o.people, Seed: o.seed})
	if err != nil {
		return nil, err
	}
	res.Groups = st.Teams + st.Apps + st.GitHubTeams + st.AADGroups + 2
	uids, err := synthUIDs(filepath.Join(repoDir, "people.yaml"))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.log, "generated %d people, %d files (%s)\n", st.People, st.Files, time.Since(t0).Round(time.Millisecond))

	gh := fakegithub.New(fakegithub.Options{AutoAccept: true, RateLimit: 1 << 30})
	defer gh.Close()
	if err := seedSynthOrg(gh, uids, repoDir); err != nil {
		return nil, err
	}

	// LDAP: a real slapd, when installed.
	ldapSrv, skip, err := startSlapd(o.dir, e2eLDIF)
	if err != nil {
		return nil, err
	}
	if ldapSrv != nil {
		defer ldapSrv.Stop()
	}
	if skip != "" {
		res.Skipped["ldap"] = skip
		fmt.Fprintf(o.log, "LDAP SKIPPED: %s\n", skip)
	}

	// Azure AD: fakegraph, in binaries built with -tags aad.
	upns := make([]string, len(uids))
	for i, u := range uids {
		upns[i] = u + "@corp.example.com"
	}
	aadBackend, graphURL, aadOpen, aadSkip := startBenchAAD(upns, benchGraphPool)
	if aadSkip != "" {
		res.Skipped["aad"] = aadSkip
		fmt.Fprintf(o.log, "AZURE AD SKIPPED: %s\n", aadSkip)
	} else {
		defer aadBackend.close()
	}

	// The audit log: a local bare repo; its checkout is the predictive state.
	remote := filepath.Join(o.dir, "audit.git")
	checkout := filepath.Join(o.dir, "audit-checkout")
	if out, err := exec.CommandContext(ctx, "git", "init", "--quiet", "--bare", remote).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init: %v: %s", err, out)
	}
	cfgPath := filepath.Join(repoDir, "config.yaml")
	ldapURL := ""
	if ldapSrv != nil {
		ldapURL = ldapSrv.URL
	}
	if err := rewriteSynthConfig(cfgPath, ldapURL, gh.URL(), graphURL, remote, checkout); err != nil {
		return nil, err
	}
	// The people file name is relative to the working directory (as in the reference).
	wd, _ := os.Getwd()
	if err := os.Chdir(repoDir); err != nil {
		return nil, err
	}
	defer os.Chdir(wd)

	// --now as the CLI reads it: the start of the day, UTC.
	now, err := validate.ParseNow(synth.DefaultNow.Format("2006-01-02"))
	if err != nil {
		return nil, err
	}
	// Apply once, without latency and with more writes in flight: setting the state up is
	// not what is measured.
	// (issue 25: the GitHub write scheduler is off here; the fake does not enforce the limits).
	t1 := time.Now()
	out, _, err := runPlan(ctx, planRun{config: cfgPath, now: now, apply: true, aad: aadOpen,
		github: func(g *github.Options) { g.WriteConcurrency, g.NoWritePacing = 8, true }})
	if err != nil {
		return nil, fmt.Errorf("the setup apply failed: %w", err)
	}
	res.ApplyMS = time.Since(t1).Milliseconds()
	fmt.Fprintf(o.log, "applied the initial state in %s\n", time.Since(t1).Round(time.Millisecond))
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "applied in") || strings.HasPrefix(l, "Apply:") || strings.HasPrefix(l, "Plan:") {
			fmt.Fprintf(o.log, "  %s\n", l)
		}
	}

	backends := map[string]benchBackend{"github": ghBackend{gh}}
	if aadBackend != nil {
		backends["graph"] = aadBackend
	}
	for _, b := range backends {
		b.setLatency(o.latency)
	}
	plan := func(name string, full bool) (*e2eRun, error) {
		for _, b := range backends {
			b.resetStats()
		}
		run := planRun{config: cfgPath, now: now, aad: aadOpen}
		if o.profile != "" {
			run.cpuprofile = filepath.Join(o.profile, name+".pprof")
		}
		if !full {
			run.predictiveDir = checkout
		}
		start := time.Now()
		out, pred, err := runPlan(ctx, run)
		wall := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("%s plan failed: %w", name, err)
		}
		r, err := e2eFigures(out, wall, backends, pred)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.log, "%s plan: %s, %d change(s)\n", name, wall.Round(time.Millisecond), r.Changes)
		return r, nil
	}
	if res.Cold, err = plan("cold", true); err != nil {
		return nil, err
	}
	if res.Pred, err = plan("predictive", false); err != nil {
		return nil, err
	}
	changed, err := changeSet(repoDir, uids, o.changes, res.Skipped)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.log, "changed %d group file(s)\n", changed)
	if res.Change, err = plan("change", false); err != nil {
		return nil, err
	}
	res.Notes = []string{
		"wall_ms is the whole CLI plan: loading the predictive state, calculation and every target's read",
		"requests = HTTP requests to the fake GitHub and Graph servers + LDAP searches; connections = new TCP connections they accepted + LDAP connections",
		"member_reads = member lists read through the API: GitHub teams (one per team asked for) and org role lists, Graph member-list requests; LDAP reads whole OUs in ldap_searches and never uses the predictive state (spec providers §2.3)",
		"latency is injected on the GitHub and Graph requests only; slapd answers at loopback speed",
		"LDAP (per server) and AAD (per registry) targets report their client's shared counters",
	}
	return res, nil
}

// e2eLDIF are the OUs of the synthetic repo's LDAP groups, which the config does not create.
const e2eLDIF = "dn: ou=Pizza_Teams,ou=Groups,dc=example,dc=net\nobjectClass: organizationalUnit\nou: Pizza_Teams\n\n" +
	"dn: ou=Entitlements,ou=Groups,dc=example,dc=net\nobjectClass: organizationalUnit\nou: Entitlements\n\n" +
	"dn: ou=Apps,ou=Entitlements,ou=Groups,dc=example,dc=net\nobjectClass: organizationalUnit\nou: Apps\n"

// ghBackend adapts fakegithub to benchBackend.
type ghBackend struct{ s *fakegithub.Server }

func (g ghBackend) setLatency(d time.Duration) { g.s.SetLatency(d) }
func (g ghBackend) resetStats()                { g.s.ResetStats() }
func (g ghBackend) close()                     { g.s.Close() }
func (g ghBackend) stats() benchStats {
	st := g.s.Stats()
	return benchStats{requests: int64(st.REST + st.GraphQL), connections: int64(st.Connections), memberReads: int64(st.TeamAliases)}
}

// e2eFigures turns the plan's JSON output and the back ends' counters into one run's figures.
func e2eFigures(out []byte, wall time.Duration, backends map[string]benchBackend, pred *cache.Predictive) (*e2eRun, error) {
	// The keys of review.WritePlanJSON that the figures need.
	var doc struct {
		Plan struct {
			Targets []struct {
				OU      string            `json:"ou"`
				Type    string            `json:"type"`
				Error   string            `json:"error"`
				Changes []json.RawMessage `json:"changes"`
			} `json:"targets"`
		} `json:"plan"`
		Timings struct {
			CalcMS  int64 `json:"calculation_ms"`
			Targets map[string]struct {
				ReadMS   int64            `json:"read_ms"`
				Counters map[string]int64 `json:"counters"`
			} `json:"targets"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("reading the plan output: %w", err)
	}
	r := &e2eRun{WallMS: wall.Milliseconds(), CalcMS: doc.Timings.CalcMS, Targets: map[string]*e2eTarget{}, Hosts: map[string]e2eHost{}}
	var ldapSearches, ldapConns int64
	for _, t := range doc.Plan.Targets {
		tt := doc.Timings.Targets[t.OU]
		c := tt.Counters
		et := &e2eTarget{Type: t.Type, WallMS: tt.ReadMS, Changes: int64(len(t.Changes)), Error: t.Error,
			PredictiveHits: c["predictive_hits"]}
		switch t.Type {
		case "github_org", "github_team":
			et.Requests = c["rest_requests"] + c["graphql_requests"]
			et.Connections = c["connections_opened"]
			et.MemberReads = c["member_reads"]
			r.MemberReads += et.MemberReads
		case "aad":
			et.Requests, et.Connections, et.Shared = c["requests"], c["connections_opened"], true
			if b := backends["graph"]; b != nil {
				et.MemberReads = b.stats().memberReads
			}
		case "ldap", "member_of":
			et.Requests, et.LDAPSearches, et.Connections, et.Shared = c["searches"], c["searches"], c["connections"], true
			ldapSearches, ldapConns = max(ldapSearches, c["searches"]), max(ldapConns, c["connections"])
		}
		r.Changes += et.Changes
		r.Targets[t.OU] = et
		if t.Error != "" {
			return nil, fmt.Errorf("target %s failed: %s", t.OU, t.Error)
		}
	}
	pools := map[string]int64{"github": benchGitHubPool, "graph": benchGraphPool}
	for name, b := range backends {
		s := b.stats()
		r.Requests += s.requests
		r.Connections += s.connections
		if name == "graph" {
			r.MemberReads += s.memberReads
		}
		r.Hosts[name] = e2eHost{Connections: s.connections, Pool: pools[name]}
	}
	if ldapSearches > 0 || ldapConns > 0 {
		r.Hosts["ldap"] = e2eHost{Connections: ldapConns, Pool: benchLDAPPool}
	}
	r.Requests += ldapSearches
	r.Connections += ldapConns
	r.LDAPSearches = ldapSearches
	if pred != nil {
		r.PredictiveHits = int64(pred.Hits())
	}
	return r, nil
}

// seedSynthOrg makes the synthetic repo's people users of the fake GitHub and members of its
// org synth-org (admins: the first three people), and writes the org OU's role files that
// rewriteSynthConfig configures, so that the org target is in step and teams can take their
// members at the first apply.
func seedSynthOrg(gh *fakegithub.Server, uids []string, repoDir string) error {
	gh.AddUsers(uids...)
	gh.AddOrg("synth-org")
	var admins, members strings.Builder
	admins.WriteString("contractors = all\n")
	members.WriteString("contractors = all\n")
	for i, u := range uids {
		role, b := "member", &members
		if i < 3 {
			role, b = "admin", &admins
		}
		gh.SetMember("synth-org", u, role)
		fmt.Fprintf(b, "username = %s\n", u)
	}
	orgDir := filepath.Join(repoDir, "ldap-config", "github", "org")
	if err := os.MkdirAll(orgDir, 0o755); err != nil {
		return err
	}
	for name, content := range map[string]string{"admin.txt": admins.String(), "member.txt": members.String()} {
		if err := os.WriteFile(filepath.Join(orgDir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// synthUIDs lists the people of a generated people.yaml, in file order.
func synthUIDs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == ' ' || l[0] == '-' || l[0] == '#' {
			continue
		}
		if u, ok := strings.CutSuffix(l, ":"); ok {
			out = append(out, u)
		}
	}
	return out, sc.Err()
}

// rewriteSynthConfig points the generated config at the local back ends (a skipped back end's
// OUs become dummy OUs: still calculated where referenced, never planned), adds the GitHub org
// OU and the GitRepo audit log.
func rewriteSynthConfig(path, ldapURL, ghURL, graphURL, remote, checkout string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	cfg := string(b)
	var errs []error
	repl := func(old, new string, count int) {
		if n := strings.Count(cfg, old); n != count {
			errs = append(errs, fmt.Errorf("the generated config has %d %q, expected %d (internal/synth changed?)", n, old, count))
			return
		}
		cfg = strings.ReplaceAll(cfg, old, new)
	}
	if ldapURL != "" {
		repl("ldap_uri: ldaps://ldap.example.net", "ldap_uri: "+ldapURL, 1)
		repl("ldap_binddn: uid=entitlements,ou=Service_Accounts,dc=example,dc=net", "ldap_binddn: cn=admin,dc=example,dc=net", 1)
		repl(`ldap_bindpw: '<%= ENV["LDAP_BINDPW"] %>'`, "ldap_bindpw: secret", 1)
	} else {
		repl("    backend: synth-ldap\n", "    type: dummy\n", 2)
	}
	repl(`    token: '<%= ENV["GITHUB_TOKEN"] %>'`+"\n", "    token: bench-token\n    addr: "+ghURL+"\n", 1)
	repl("\ngroups:\n", "\ngroups:\n  github/org:\n    type: github_org\n    org: synth-org\n    token: bench-token\n    addr: "+ghURL+
		"\n    base: ou=org,ou=synth-org,ou=GitHub,dc=example,dc=net\n", 1)
	if graphURL != "" {
		repl(`    tenant_id: '<%= ENV["AZURE_TENANT_ID"] %>'`+"\n", "    tenant_id: bench\n    client_id: bench\n    client_secret: bench\n    graph_url: "+graphURL+
			"\n    create_if_missing: true\n", 1)
	} else {
		repl("    type: aad\n", "    type: dummy\n", 1)
	}
	cfg += "auditors:\n  - auditor_class: GitRepo\n    checkout_directory: " + checkout +
		"\n    commit_message: entitlements-bench --e2e\n    git_name: bench\n    git_email: bench@example.invalid\n    repo_url: " + remote + "\n"
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return os.WriteFile(path, []byte(cfg), 0o644)
}

// changeSet adds one person to n group files per planned provider (GitHub teams and AAD
// groups, which no other file references, and LDAP apps, whose change may reach the groups
// that reference them) and returns how many files it changed.
func changeSet(repo string, uids []string, n int, skipped map[string]string) (int, error) {
	dirs := []string{synth.OUGitHub}
	if skipped["aad"] == "" {
		dirs = append(dirs, synth.OUAAD)
	}
	if skipped["ldap"] == "" {
		dirs = append(dirs, synth.OUApps)
	}
	changed := 0
	for _, d := range dirs {
		full := filepath.Join(repo, "ldap-config", filepath.FromSlash(d))
		ents, err := os.ReadDir(full)
		if err != nil {
			return changed, err
		}
		var txt []string
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".txt") {
				txt = append(txt, e.Name())
			}
		}
		// The last files: apps are generated in dependency order, so the last ones are the
		// least referenced.
		for k := 0; k < n && k < len(txt); k++ {
			p := filepath.Join(full, txt[len(txt)-1-k])
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return changed, err
			}
			_, err = fmt.Fprintf(f, "username = %s\n", uids[(k*7919+len(d))%len(uids)])
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return changed, err
			}
			changed++
		}
	}
	return changed, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func writeE2EText(w io.Writer, r *e2eResult) {
	fmt.Fprintf(w, "e2e plan benchmark: %d people, %d groups, latency %gms per GitHub/Graph request; setup apply %s\n",
		r.People, r.Groups, r.LatencyMS, time.Duration(r.ApplyMS)*time.Millisecond)
	for _, k := range slices.Sorted(maps.Keys(r.Skipped)) {
		fmt.Fprintf(w, "SKIPPED %s: %s\n", k, r.Skipped[k])
	}
	for _, x := range []struct {
		name string
		run  *e2eRun
	}{{"cold", r.Cold}, {"predictive", r.Pred}, {"change", r.Change}} {
		run := x.run
		fmt.Fprintf(w, "\n%s: wall %s (calculation %s), requests %d, connections %d, ldap searches %d, predictive hits %d, member reads %d, changes %d\n",
			x.name, time.Duration(run.WallMS)*time.Millisecond, time.Duration(run.CalcMS)*time.Millisecond, run.Requests, run.Connections,
			run.LDAPSearches, run.PredictiveHits, run.MemberReads, run.Changes)
		for _, ou := range slices.Sorted(maps.Keys(run.Targets)) {
			t := run.Targets[ou]
			shared := ""
			if t.Shared {
				shared = " (shared client counters)"
			}
			fmt.Fprintf(w, "  %-20s %-12s read %6dms  requests %5d  connections %3d  ldap searches %3d  predictive hits %6d  member reads %5d  changes %d%s\n",
				ou, t.Type, t.WallMS, t.Requests, t.Connections, t.LDAPSearches, t.PredictiveHits, t.MemberReads, t.Changes, shared)
		}
		for _, h := range slices.Sorted(maps.Keys(run.Hosts)) {
			fmt.Fprintf(w, "  host %-7s connections %d (pool %d)\n", h, run.Hosts[h].Connections, run.Hosts[h].Pool)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
