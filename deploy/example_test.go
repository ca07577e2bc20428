package deploy_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// Plan the changes that bring a target in step with a calculation, apply them, and plan
// again: the second plan is empty. The fake provider stands in for LDAP.
func Example() {
	ctx := context.Background()
	repo, err := calc.Load(ctx, "../examples/config/entitlements.yaml",
		calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		log.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		log.Fatal(err)
	}

	fp := fake.New()
	fp.Seed("pizza_teams", &providers.Group{DN: "cn=sre,ou=Pizza_Teams,ou=Groups,dc=example,dc=net",
		CN: "sre", Description: "Site reliability engineering", Members: []string{"Dave", "frank"}})
	opt := deploy.Options{Backends: backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil }, "ldap")}

	plan, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range plan.Targets {
		for _, c := range t.Changes {
			if c.DN == "cn=sre,ou=Pizza_Teams,ou=Groups,dc=example,dc=net" {
				fmt.Printf("%s %s: add %v, remove %v\n", t.OU, c.Kind, c.Add, c.Remove)
			}
		}
	}
	if rep, err := deploy.Apply(ctx, plan, opt.ApplyOptions()); err != nil {
		log.Fatal(rep.Err())
	}
	again, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("changes after apply:", len(again.Totals()))
	// Output:
	// pizza_teams update: add [erin mallory], remove [frank]
	// changes after apply: 0
}
