package aad

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// clock is a fake clock shared by the provider and the fake server: Sleep advances it at
// once, so the pacer's waits take no real time but are still measured and budgeted. (The
// pacer sleeps one writer at a time, so the waits add up as they would on the real clock.)
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

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
	}
	return nil
}

// pacedEnv is an env whose fake enforces Graph's write quotas, and whose Registries share
// the fake's clock (with the pacer's defaults unless opt says otherwise).
func pacedEnv(t *testing.T, fopt fakegraph.Options, people int) (*env, *clock) {
	clk := newClock()
	fopt.WriteQuotas, fopt.Now = true, clk.Now
	return newEnv(t, fopt, "", people), clk
}

func (e *env) pacedRegistry(clk *clock, opt Options) *Registry {
	opt.TokenCredential = staticCred{e.fake.Token()}
	opt.Now, opt.Sleep = clk.Now, clk.Sleep
	r := NewRegistry(opt)
	e.t.Cleanup(r.Close)
	return r
}

// memberChanges seeds `groups` Entra groups whose definitions add `adds` members to each and
// remove `removes` (users u000...: the current members are the first `removes`, the desired
// ones the next `adds`).
func memberChanges(e *env, groups, adds, removes int) {
	for g := range groups {
		cn := fmt.Sprintf("team%02d", g)
		e.seedGroup(cn, uids(0, removes)...)
		e.seedUsers(uids(removes, removes+adds)...)
		e.group(cn, uids(removes, removes+adds))
	}
}

// Issue 25 §1, Graph side: 2,000 member changes against a fake that enforces Graph's write
// quotas, on a fake clock, with the default budgets: no write is refused, the groups end as
// defined (a re-read plans nothing), the apply takes the time the plan estimated (±10%), and
// member adds cost one members@odata.bind PATCH per 20.
func TestLargeApplyStaysWithinTheWriteQuota(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		groups, adds, removes    int
		patches, deletes         int64 // write sub-requests by route
		batches                  int64
		perMemberSubs, perMember int64 // what one add per sub-request (POST .../members/$ref) sent
	}{
		{"2,000 adds", 20, 100, 0, 100, 0, 5, 2000, 100},
		{"1,000 adds and 1,000 removals", 20, 50, 50, 60, 1000, 53, 2000, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, clk := pacedEnv(t, fakegraph.Options{}, tc.adds+tc.removes)
			memberChanges(e, tc.groups, tc.adds, tc.removes)
			reg := e.pacedRegistry(clk, Options{})
			plan, tp, _ := e.plan(reg, true)
			est := tp.Estimate
			if est == nil || est.Writes["member_add"] != int(tc.patches) || est.Writes["member_remove"] != int(tc.deletes) {
				t.Fatalf("estimate %v", est)
			}
			e.fake.ResetStats()
			start := clk.Now()
			e.apply(plan)
			simulated := clk.Now().Sub(start)
			st := e.fake.Stats()
			if st.WriteLimitHits != 0 || st.Throttled != 0 {
				t.Fatalf("%d write-quota refusals, %d throttled", st.WriteLimitHits, st.Throttled)
			}
			if st.Routes["groups.patch"] != tc.patches || st.Routes["members.remove"] != tc.deletes || st.Routes["members.add"] != 0 ||
				st.Writes != tc.patches+tc.deletes || st.SubRequests != tc.patches+tc.deletes || st.Batches != tc.batches {
				t.Fatalf("requests: %d batches, %d sub-requests, %d writes, routes %v", st.Batches, st.SubRequests, st.Writes, st.Routes)
			}
			predicted := EstimateWrites(WriteCounts{Batched: int(tc.patches + tc.deletes)}, Options{})
			t.Logf("%d member changes: %d batches / %d write sub-requests (one add per sub-request: %d / %d); "+
				"simulated %s, estimated %s (plan: %s)", tc.groups*(tc.adds+tc.removes), st.Batches, st.SubRequests,
				tc.perMember, tc.perMemberSubs, simulated, predicted, est)
			for _, p := range []time.Duration{predicted, est.Duration} {
				if math.Abs(simulated.Seconds()-p.Seconds()) > 0.1*p.Seconds() {
					t.Fatalf("simulated %s, estimated %s: more than 10%% apart", simulated, p)
				}
			}
			if c := reg.Counters(); c["writes"] != tc.patches+tc.deletes || c["throttled"] != 0 || c["bind_splits"] != 0 {
				t.Errorf("counters %v", c)
			}
			if _, again, _ := e.plan(e.pacedRegistry(clk, Options{}), false); len(again.Changes) != 0 {
				t.Fatalf("not converged: %v", changeSummary(again))
			}
			if got := e.members("team07"); strings.Join(got, ",") != strings.Join(uids(tc.removes, tc.removes+tc.adds), ",") {
				t.Fatalf("team07: %v", got)
			}
		})
	}
}

// Without the pacer, the same fake refuses writes past its quota: the control of the test
// above (a quota of 300 writes per 2.5 minutes, 1,060 writes sent at once).
func TestUnpacedWritesHitTheFakesQuota(t *testing.T) {
	e, clk := pacedEnv(t, fakegraph.Options{AppWrites: 300}, 100)
	memberChanges(e, 20, 50, 50)
	reg := e.pacedRegistry(clk, Options{NoWritePacing: true, MaxAttempts: 1})
	plan, _, _ := e.plan(reg, true)
	deploy.Apply(context.Background(), plan, deploy.ApplyOptions{}) // refused writes fail their changes
	if st := e.fake.Stats(); st.WriteLimitHits == 0 {
		t.Fatalf("1,060 unpaced writes hit no write quota: %+v", st)
	}
	if c := reg.Counters(); c["throttled"] == 0 {
		t.Errorf("the client saw no 429: %v", c)
	}
}

// A lower quota (300 writes per 2.5 minutes, budget 270), with the spacing off: the window
// binds, writes go in bursts of 260 (13 batches of 20) one window apart, Graph's throttle
// header (above 80%) is read but stays under the threshold, nothing is refused, and the apply
// takes the estimated 4 windows.
func TestWindowBindsAtALowerQuota(t *testing.T) {
	e, clk := pacedEnv(t, fakegraph.Options{AppWrites: 300}, 100)
	memberChanges(e, 20, 50, 50)
	opt := Options{WriteQuota: 300, WriteInterval: -1}
	reg := e.pacedRegistry(clk, opt)
	plan, tp, _ := e.plan(reg, true)
	start := clk.Now()
	e.apply(plan)
	simulated := clk.Now().Sub(start)
	st := e.fake.Stats()
	if st.WriteLimitHits != 0 || st.ThrottleHeaders == 0 {
		t.Fatalf("%d refusals (want 0), %d throttle headers (want some)", st.WriteLimitHits, st.ThrottleHeaders)
	}
	if want := 4 * WriteWindow; tp.Estimate.Duration != want || simulated != want {
		t.Fatalf("simulated %s, estimated %s, want %s", simulated, tp.Estimate.Duration, want)
	}
	if c := reg.Counters(); c["throttle_slowdowns"] != 0 {
		t.Errorf("slowed down for its own writes: %v", c)
	}
	if _, again, _ := e.plan(e.pacedRegistry(clk, opt), false); len(again.Changes) != 0 {
		t.Fatalf("not converged: %v", changeSummary(again))
	}
}

// Another client of the same application has spent 80% of the quota just before the apply.
// The pacer does not know it until Graph's throttle header passes the threshold; it then
// books the writes Graph counts beyond its own and waits for them to leave the window, so
// that nothing is refused.
func TestThrottleHeaderSlowsDown(t *testing.T) {
	e, clk := pacedEnv(t, fakegraph.Options{}, 100)
	memberChanges(e, 20, 50, 50)
	dummy := e.fake.AddGroup(fakegraph.Group{MailNickname: "other-tool", SecurityEnabled: true})
	spend(t, e.fake, dummy, 2400)
	reg := e.pacedRegistry(clk, Options{})
	plan, tp, _ := e.plan(reg, true)
	start := clk.Now()
	e.apply(plan)
	simulated := clk.Now().Sub(start)
	st := e.fake.Stats()
	c := reg.Counters()
	if st.WriteLimitHits != 0 || c["throttle_slowdowns"] == 0 {
		t.Fatalf("%d refusals (want 0), counters %v", st.WriteLimitHits, c)
	}
	// The other client's writes leave the window 150 s after they were sent: the apply
	// waits for that, then goes on at its pace.
	if simulated < WriteWindow || simulated > WriteWindow+tp.Estimate.Duration {
		t.Fatalf("simulated %s; the plan estimated %s without the other client", simulated, tp.Estimate.Duration)
	}
	t.Logf("simulated %s (estimate without the other client %s), counters %v", simulated, tp.Estimate.Duration, c)
	if _, again, _ := e.plan(e.pacedRegistry(clk, Options{}), false); len(again.Changes) != 0 {
		t.Fatalf("not converged: %v", changeSummary(again))
	}
}

// spend sends n description PATCHes to a group (another client of the application), in raw
// $batch requests of 20.
func spend(t *testing.T, f *fakegraph.Server, group string, n int) {
	t.Helper()
	for sent := 0; sent < n; sent += 20 {
		var items []string
		for i := range min(20, n-sent) {
			items = append(items, fmt.Sprintf(`{"id":"%d","method":"PATCH","url":"/groups/%s","body":{"description":"x%d"},"headers":{"Content-Type":"application/json"}}`,
				i, group, sent+i))
		}
		req, err := http.NewRequest("POST", f.BaseURL()+"/$batch", strings.NewReader(`{"requests":[`+strings.Join(items, ",")+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+f.Token())
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
}

// A member added behind the plan's back makes its members@odata.bind chunk fail as a whole
// (400 "already exist", nothing added): the chunk is split in halves, recursively, down to
// that member alone, which is already in state, and every other member is added.
func TestBindSplitsOnExistingMember(t *testing.T) {
	e, clk := pacedEnv(t, fakegraph.Options{}, 20)
	e.seedGroup("eng")
	e.seedUsers(uids(0, 20)...)
	e.group("eng", uids(0, 20))
	reg := e.pacedRegistry(clk, Options{})
	plan, tp, _ := e.plan(reg, false)
	if tp.Estimate == nil || tp.Estimate.Writes["member_add"] != 1 {
		t.Fatalf("estimate %v", tp.Estimate)
	}
	g := e.fake.GroupsByNickname("eng")[0]
	id, _ := e.fake.UserID(upn("u000"))
	e.fake.SetMembers(g.ID, id)
	e.fake.ResetStats()
	rep := e.apply(plan)
	if out := rep.Targets[0].Outcomes; len(out) != 1 || out[0].Status != providers.Applied {
		t.Fatalf("outcomes %+v", out)
	}
	if got := e.members("eng"); len(got) != 20 {
		t.Fatalf("members %v", got)
	}
	// u000 is first in the chunk: 20 → 10+10 → 5+5 → 2+3 → 1+1, one batch per round.
	st := e.fake.Stats()
	if st.Routes["groups.patch"] != 9 || st.Batches != 5 || st.SubRequests != 9 {
		t.Fatalf("%d PATCHes in %d batches (%d sub-requests), want 9 in 5", st.Routes["groups.patch"], st.Batches, st.SubRequests)
	}
	if c := reg.Counters(); c["bind_splits"] != 4 {
		t.Fatalf("counters %v", c)
	}
}

// The plan says what the apply will send, by kind, and how long the pacer takes; a plan
// made again (no apply between) says the same, not the time after the first plan's writes.
func TestPlanEstimate(t *testing.T) {
	e, clk := pacedEnv(t, fakegraph.Options{}, 30)
	e.settings = "create_if_missing: true"
	e.writeConfig()
	e.seedUsers(uids(0, 30)...)
	e.group("fresh", uids(0, 25))       // a create and 25 adds: 2 PATCHes
	e.seedGroup("desc", "u000", "u001") // one removal, one add, the description
	e.write("groups/aad/groups/desc.txt", "description = New text\nusername = u000\nusername = u002\n")
	reg := e.pacedRegistry(clk, Options{})
	iv := (WriteWindow + 2699) / 2700
	for range 2 {
		_, tp, _ := e.plan(reg, false)
		est := tp.Estimate
		want := map[string]int{"group_create": 1, "member_add": 3, "member_remove": 1, "description": 1}
		if est == nil || len(est.Writes) != len(want) || est.Total() != 6 {
			t.Fatalf("estimate %v", est)
		}
		for k, n := range want {
			if est.Writes[k] != n {
				t.Fatalf("estimate %v, want %v", est.Writes, want)
			}
		}
		// The create, then one batch of 5 sub-requests one interval later.
		if est.Duration != iv || len(est.Notes) != 1 || !strings.Contains(est.Notes[0], "26 member add(s) in 3 members@odata.bind") {
			t.Fatalf("estimate %s", est)
		}
	}
}
