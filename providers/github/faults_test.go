package github_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

func teamFiles() map[string]string {
	return map[string]string{
		"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n",
		"ldap-config/github/teams/ops.txt": "username = carol\n",
	}
}

func TestFailedReadWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inject func(e *env)
		failed []string // targets whose plan must fail
	}{
		{"every GraphQL request fails", func(e *env) {
			e.fake.AddFault(fakegithub.Fault{Path: "/graphql", Kind: fakegithub.Status, Status: 502})
		}, []string{"github/org", "github/teams"}},
		{"one team keeps failing inside its batch", func(e *env) {
			e.fake.FailTeamAlias("acme", "eng", 100)
		}, []string{"github/teams"}},
		{"connections reset", func(e *env) {
			e.fake.AddFault(fakegithub.Fault{Path: "/graphql", Kind: fakegithub.Reset})
		}, []string{"github/org", "github/teams"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.fake.SetMember("acme", "frank", "member")
			e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice", "bob", "dave"}})
			e.write(orgFiles)
			e.write(teamFiles())
			tc.inject(e)
			e.fake.ResetStats()
			reg := e.registry()
			plan := e.plan(reg)
			for _, ou := range tc.failed {
				if tp := target(plan, ou); tp.Err == nil || len(tp.Changes) != 0 {
					t.Errorf("%s: err %v, changes %d", ou, tp.Err, len(tp.Changes))
				}
			}
			rep := e.apply(reg, plan)
			if rep.Err() == nil {
				t.Error("the report hides the failed read")
			}
			eng, _ := e.fake.Team("acme", "eng")
			if len(eng.Members) != 3 {
				t.Fatalf("members removed after a failed read: %v", eng.Members)
			}
			if len(tc.failed) == 2 && e.fake.Stats().Writes != 0 {
				t.Fatalf("wrote after failed reads: %v", e.fake.Stats().Requests)
			}
			// Once GitHub answers again, the next run converges.
			e.fake.ClearFaults()
			e.converge()
			eng, _ = e.fake.Team("acme", "eng")
			wantMembers(t, eng.Members, map[string]string{"alice": "member", "bob": "member"})
			if _, ok := e.fake.Team("acme", "ops"); !ok {
				t.Fatal("ops not created")
			}
			if e.fake.Members("acme")["frank"] != "" {
				t.Fatal("frank not removed")
			}
			e.noop()
		})
	}
}

func TestCreateIsNeverBlindlyReplayed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fakegithub.Fault
		posts int // POSTs that reached the server
	}{
		{"timeout after the team was created", fakegithub.Fault{Kind: fakegithub.Hang, After: true}, 1},
		{"connection reset after the team was created", fakegithub.Fault{Kind: fakegithub.Reset, After: true}, 1},
		{"502 after the team was created", fakegithub.Fault{Kind: fakegithub.Status, Status: 502, After: true}, 1},
		{"500 before anything happened", fakegithub.Fault{Kind: fakegithub.Status, Status: 500}, 2},
		{"connection reset before anything happened", fakegithub.Fault{Kind: fakegithub.Reset}, 2},
		{"timeout before anything happened", fakegithub.Fault{Kind: fakegithub.Hang}, 2},
		{"422: made meanwhile by someone else", fakegithub.Fault{Kind: fakegithub.Status, Status: 422, After: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.noOrg = true
			e.opt.RequestTimeout = 300 * time.Millisecond
			e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n"})
			f := tc.fault
			f.Method, f.Path, f.Times = "POST", "/orgs/acme/teams", 1
			e.fake.AddFault(f)
			e.fake.ResetStats()
			_, rep := e.converge()
			if o := outcomes(rep, "github/teams")[0]; o.Status != providers.Applied {
				t.Fatalf("outcome %s %v", o.Status, o.Err)
			}
			st := e.fake.Stats()
			if got := st.Requests["POST /orgs/{org}/teams"]; got != tc.posts {
				t.Errorf("%d POSTs, want %d", got, tc.posts)
			}
			if st.Requests["GET /orgs/{org}/teams/{slug}"] != 1 {
				t.Errorf("the team was not read back before deciding: %v", st.Requests)
			}
			if n := len(e.fake.Teams("acme")); n != 1 {
				t.Fatalf("%d teams", n)
			}
			eng, _ := e.fake.Team("acme", "eng")
			wantMembers(t, eng.Members, map[string]string{"alice": "member", "bob": "member"})
			e.noop()
		})
	}
}

func TestUnseenMembershipWriteIsUnknown(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice"}})
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n"})
	e.opt.RequestTimeout = 100 * time.Millisecond
	e.opt.MaxAttempts = 2
	e.fake.AddFault(fakegithub.Fault{Method: "PUT", Path: "/orgs/acme/teams/eng/memberships/*", Kind: fakegithub.Hang})
	reg := e.registry()
	rep := e.apply(reg, e.plan(reg))
	if o := outcomes(rep, "github/teams")[0]; o.Status != providers.Unknown {
		t.Fatalf("outcome %s %v", o.Status, o.Err)
	}
	e.fake.ClearFaults()
	plan, _ := e.converge() // re-read, then written
	if len(changes(plan)) != 1 {
		t.Fatalf("changes %v", changes(plan))
	}
	e.noop()
}

func TestRateLimits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fault    fakegithub.Fault
		minWait  time.Duration
		limited  int64
		noRetrys bool
	}{
		{"429 with Retry-After on GraphQL", fakegithub.Fault{Path: "/graphql", Kind: fakegithub.TooManyRequests, RetryAfter: 30 * time.Second}, 30 * time.Second, 1, false},
		{"secondary limit without Retry-After on a write", fakegithub.Fault{Method: "PUT", Kind: fakegithub.SecondaryLimit}, time.Minute, 1, false},
		{"secondary limit with Retry-After", fakegithub.Fault{Method: "PUT", Kind: fakegithub.SecondaryLimit, RetryAfter: 5 * time.Second}, 5 * time.Second, 1, false},
		{"primary limit on the create POST", fakegithub.Fault{Method: "POST", Path: "/orgs/acme/teams", Kind: fakegithub.PrimaryLimit, RetryAfter: 2 * time.Minute}, 2 * time.Minute, 1, false},
		{"GraphQL RATE_LIMITED", fakegithub.Fault{Path: "/graphql", Kind: fakegithub.GraphQLRateLimited, RetryAfter: 10 * time.Second}, 10 * time.Second, 1, false},
		{"two 502s on a PUT", fakegithub.Fault{Method: "PUT", Kind: fakegithub.Status, Status: 502, Times: 2}, time.Second, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.noOrg = true
			e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\n"})
			f := tc.fault
			if f.Times == 0 {
				f.Times = 1
			}
			e.fake.AddFault(f)
			reg := e.registry()
			rep := e.apply(reg, e.plan(reg))
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			c := reg.Counters()
			if c["retries"] < 1 || c["rate_limited"] != tc.limited {
				t.Errorf("counters %v", c)
			}
			if waited := time.Duration(c["rate_limit_wait_ms"]+c["backoff_wait_ms"]) * time.Millisecond; waited < tc.minWait {
				t.Errorf("waited %s, want at least %s", waited, tc.minWait)
			}
			if len(e.fake.Teams("acme")) != 1 {
				t.Fatalf("teams %v", e.fake.Teams("acme"))
			}
			e.noop()
		})
	}
}

func TestPrimaryLimitWindow(t *testing.T) {
	// The fake allows 3 REST requests per hour: the fourth write waits for the reset (on the
	// fake clock) when the wait budget allows it, and stops the run cleanly when it does not.
	for _, budget := range []time.Duration{-1, 10 * time.Minute} {
		e := newEnv(t, fakegithub.Options{RateLimit: 3})
		seedOrg(e)
		e.noOrg = true
		e.opt.MaxWait = budget
		e.opt.WriteConcurrency = 1
		e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = bob\nusername = carol\nusername = dave\n"})
		reg := e.registry()
		rep := e.apply(reg, e.plan(reg))
		err := rep.Err()
		if budget < 0 {
			if err != nil {
				t.Fatal(err)
			}
			if e.clk.Slept() < 50*time.Minute {
				t.Errorf("slept %s", e.clk.Slept())
			}
			eng, _ := e.fake.Team("acme", "eng")
			if len(eng.Members) != 4 {
				t.Fatalf("members %v", eng.Members)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "wait budget") {
			t.Fatalf("err %v", err)
		}
		for _, o := range outcomes(rep, "github/teams") {
			if o.Status != providers.Failed || !errors.Is(o.Err, github.ErrBudget) {
				t.Errorf("outcome %s %v", o.Status, o.Err)
			}
		}
		if e.clk.Slept() > budget {
			t.Errorf("slept %s past the budget", e.clk.Slept())
		}
	}
}

func TestRequestBudget(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.write(orgFiles)
	e.write(teamFiles())
	e.opt.MaxRequests = 1
	plan := e.plan(e.registry())
	err := plan.Err()
	if err == nil || !errors.Is(err, github.ErrBudget) || !strings.Contains(err.Error(), "MaxRequests") {
		t.Fatalf("err %v", err)
	}
}

func TestFailedAliasIsAskedAgain(t *testing.T) {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.noOrg = true
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice", "bob"}})
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "ops", Members: []string{"carol"}})
	e.write(teamFiles())
	e.fake.FailTeamAlias("acme", "eng", 2)
	e.fake.ResetStats()
	plan := e.plan(e.registry())
	if err := plan.Err(); err != nil || len(changes(plan)) != 0 {
		t.Fatalf("plan %v %v", err, changes(plan))
	}
	// One batch of both teams, then eng alone twice (ops is not asked again).
	if st := e.fake.Stats(); st.GraphQLTeamDocs != 3 || st.TeamAliases != 4 {
		t.Fatalf("stats %+v", st)
	}
}
