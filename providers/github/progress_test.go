package github

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// A team read reports after each GraphQL query how many of the teams are read to their last
// member page: the big team's second page comes in a later round, so it settles last.
func TestTeamReadReportsEachQuery(t *testing.T) {
	f := fakegithub.New(fakegithub.Options{Token: "tok", Schema: fakegithub.TestSchema(t)})
	defer f.Close()
	f.SetMember("acme", "alice", "member")
	var big []string
	for i := range pageSize + 50 {
		big = append(big, fmt.Sprintf("u%03d", i))
	}
	names := []string{"big", "t1", "t2", "t3", "t4"}
	for _, n := range names {
		members := []string{"alice"}
		if n == "big" {
			members = big
		}
		if _, err := f.AddTeam("acme", fakegithub.TeamSpec{Name: n, Members: members}); err != nil {
			t.Fatal(err)
		}
	}
	settings, err := config.ParseValue("org: acme\ntoken: tok\n")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(Options{BaseURL: f.URL() + "/", BatchSize: 2})
	defer r.Close()
	ou := &config.OU{Key: "github/teams", Type: "github_team", Base: "ou=teams,dc=example,dc=net", Settings: settings}
	pv, err := r.Provider(ou)
	if err != nil {
		t.Fatal(err)
	}
	p := pv.(*TeamProvider)
	var got []providers.ReadProgress
	target := &providers.Target{OU: ou, Progress: func(rp providers.ReadProgress) { got = append(got, rp) }}
	for _, n := range names {
		g := &providers.Group{DN: "cn=" + n + ",ou=teams,dc=example,dc=net", CN: n, Members: []string{"alice"}}
		if err := p.Desire(target, g); err != nil {
			t.Fatal(err)
		}
	}
	st, err := p.Read(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Groups) != len(names) {
		t.Fatalf("%d teams read, want %d", len(st.Groups), len(names))
	}
	// Three queries of the first round (2+2+1 teams) settle every team but big; one more
	// query reads big's second member page.
	if len(got) != 4 || got[2] != (providers.ReadProgress{Groups: 4, Total: 5}) || got[3] != (providers.ReadProgress{Groups: 5, Total: 5}) ||
		!slices.IsSortedFunc(got, func(a, b providers.ReadProgress) int { return a.Groups - b.Groups }) {
		t.Errorf("progress %+v", got)
	}
}
