package aad

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// synthWorld is a generated repo, its calculation, and a fake Graph seeded with the desired
// state of its AAD OU (so that a plan is a no-op).
type synthWorld struct {
	fake   *fakegraph.Server
	res    *calc.Result
	cfg    *config.Config
	groups int // AAD groups
	large  int // extra member pages (groups over 999 members: ceil(m/999)-1 each)
	maxMem int
	total  int // memberships
	calc   time.Duration
}

func newSynthWorld(tb testing.TB, people int, latency time.Duration) *synthWorld {
	tb.Helper()
	dir := tb.TempDir()
	if _, err := synth.Write(dir, synth.Options{People: people}); err != nil {
		tb.Fatal(err)
	}
	tb.Chdir(dir)
	start := time.Now()
	ctx := context.Background()
	repo, err := calc.Load(ctx, "config.yaml", calc.Options{Types: backends.Types(), Now: synth.DefaultNow,
		Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		tb.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	w := &synthWorld{res: res, cfg: repo.Config(), calc: time.Since(start)}
	w.fake = fakegraph.New(fakegraph.Options{Latency: latency})
	tb.Cleanup(w.fake.Close)
	ids := map[string]string{}
	for _, uid := range repo.People().UIDs() {
		ids[uid] = w.fake.AddUser(uid + "@corp.example.com")
	}
	for _, g := range res.Groups {
		if g.OU != synth.OUAAD {
			continue
		}
		w.groups++
		w.large += max(0, int(math.Ceil(float64(len(g.Members))/999))-1)
		w.maxMem = max(w.maxMem, len(g.Members))
		w.total += len(g.Members)
		ms := make([]string, len(g.Members))
		for i, m := range g.Members {
			ms[i] = ids[m]
		}
		w.fake.AddGroup(fakegraph.Group{DisplayName: g.CN, MailNickname: g.CN, Description: g.Description,
			SecurityEnabled: true, Members: ms})
	}
	return w
}

// plan builds a no-op plan of the AAD OU with a fresh Registry (cold caches, new
// connections) and returns the target plan, the Registry's counters and the wall time.
func (w *synthWorld) plan(tb testing.TB, opt Options) (*deploy.TargetPlan, map[string]int64, time.Duration) {
	tb.Helper()
	opt.GraphURL = w.fake.BaseURL()
	opt.TokenCredential = staticCred{w.fake.Token()}
	reg := NewRegistry(opt)
	defer reg.Close()
	start := time.Now()
	plan, err := deploy.Build(context.Background(), w.res, w.cfg, deploy.Options{Backends: backends.Spec().WithFactory(func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }, "aad")})
	if err != nil {
		tb.Fatal(err)
	}
	took := time.Since(start)
	for _, tp := range plan.Targets {
		if tp.OU == synth.OUAAD {
			return tp, reg.Counters(), took
		}
	}
	tb.Fatal("no AAD target")
	return nil, nil, 0
}

// TestNoopPlanBudgetP5000 checks the budget on the P=5,000 synthetic repo against
// a fake Graph with 20 ms latency: a no-op plan, read requests within ceil(groups/20) member
// batches + extra pages + name lookups (15 names per filter, 20 filters per batch),
// connections within the pool size, under 10 s.
func TestNoopPlanBudgetP5000(t *testing.T) {
	if testing.Short() {
		t.Skip("P=5000 budget test skipped in -short mode")
	}
	w := newSynthWorld(t, 5000, 20*time.Millisecond)
	opt := Options{PoolSize: 4}
	tp, c, took := w.plan(t, opt)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	if len(tp.Changes) != 0 {
		t.Fatalf("no-op plan has %d changes, e.g. %s", len(tp.Changes), tp.Changes[0])
	}
	memberBatches := (w.groups + 19) / 20
	lookupBatches := (w.groups + 299) / 300
	extraBatches := (w.large + 19) / 20
	budget := int64(memberBatches + lookupBatches + extraBatches)
	st := w.fake.Stats()
	t.Logf("P=5000: %d AAD groups, %d memberships (largest %d, %d extra pages); calc %s; no-op plan %s: %d requests, %d batches, "+
		"%d sub-requests, %d pages, %d connections (server saw %d), budget %d (%d member + %d lookup + %d extra-page batches)",
		w.groups, w.total, w.maxMem, w.large, w.calc.Round(time.Millisecond), took.Round(time.Millisecond), c["requests"], c["batches"],
		c["subrequests"], c["pages"], c["connections_opened"], st.NewConnections, budget, memberBatches, lookupBatches, extraBatches)
	if c["requests"] > budget {
		t.Errorf("%d requests, budget %d", c["requests"], budget)
	}
	if c["connections_opened"] > int64(opt.PoolSize) || st.NewConnections > int64(opt.PoolSize) {
		t.Errorf("%d connections (server %d), pool %d", c["connections_opened"], st.NewConnections, opt.PoolSize)
	}
	// The wall time is logged, not asserted: speed targets live in BenchmarkNoopPlanP5000.
}

// BenchmarkNoopPlanP5000 is the benchmark: go test -run '^$' -bench NoopPlanP5000
// -benchtime 3x ./providers/aad. Each iteration is a cold no-op plan (fresh Registry).
func BenchmarkNoopPlanP5000(b *testing.B) {
	w := newSynthWorld(b, 5000, 20*time.Millisecond)
	var c map[string]int64
	for b.Loop() {
		var tp *deploy.TargetPlan
		tp, c, _ = w.plan(b, Options{PoolSize: 4})
		if tp.Err != nil || len(tp.Changes) != 0 {
			b.Fatalf("err=%v changes=%d", tp.Err, len(tp.Changes))
		}
	}
	for _, k := range []string{"requests", "batches", "subrequests", "pages", "connections_opened"} {
		b.ReportMetric(float64(c[k]), k+"/op")
	}
	b.ReportMetric(float64(w.groups), "groups")
	fmt.Fprintf(b.Output(), "groups=%d largest=%d extra_pages=%d\n", w.groups, w.maxMem, w.large)
}
