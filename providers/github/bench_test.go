package github_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// BenchmarkNoopPlan plans the github/teams OU of a generated production-shaped repo
// (internal/synth, P=5000 people by default: ~1,666 teams) against a fake GitHub that already
// holds the desired state and answers every request after 20 ms. It reports GraphQL and REST
// requests, connections opened and wall time per plan, and fails when the targets are
// missed (team reads ≤ ceil(teams/20) + continuation pages of large teams, connections ≤
// pool size, wall time < 10 s):
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
	dir := filepath.Join(b.TempDir(), "repo")
	if _, err := synth.Write(dir, synth.Options{People: people, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	b.Chdir(dir) // the people file is resolved against the working directory
	ctx := context.Background()
	repo, err := calc.Load(ctx, "config.yaml", calc.Options{Now: synth.DefaultNow,
		Getenv: func(k string) (string, bool) { return "tok", true }})
	if err != nil {
		b.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cfg := repo.Config()
	ou := cfg.OU(synth.OUGitHub)
	org := ou.Settings.Get("org").Text()

	// Seed the fake with the desired state: everyone in the org, every team as calculated.
	fake := fakegithub.New(fakegithub.Options{Token: "tok"})
	defer fake.Close()
	for _, uid := range repo.People().UIDs() {
		fake.SetMember(org, uid, "member")
	}
	teams, extraPages := 0, 0
	for _, g := range res.Groups {
		if g.OU != synth.OUGitHub {
			continue
		}
		teams++
		extraPages += max((len(g.Members)+99)/100-1, 0)
		members := map[string]bool{}
		for _, m := range g.Members {
			members[strings.ToLower(m)] = true
		}
		var maint, plain []string
		want := map[string]bool{}
		if s, ok := g.Metadata["team_maintainers"].(string); ok {
			for _, m := range strings.Split(s, ",") {
				want[strings.ToLower(strings.TrimSpace(m))] = true
			}
		}
		for _, m := range g.Members {
			if want[strings.ToLower(m)] {
				maint = append(maint, m)
			} else {
				plain = append(plain, m)
			}
		}
		if _, err := fake.AddTeam(org, fakegithub.TeamSpec{Name: g.CN, Members: plain, Maintainers: maint}); err != nil {
			b.Fatal(err)
		}
	}
	fake.SetLatency(latency)

	opt := github.Options{BaseURL: fake.URL() + "/"}
	pool := 8
	opt.PoolSize = pool
	bound := (teams+19)/20 + extraPages
	b.ResetTimer()
	for b.Loop() {
		fake.ResetStats()
		reg := github.NewRegistry(opt)
		f := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
		start := time.Now()
		plan, err := deploy.Build(ctx, res, cfg, deploy.Options{Providers: map[string]deploy.Factory{"github_team": f}})
		wall := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		var tp *deploy.TargetPlan
		for _, t := range plan.Targets {
			if t.OU == synth.OUGitHub {
				tp = t
			}
		}
		if tp.Err != nil || len(tp.Changes) != 0 {
			b.Fatalf("no-op plan: err %v, %d changes (first: %v)", tp.Err, len(tp.Changes), tp.Changes[:min(1, len(tp.Changes))])
		}
		st := fake.Stats()
		reg.Close()
		b.ReportMetric(float64(st.GraphQL), "graphql/op")
		b.ReportMetric(float64(st.GraphQLTeamDocs), "team-queries/op")
		b.ReportMetric(float64(st.GraphQLOrgDocs), "org-queries/op")
		b.ReportMetric(float64(st.REST), "rest/op")
		b.ReportMetric(float64(st.Connections), "conns/op")
		b.ReportMetric(wall.Seconds(), "wall-s/op")
		b.Logf("P=%d teams=%d (large-team extra pages %d) latency=%s: GraphQL %d (team queries %d, max %d aliases; org queries %d), REST %d, connections %d (pool %d), wall %s",
			people, teams, extraPages, latency, st.GraphQL, st.GraphQLTeamDocs, st.MaxTeamAliases, st.GraphQLOrgDocs, st.REST,
			st.Connections, pool, wall.Round(time.Millisecond))
		if st.GraphQLTeamDocs > bound {
			b.Errorf("%d team queries, target ≤ %d", st.GraphQLTeamDocs, bound)
		}
		if st.Connections > pool {
			b.Errorf("%d connections, target ≤ %d", st.Connections, pool)
		}
		if wall > 10*time.Second {
			b.Errorf("wall time %s, target < 10s", wall)
		}
	}
}
