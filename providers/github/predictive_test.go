package github_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

const (
	orgBase  = "ou=org,ou=GitHub,dc=example,dc=net"
	teamBase = "ou=teams,ou=GitHub,dc=example,dc=net"
)

// predictiveEnv is an org with two roles and two teams, applied once.
func predictiveEnv(t *testing.T) *env {
	e := newEnv(t, fakegithub.Options{AutoAccept: true})
	e.write(map[string]string{
		"ldap-config/github/org/admin.txt":  "username = alice\n",
		"ldap-config/github/org/member.txt": "username = bob\nusername = carol\nusername = dave\n",
		"ldap-config/github/teams/eng.txt":  "username = alice\nusername = Bob\nmetadata_team_maintainers = alice\n",
		"ldap-config/github/teams/ops.txt":  "username = carol\n",
	})
	e.converge()
	return e
}

// state writes a predictive state directory in the audit log's nested layout or the flat
// one, one file per DN with the given content.
func writeState(t *testing.T, nested bool, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for dn, content := range files {
		name := dn
		if nested {
			name = filepath.FromSlash(cache.PathFromDN(dn))
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// appliedState is the audit log of predictiveEnv's applied state.
func appliedState() map[string]string {
	return map[string]string{
		"cn=admin," + orgBase:  "alice\n",
		"cn=member," + orgBase: "bob\ncarol\ndave\n",
		"cn=eng," + teamBase:   "alice\nbob\nmetadata_team_maintainers=alice\n",
		"cn=ops," + teamBase:   "carol\n",
	}
}

func counter(p *deploy.Plan, ou, k string) int64 {
	return target(p, ou).Counters[k]
}

func TestPredictiveStateBothLayouts(t *testing.T) {
	for _, nested := range []bool{false, true} {
		t.Run(map[bool]string{false: "flat", true: "nested"}[nested], func(t *testing.T) {
			e := predictiveEnv(t)
			pred, err := cache.LoadPredictive(writeState(t, nested, appliedState()))
			if err != nil {
				t.Fatal(err)
			}
			e.opt.Predictive = pred
			e.fake.ResetStats()
			plan := e.plan(e.registry())
			if err := plan.Err(); err != nil {
				t.Fatal(err)
			}
			if c := changes(plan); len(c) != 0 {
				t.Fatalf("changes %v", c)
			}
			if got := counter(plan, "github/org", "predictive_hits"); got != 2 {
				t.Errorf("org predictive hits %d, want 2", got)
			}
			if got := counter(plan, "github/teams", "predictive_hits"); got != 2 {
				t.Errorf("team predictive hits %d, want 2", got)
			}
			for _, ou := range []string{"github/org", "github/teams"} {
				if got := counter(plan, ou, "member_reads"); got != 0 {
					t.Errorf("%s member reads %d, want 0", ou, got)
				}
			}
			st := e.fake.Stats()
			// Only the pending invitations are read (never cached): one GraphQL query.
			if st.GraphQLTeamDocs != 0 || st.REST != 0 || st.GraphQL != 1 {
				t.Errorf("requests with a complete predictive state: %+v", st)
			}
		})
	}
}

func TestPredictiveStateInvalidation(t *testing.T) {
	e := predictiveEnv(t)
	state := appliedState()
	// Drift outside the tool: a cached team equal to its definition is trusted (by design),
	// even though GitHub now differs...
	if _, ok := e.fake.Team("acme", "ops"); !ok {
		t.Fatal("no ops team")
	}
	e.fake.SetMember("acme", "erin", "member")
	// ...and two definitions changed since the cache was written: eng gains dave, and the
	// ops team's file in the cache is stale (it lists frank).
	e.write(map[string]string{"ldap-config/github/teams/eng.txt": "username = alice\nusername = Bob\nusername = dave\nmetadata_team_maintainers = alice\n"})
	state["cn=ops,"+teamBase] = "carol\nfrank\n"
	pred, err := cache.LoadPredictive(writeState(t, true, state))
	if err != nil {
		t.Fatal(err)
	}
	e.opt.Predictive = pred
	e.fake.ResetStats()
	plan := e.plan(e.registry())
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	// Both teams were invalidated and read in ONE aliased query; only the API data became a
	// change (ops is as defined on GitHub: no change, whatever the stale cache said).
	if st := e.fake.Stats(); st.GraphQLTeamDocs != 1 || st.TeamAliases != 2 {
		t.Errorf("invalidated teams not read in one bulk query: %+v", st)
	}
	c := changes(plan)
	if len(c) != 1 || !strings.Contains(c[0], "CHANGE cn=eng") || !strings.Contains(c[0], "(+1 -0)") {
		t.Fatalf("changes %v, want only dave added to eng", c)
	}
	// erin joined the org outside the tool: the org roles equal their cache, so the drift is
	// not seen (spec §2.3 item 4); a full plan (no predictive state) sees it.
	e.opt.Predictive = nil
	full := changes(e.plan(e.registry()))
	if len(full) != 2 || !strings.Contains(strings.Join(full, " "), "CHANGE cn=member") {
		t.Errorf("full plan %v, want erin's removal too", full)
	}
	// The two teams, plus the org's two role lists: teams that are read need the org's
	// members (users outside the org are left out of a team), whatever the org target's cache.
	if got := counter(plan, "github/teams", "member_reads"); got != 4 {
		t.Errorf("member reads %d, want 4", got)
	}
	if _, ok := pred.Lookup("cn=eng," + teamBase); ok {
		t.Error("the differing entry is still served")
	}
}

func TestPredictiveOrgNeedsBothRolesAndReadsPending(t *testing.T) {
	t.Run("one role file", func(t *testing.T) {
		e := predictiveEnv(t)
		state := appliedState()
		delete(state, "cn=admin,"+orgBase)
		pred, _ := cache.LoadPredictive(writeState(t, false, state))
		e.opt.Predictive = pred
		plan := e.plan(e.registry())
		if got := counter(plan, "github/org", "predictive_hits"); got != 0 {
			t.Errorf("hits %d with one role file", got)
		}
		if got := counter(plan, "github/org", "member_reads"); got != 2 {
			t.Errorf("member reads %d, want the two role lists", got)
		}
	})
	t.Run("pending invitation to cancel", func(t *testing.T) {
		e := predictiveEnv(t)
		e.fake.Invite("acme", "hank", "member")
		pred, _ := cache.LoadPredictive(writeState(t, false, appliedState()))
		e.opt.Predictive = pred
		plan := e.plan(e.registry())
		if got := counter(plan, "github/org", "predictive_hits"); got != 0 {
			t.Errorf("hits %d: a pending invitation nobody wants must be planned from API data", got)
		}
		if c := changes(plan); len(c) != 1 || !strings.Contains(c[0], "cn=member") {
			t.Errorf("changes %v, want hank's invitation cancelled", c)
		}
		if _, ok := pred.Lookup("cn=admin," + orgBase); ok {
			t.Error("org entries not invalidated")
		}
	})
}
