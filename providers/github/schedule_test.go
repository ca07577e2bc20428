package github_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// largeApply seeds a fake org with `members` active members and writes definitions whose plan
// sends `roleChanges` org role changes (member → admin), `invites` org invitations and the
// rest of `writes` as team member adds (one write each), over 20 existing teams.
func largeApply(t *testing.T, e *env, writes, roleChanges, invites int) {
	t.Helper()
	const teams = 20
	adds := writes - roleChanges - invites
	members := adds/teams + roleChanges + 1
	var ppl, admin, member strings.Builder
	login := func(i int) string { return fmt.Sprintf("u%05d", i) }
	e.fake.SetMember("acme", "alice", "admin")
	admin.WriteString("username = alice\n")
	ppl.WriteString("alice: {cn: alice}\n")
	for i := range members + invites {
		u := login(i)
		fmt.Fprintf(&ppl, "%s: {cn: %s}\n", u, u)
		e.fake.AddUsers(u)
		switch {
		case i < members:
			e.fake.SetMember("acme", u, "member")
			if i < roleChanges {
				fmt.Fprintf(&admin, "username = %s\n", u)
			} else {
				fmt.Fprintf(&member, "username = %s\n", u)
			}
		default:
			fmt.Fprintf(&member, "username = %s\n", u)
		}
	}
	files := map[string]string{"people.yaml": ppl.String(),
		"ldap-config/github/org/admin.txt": admin.String(), "ldap-config/github/org/member.txt": member.String()}
	for tm := range teams {
		slug := fmt.Sprintf("team%02d", tm)
		if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: slug}); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		n := adds / teams
		if tm < adds%teams {
			n++
		}
		for i := range n {
			fmt.Fprintf(&b, "username = %s\n", login(i))
		}
		files["ldap-config/github/teams/"+slug+".txt"] = b.String()
	}
	e.write(files)
}

// Issue 25 §1: a 2,000-change apply against a fake GitHub that enforces the secondary limits
// (80 content-creating requests a minute, 500 an hour), on a fake clock, with the budgets at
// their defaults: no write is refused, and the apply takes the time EstimateWrites predicts
// (±10%).
func TestLargeApplyStaysWithinTheSecondaryLimits(t *testing.T) {
	const writes, roleChanges, invites = 2000, 100, 100
	e := newEnv(t, fakegithub.Options{SecondaryLimits: true, RateLimit: 1 << 30})
	e.force = true // 100 demotions from member are not what this test is about
	largeApply(t, e, writes, roleChanges, invites)
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	org, teams := target(plan, "github/org").Estimate, target(plan, "github/teams").Estimate
	if org == nil || teams == nil || org.Writes["role_change"] != roleChanges || org.Writes["invitation"] != invites ||
		teams.Writes["team_member"] != writes-roleChanges-invites {
		t.Fatalf("estimates: org %v, teams %v", org, teams)
	}
	planned := plan.EstimatedDuration()
	e.fake.ResetStats()
	start := e.clk.Now()
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatalf("apply: %v", err)
	}
	simulated := e.clk.Now().Sub(start)
	st := e.fake.Stats()
	if st.SecondaryLimitHits != 0 || st.Writes != writes {
		t.Fatalf("%d secondary limits hit, %d writes sent (want 0 and %d)", st.SecondaryLimitHits, st.Writes, writes)
	}
	predicted := github.EstimateWrites(github.WriteCounts{Writes: writes, Invitations: invites}, github.Options{})
	t.Logf("%d writes (%d invitations): simulated %s, predicted %s (%.1f%%)", writes, invites, simulated, predicted,
		100*(simulated.Seconds()-predicted.Seconds())/predicted.Seconds())
	t.Logf("the plan's estimate: %s (org: %s; teams: %s)", planned, org, teams)
	for _, p := range []time.Duration{predicted, planned} {
		if math.Abs(simulated.Seconds()-p.Seconds()) > 0.1*p.Seconds() {
			t.Fatalf("simulated %s, predicted %s: more than 10%% apart", simulated, p)
		}
	}
	if c := reg.Counters(); c["invitations"] != invites || c["rate_limited"] != 0 {
		t.Errorf("counters %v", c)
	}
	e.noop()
}

// The control of the test above: the same fake, with the scheduler off, refuses writes.
func TestUnpacedWritesHitTheFakesSecondaryLimit(t *testing.T) {
	e := newEnv(t, fakegithub.Options{SecondaryLimits: true, RateLimit: 1 << 30})
	e.force = true
	e.opt.NoWritePacing = true
	e.opt.MaxWait = -1
	largeApply(t, e, 200, 0, 0)
	reg := e.registry()
	e.apply(reg, e.plan(reg))
	if st := e.fake.Stats(); st.SecondaryLimitHits == 0 {
		t.Fatalf("200 unpaced writes hit no secondary limit: %+v", st)
	}
	if c := reg.Counters(); c["rate_limited"] == 0 {
		t.Errorf("the client saw no rate limit: %v", c)
	}
}

// The daily invitation budget is remembered across runs in StateDir: a second run the same
// day sends no invitation past the budget (skipped with a warning, not failed), and a run a
// day later sends the rest. Without StateDir each run starts afresh.
func TestInvitationBudgetAcrossRuns(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprintf("state=%v", persist), func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.opt.InvitationsPerDay = 2
			if persist {
				e.opt.StateDir = t.TempDir()
			}
			e.write(orgFiles)
			e.write(map[string]string{"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\nusername = erin\nusername = frank\n"})
			e.converge()
			if n := len(e.fake.Pending("acme")); n != 2 {
				t.Fatalf("first run: %d invitations, budget 2", n)
			}
			e.write(map[string]string{"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\nusername = erin\nusername = frank\nusername = gina\nusername = hank\n"})
			reg := e.registry()
			rep := e.apply(reg, e.plan(reg))
			if err := rep.Err(); err != nil {
				t.Fatalf("second run failed: %v", err)
			}
			want := 4
			if persist {
				want = 2 // the budget of the day is spent
				if !strings.Contains(e.log.String(), "daily org invitation budget") {
					t.Errorf("the budget is not named in the log:\n%s", e.log.String())
				}
			}
			if n := len(e.fake.Pending("acme")); n != want {
				t.Fatalf("second run: %d invitations pending, want %d", n, want)
			}
			e.clk.Sleep(t.Context(), 25*time.Hour)
			e.converge()
			e.clk.Sleep(t.Context(), 25*time.Hour)
			e.converge()
			if n := len(e.fake.Pending("acme")); n != 4 {
				t.Fatalf("a day later: %d invitations pending, want 4", n)
			}
		})
	}
}

// The plan says what the apply will cost (issue 25 §2): writes by kind and the duration, per
// target, in the saved plan's JSON too; a target without changes has no estimate.
func TestPlanEstimate(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(orgFiles)
	e.write(map[string]string{
		"ldap-config/github/org/admin.txt":  "username = alice\nusername = bob\n",
		"ldap-config/github/org/member.txt": "username = carol\nusername = dave\nusername = erin\n",
		"ldap-config/github/teams/eng.txt":  "username = alice\nusername = carol\n",
	})
	reg := e.registry()
	plan := e.plan(reg)
	org, teams := target(plan, "github/org").Estimate, target(plan, "github/teams").Estimate
	if org == nil || org.Writes["role_change"] != 1 || org.Writes["invitation"] != 1 || org.Total() != 2 {
		t.Fatalf("org estimate %v", org)
	}
	if teams == nil || teams.Writes["team_create"] != 1 || teams.Writes["team_member"] != 2 {
		t.Fatalf("teams estimate %v", teams)
	}
	// The org's two writes 1 s apart (the invitation first); the team's three follow, 1 s
	// apart each: the plan's targets share the token's windows.
	if org.Duration != time.Second || teams.Duration != 3*time.Second || plan.EstimatedDuration() != 4*time.Second {
		t.Fatalf("durations %s %s", org.Duration, teams.Duration)
	}
	var b strings.Builder
	if _, err := plan.Save(deploy.Inputs{}).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"apply_seconds": 3`) || !strings.Contains(b.String(), `"invitation": 1`) {
		t.Fatalf("saved plan:\n%s", b.String())
	}
	e.apply(reg, plan)
	if p := e.plan(e.registry()); target(p, "github/org").Estimate != nil {
		t.Fatal("a target without changes has an estimate")
	}
}

// A stopped apply hands the next run (a resume, with StateDir) windows that hold only the
// writes GitHub received: a write of a run that is stopping takes no slot, and one whose wait
// is cut short gives its slot back. Otherwise the resume would wait for writes that never
// happened (up to one slot per write left, hours in a large apply). The run is stopped while
// a write waits for its slot, or by the server between two writes; then a resume sends the
// rest, each write 1 s after the one before, so that the two runs take the time of one.
func TestStoppedApplyBooksOnlyWhatItSent(t *testing.T) {
	const writes, stopAt = 100, 40
	for _, during := range []string{"wait", "write"} {
		t.Run("stopped during a "+during, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{SecondaryLimits: true, RateLimit: 1 << 30})
			e.force = true
			e.opt.StateDir = t.TempDir()
			largeApply(t, e, writes, 0, 0)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			sleeps, sent := 0, 0
			sleep := e.opt.Sleep
			e.opt.Sleep = func(ctx context.Context, d time.Duration) error {
				if sleeps++; during == "wait" && sleeps == stopAt {
					cancel()
				}
				return sleep(ctx, d)
			}
			e.fake.OnRequest(func(r *http.Request) {
				if r.Method == http.MethodPut || r.Method == http.MethodDelete {
					if sent++; during == "write" && sent == stopAt {
						cancel()
					}
				}
			})
			start := e.clk.Now()
			reg := e.registry()
			rep, _ := deploy.Apply(ctx, e.plan(reg), e.deployOptions(reg).ApplyOptions())
			if rep.Err() == nil {
				t.Fatal("the stopped apply reports no error")
			}
			got := e.fake.Stats().Writes
			if got == 0 || got >= writes {
				t.Fatalf("the stopped run sent %d writes", got)
			}
			b, err := os.ReadFile(filepath.Join(e.opt.StateDir, ".entitlements-github-writes.json"))
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Sessions map[string]struct {
					Writes []time.Time `json:"writes"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal(b, &st); err != nil || len(st.Sessions) != 1 {
				t.Fatalf("state file: %v\n%s", err, b)
			}
			for _, s := range st.Sessions {
				if len(s.Writes) != got {
					t.Fatalf("the windows hold %d writes, GitHub received %d", len(s.Writes), got)
				}
			}
			e.opt.Sleep = sleep
			e.converge()
			if st := e.fake.Stats(); st.Writes != writes || st.SecondaryLimitHits != 0 {
				t.Fatalf("%d writes, %d secondary limits hit; want %d and 0", st.Writes, st.SecondaryLimitHits, writes)
			}
			if d := e.clk.Now().Sub(start); d != (writes-1)*time.Second {
				t.Fatalf("the two runs took %s, want %s", d, (writes-1)*time.Second)
			}
		})
	}
}
