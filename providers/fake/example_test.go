package fake_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// Test a tool that writes through a provider: seed state, inject a failure, and check what
// was called and what the state became.
func Example() {
	ctx := context.Background()
	p := fake.New()
	p.Seed("teams", &providers.Group{DN: "cn=a,ou=Teams", CN: "a", Members: []string{"alice"}})
	p.FailApply(func(c *providers.Change) error {
		if c.DN == "cn=b,ou=Teams" {
			return errors.New("injected: server busy")
		}
		return nil
	})

	t := &providers.Target{OU: &config.OU{Key: "teams"}}
	changes := []*providers.Change{
		{Kind: providers.UpdateGroup, OU: "teams", DN: "cn=a,ou=Teams", Add: []string{"bob"},
			Desired: &providers.Group{DN: "cn=a,ou=Teams", CN: "a", Members: []string{"alice", "bob"}}},
		{Kind: providers.CreateGroup, OU: "teams", DN: "cn=b,ou=Teams", Add: []string{"carol"},
			Desired: &providers.Group{DN: "cn=b,ou=Teams", CN: "b", Members: []string{"carol"}}},
	}
	for _, o := range p.Apply(ctx, t, changes) {
		fmt.Println(o.Change.DN, o.Status, o.Err)
	}
	for _, g := range p.Groups("teams") {
		fmt.Println(g.DN, g.Members)
	}
	fmt.Println(len(p.Calls()), "call(s) recorded")
	// Output:
	// cn=a,ou=Teams applied <nil>
	// cn=b,ou=Teams failed injected: server busy
	// cn=a,ou=Teams [alice bob]
	// 2 call(s) recorded
}
