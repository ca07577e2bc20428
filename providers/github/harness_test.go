package github_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// clock is a fake clock shared by the provider and the fake server: Sleep advances it at
// once, so rate-limit waits take no real time but are still measured and budgeted.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func newClock() *clock { return &clock{now: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
		c.slept += d
	}
	return nil
}

func (c *clock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// syncBuffer collects log output from concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// people known to the calculation (not necessarily GitHub users or org members).
var everyone = []string{"alice", "bob", "carol", "dave", "erin", "frank", "gina", "hank", "ivan", "zed", "ghost"}

// env is a small entitlements repo with a github_org OU (github/org) and a github_team OU
// (github/teams) for org "acme", planned and applied against a fake GitHub.
type env struct {
	t    *testing.T
	fake *fakegithub.Server
	clk  *clock
	root string
	opt  github.Options
	log  *syncBuffer
	// orgKeys and teamKeys are extra YAML lines for the OUs (4-space indented).
	orgKeys, teamKeys string
	noOrg             bool
	addr              string // the OUs' addr ("": none, Options.BaseURL is used)
	force             bool
	noToken           bool   // the config's token renders empty
	orgName           string // the OUs' org; default acme
	token             string // GITHUB_TOKEN, which the config's token renders; default "tok"
	// credKeys, when set, replace the OUs' token line (4-space indented YAML lines), and vars
	// are more variables for the config's substitutions.
	credKeys string
	vars     map[string]string
}

func newEnv(t *testing.T, fopt fakegithub.Options) *env {
	t.Helper()
	clk := newClock()
	fopt.Now = clk.Now
	fopt.Schema = fakegithub.TestSchema(t)
	if fopt.Token == "" {
		fopt.Token = "tok"
	}
	f := fakegithub.New(fopt)
	t.Cleanup(f.Close)
	e := &env{t: t, fake: f, clk: clk, root: t.TempDir(), log: &syncBuffer{}}
	e.opt = github.Options{BaseURL: f.URL() + "/", Now: clk.Now, Sleep: clk.Sleep, Jitter: func() float64 { return 0.5 },
		Logger: slog.New(slog.NewTextHandler(e.log, nil))}
	for _, u := range everyone {
		if u != "ghost" {
			f.AddUsers(u)
		}
	}
	f.AddOrg("acme")
	for _, d := range []string{"ldap-config/github/org", "ldap-config/github/teams"} {
		if err := os.MkdirAll(filepath.Join(e.root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var ppl strings.Builder
	for _, u := range everyone {
		fmt.Fprintf(&ppl, "%s: {cn: %s}\n", u, strings.ToUpper(u[:1])+u[1:])
	}
	e.write(map[string]string{"people.yaml": ppl.String()})
	return e
}

func (e *env) config() string {
	var b strings.Builder
	b.WriteString("configuration_path: ./ldap-config\n")
	fmt.Fprintf(&b, "people:\n  yaml:\n    type: yaml\n    config:\n      filename: %s\npeople_data_source: yaml\n",
		filepath.Join(e.root, "people.yaml"))
	b.WriteString("groups:\n")
	addr := ""
	if e.addr != "" {
		addr = "    addr: " + e.addr + "\n"
	}
	org := e.orgName
	if org == "" {
		org = "acme"
	}
	cred := "    token: '<%= ENV[\"GITHUB_TOKEN\"] %>'\n"
	if e.credKeys != "" {
		cred = e.credKeys
	}
	if !e.noOrg {
		b.WriteString("  github/org:\n    type: github_org\n    org: " + org + "\n" + cred +
			"    base: ou=org,ou=GitHub,dc=example,dc=net\n" + addr + e.orgKeys)
	}
	b.WriteString("  github/teams:\n    type: github_team\n    org: " + org + "\n" + cred +
		"    base: ou=teams,ou=GitHub,dc=example,dc=net\n" + addr + e.teamKeys)
	return b.String()
}

// write creates files relative to the repo root ("" content deletes the file).
func (e *env) write(files map[string]string) {
	e.t.Helper()
	for name, content := range files {
		p := filepath.Join(e.root, filepath.FromSlash(name))
		if content == "" {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) registry() *github.Registry {
	r := github.NewRegistry(e.opt)
	e.t.Cleanup(r.Close)
	return r
}

func (e *env) deployOptions(reg *github.Registry) deploy.Options {
	f := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
	return deploy.Options{Backends: backends.Spec().WithFactory(f, "github_org", "github_team"), Force: e.force}
}

// plan calculates the repo and plans it with reg.
func (e *env) plan(reg *github.Registry) *deploy.Plan {
	e.t.Helper()
	e.write(map[string]string{"config.yaml": e.config()})
	ctx := context.Background()
	repo, err := calc.Load(ctx, filepath.Join(e.root, "config.yaml"), calc.Options{Types: backends.Types(),
		Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Getenv: func(k string) (string, bool) {
			if v, ok := e.vars[k]; ok {
				return v, true
			}
			if k != "GITHUB_TOKEN" || e.noToken {
				return "", false
			}
			if e.token != "" {
				return e.token, true
			}
			return "tok", true
		}})
	if err != nil {
		e.t.Fatalf("load: %v", err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		e.t.Fatalf("calculate: %v", err)
	}
	plan, err := deploy.Build(ctx, res, repo.Config(), e.deployOptions(reg))
	if err != nil {
		e.t.Fatalf("build: %v", err)
	}
	return plan
}

func (e *env) apply(reg *github.Registry, plan *deploy.Plan) *deploy.Report {
	e.t.Helper()
	rep, _ := deploy.Apply(context.Background(), plan, e.deployOptions(reg).ApplyOptions())
	return rep
}

// converge plans and applies with a fresh registry and fails the test on any error.
func (e *env) converge() (*deploy.Plan, *deploy.Report) {
	e.t.Helper()
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		e.t.Fatalf("plan: %v", err)
	}
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		e.t.Fatalf("apply: %v", err)
	}
	return plan, rep
}

// noop asserts that a fresh plan has no changes and that applying it writes nothing.
func (e *env) noop() {
	e.t.Helper()
	e.fake.ResetStats()
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		e.t.Fatalf("plan: %v", err)
	}
	if n := len(changes(plan)); n != 0 {
		e.t.Fatalf("second plan has %d changes: %v", n, changes(plan))
	}
	e.apply(reg, plan)
	if st := e.fake.Stats(); st.Writes != 0 {
		e.t.Fatalf("no-op run wrote %d times: %v", st.Writes, st.Requests)
	}
}

func changes(p *deploy.Plan) []string {
	var out []string
	for _, t := range p.Targets {
		for _, c := range t.Changes {
			out = append(out, c.String()+fmt.Sprintf(" attrs=%v", c.AttrsChanged))
		}
	}
	return out
}

func target(p *deploy.Plan, ou string) *deploy.TargetPlan {
	for _, t := range p.Targets {
		if t.OU == ou {
			return t
		}
	}
	return nil
}

func outcomes(r *deploy.Report, ou string) []providers.Outcome {
	for _, t := range r.Targets {
		if t.OU == ou {
			return t.Outcomes
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func wantMembers(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("members %v, want %v", got, want)
	}
}
