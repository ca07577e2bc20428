package github_test

import (
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// Issue 20: a team whose parent was trusted from the predictive state escaped the
// secret-parent check. The parent's cached state says nothing of its privacy (the audit log
// records members and metadata), so a parent that is secret on GitHub while its file does
// not set team_privacy was taken for nestable, and GitHub refused the nesting half-way
// through the apply. A parent of a team that is read (to be changed or created) is read too.
func TestSecretParentFromPredictiveState(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kid     string // kid.txt; its cached state (if any) is in the predictive state too
		cached  bool
		want    string // "" = plans without error
		changes int
	}{
		{"a new child of a secret parent", "username = bob\nmetadata_parent_team_name = vault\n", false,
			"names vault as its parent_team_name, but vault is secret (secret on GitHub, and ", 0},
		{"a changed child moved under a secret parent", "username = bob\nusername = carol\nmetadata_parent_team_name = vault\n", true,
			"names vault as its parent_team_name, but vault is secret", 0},
		{"a child that does not change is trusted with its parent", "username = bob\n", true, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegithub.Options{})
			seedOrg(e)
			e.noOrg = true
			e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "vault", Privacy: "secret", Members: []string{"alice"}})
			files := map[string]string{"ldap-config/github/teams/vault.txt": "username = alice\n"}
			state := map[string]string{"cn=vault," + teamBase: "alice\n"}
			if tc.cached {
				e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "kid", Members: []string{"bob"}})
				files["ldap-config/github/teams/kid.txt"] = "username = bob\n"
				state["cn=kid,"+teamBase] = "bob\n"
			}
			e.write(files)
			e.noop() // the applied state, which the predictive state records
			e.write(map[string]string{"ldap-config/github/teams/kid.txt": tc.kid})
			pred, err := cache.LoadPredictive(writeState(t, true, state))
			if err != nil {
				t.Fatal(err)
			}
			e.opt.Predictive = pred
			plan := e.plan(e.registry())
			tp := target(plan, "github/teams")
			if tc.want == "" {
				if tp.Err != nil {
					t.Fatalf("plan: %v", tp.Err)
				}
				if got := counter(plan, "github/teams", "predictive_hits"); got != 2 {
					t.Errorf("predictive hits %d, want both teams", got)
				}
				return
			}
			if tp.Err == nil || !strings.Contains(tp.Err.Error(), tc.want) {
				t.Fatalf("plan error %v, want %q (changes %v)", tp.Err, tc.want, changes(plan))
			}
		})
	}
}
