package github_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// noopScenario is a generated production-shaped repo (internal/synth) whose github/teams OU is
// already in place on a fake GitHub that answers every request after `latency`.
type noopScenario struct {
	people     int
	latency    time.Duration
	res        *calc.Result
	cfg        *config.Config
	fake       *fakegithub.Server
	teams      int
	extraPages int // continuation pages of teams with more than 100 members
	pool       int
}

func newNoopScenario(tb testing.TB, people int, latency time.Duration) *noopScenario {
	tb.Helper()
	schema := fakegithub.TestSchema(tb) // found from the package directory, before the Chdir below
	dir := filepath.Join(tb.TempDir(), "repo")
	if _, err := synth.Write(dir, synth.Options{People: people, Seed: 1}); err != nil {
		tb.Fatal(err)
	}
	tb.Chdir(dir) // the people file is resolved against the working directory
	ctx := context.Background()
	repo, err := calc.Load(ctx, "config.yaml", calc.Options{Types: backends.Types(), Now: synth.DefaultNow,
		Getenv: func(k string) (string, bool) { return "tok", true }})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	sc := &noopScenario{people: people, latency: latency, res: res, cfg: repo.Config(), pool: 8}
	org := sc.cfg.OU(synth.OUGitHub).Settings.Get("org").Text()

	// Seed the fake with the desired state: everyone in the org, every team as calculated.
	sc.fake = fakegithub.New(fakegithub.Options{Token: "tok", Schema: schema})
	tb.Cleanup(sc.fake.Close)
	for _, uid := range repo.People().UIDs() {
		sc.fake.SetMember(org, uid, "member")
	}
	for _, g := range res.Groups {
		if g.OU != synth.OUGitHub {
			continue
		}
		sc.teams++
		sc.extraPages += max((len(g.Members)+99)/100-1, 0)
		want := map[string]bool{}
		if s, ok := g.Metadata["team_maintainers"].(string); ok {
			for _, m := range strings.Split(s, ",") {
				want[strings.ToLower(strings.TrimSpace(m))] = true
			}
		}
		var maint, plain []string
		for _, m := range g.Members {
			if want[strings.ToLower(m)] {
				maint = append(maint, m)
			} else {
				plain = append(plain, m)
			}
		}
		if _, err := sc.fake.AddTeam(org, fakegithub.TeamSpec{Name: g.CN, Members: plain, Maintainers: maint}); err != nil {
			tb.Fatal(err)
		}
	}
	sc.fake.SetLatency(latency)
	return sc
}

// noopResult is what one no-op plan (and the apply of its empty plan) cost.
type noopResult struct {
	st   fakegithub.Stats
	wall time.Duration
}

// run plans the github/teams OU with a fresh registry, applies the plan, and checks the
// issue's targets: no change, no write, team reads ≤ ceil(teams/20) + continuation pages of
// large teams, connections ≤ pool size.
func (sc *noopScenario) run(tb testing.TB) noopResult {
	tb.Helper()
	ctx := context.Background()
	sc.fake.ResetStats()
	reg := github.NewRegistry(github.Options{BaseURL: sc.fake.URL() + "/", PoolSize: sc.pool})
	defer reg.Close()
	f := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
	opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "github_team")}
	start := time.Now()
	plan, err := deploy.Build(ctx, sc.res, sc.cfg, opt)
	wall := time.Since(start)
	if err != nil {
		tb.Fatal(err)
	}
	var tp *deploy.TargetPlan
	for _, t := range plan.Targets {
		if t.OU == synth.OUGitHub {
			tp = t
		}
	}
	if tp == nil {
		tb.Fatalf("no %s target in the plan", synth.OUGitHub)
	}
	if tp.Err != nil || len(tp.Changes) != 0 {
		tb.Fatalf("no-op plan: err %v, %d changes (first: %v)", tp.Err, len(tp.Changes), tp.Changes[:min(1, len(tp.Changes))])
	}
	planStats := sc.fake.Stats()
	deploy.Apply(ctx, plan, opt.ApplyOptions())
	st := sc.fake.Stats()
	tb.Logf("P=%d teams=%d (large-team extra pages %d) latency=%s: GraphQL %d (team queries %d, max %d aliases; org queries %d), REST %d, connections %d (pool %d), wall %s",
		sc.people, sc.teams, sc.extraPages, sc.latency, planStats.GraphQL, planStats.GraphQLTeamDocs, planStats.MaxTeamAliases,
		planStats.GraphQLOrgDocs, planStats.REST, planStats.Connections, sc.pool, wall.Round(time.Millisecond))
	if bound := (sc.teams+19)/20 + sc.extraPages; planStats.GraphQLTeamDocs > bound {
		tb.Errorf("%d team queries, target ≤ %d", planStats.GraphQLTeamDocs, bound)
	}
	if st.Connections > sc.pool {
		tb.Errorf("%d connections, target ≤ %d", st.Connections, sc.pool)
	}
	if st.Writes != 0 {
		tb.Errorf("a no-op plan and its apply wrote %d times: %v", st.Writes, st.Requests)
	}
	return noopResult{st: planStats, wall: wall}
}

// TestNoopPlanBudget is BenchmarkNoopPlan's network budget at a size CI runs on every push
// (P=1200 people, 20 ms per request): team reads ≤ ceil(teams/20) + continuation pages of
// large teams, connections ≤ pool size, no write. The wall time is reported, not asserted
// (a loaded CI machine is not a measurement); the speed target lives in BenchmarkNoopPlan.
func TestNoopPlanBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a repo and plans it against a slow fake GitHub (-short)")
	}
	sc := newNoopScenario(t, 1200, 20*time.Millisecond)
	if sc.teams < 100 || sc.extraPages == 0 {
		t.Fatalf("scenario too small to measure anything: %d teams, %d continuation pages", sc.teams, sc.extraPages)
	}
	sc.run(t)
}

// BenchmarkNoopPlan plans the github/teams OU of a generated production-shaped repo
// (internal/synth, P=5000 people by default: ~1,666 teams) against a fake GitHub that already
// holds the desired state and answers every request after 20 ms. It reports GraphQL and REST
// requests, connections opened and wall time per plan, and fails when the targets are
// missed (team reads ≤ ceil(teams/20) + continuation pages of large teams, connections ≤
// pool size, no write, wall time < 10 s). TestNoopPlanBudget runs the same checks at P=1200.
//
//	go test -run '^$' -bench NoopPlan -benchtime 3x ./providers/github
//	BENCH_PEOPLE=20000 BENCH_LATENCY=50ms go test -run '^$' -bench NoopPlan -benchtime 1x ./providers/github
func BenchmarkNoopPlan(b *testing.B) {
	people := 5000
	if v := os.Getenv("BENCH_PEOPLE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		people = n
	}
	latency := 20 * time.Millisecond
	if v := os.Getenv("BENCH_LATENCY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		latency = d
	}
	sc := newNoopScenario(b, people, latency)
	b.ResetTimer()
	for b.Loop() {
		r := sc.run(b)
		b.ReportMetric(float64(r.st.GraphQL), "graphql/op")
		b.ReportMetric(float64(r.st.GraphQLTeamDocs), "team-queries/op")
		b.ReportMetric(float64(r.st.GraphQLOrgDocs), "org-queries/op")
		b.ReportMetric(float64(r.st.REST), "rest/op")
		b.ReportMetric(float64(r.st.Connections), "conns/op")
		b.ReportMetric(r.wall.Seconds(), "wall-s/op")
		if r.wall > 10*time.Second {
			b.Errorf("wall time %s, target < 10s", r.wall)
		}
	}
}
