package drift_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/drift"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// Find what was changed outside the tool since the last apply: the fake provider stands in
// for LDAP, a directory of state files for the predictive state that apply leaves (the
// GitRepo audit log's checkout).
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
	fp, err := fake.LoadState("../examples/state.json")
	if err != nil {
		log.Fatal(err)
	}

	// The last applied state: what the targets held after the last apply.
	dir, err := os.MkdirTemp("", "last-applied")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, ou := range []string{"apps", "pizza_teams"} {
		for _, g := range fp.Groups(ou) {
			if err := os.WriteFile(filepath.Join(dir, cache.FileNameFromDN(g.DN)), cache.StateFile(g.Members, nil), 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
	last, err := cache.LoadPredictive(dir)
	if err != nil {
		log.Fatal(err)
	}

	// Behind the tool's back, someone gives mallory SSH to production.
	fp.Seed("apps", &providers.Group{DN: "cn=prod-ssh,ou=Apps,ou=Groups,dc=example,dc=net", CN: "prod-ssh",
		Members: []string{"Dave", "erin", "frank", "grace", "mallory"}})

	reg := backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil })
	rep, err := drift.Detect(ctx, repo, res, drift.Options{Backends: reg, LastApplied: last})
	if err != nil {
		log.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		log.Fatal(err) // a target whose drift is unknown
	}
	for _, t := range rep.Targets {
		fmt.Println(t.OU, t.Status)
		for _, g := range t.Groups {
			fmt.Printf("  %s %s: added %v, removed %v\n", g.Kind, g.DN, g.Added, g.Removed)
		}
	}
	fmt.Println("pending changes of the definitions:", len(rep.Plan.Totals()) > 0)
	// Output:
	// apps drift
	//   changed cn=prod-ssh,ou=Apps,ou=Groups,dc=example,dc=net: added [mallory], removed []
	// pizza_teams no_drift
	// pending changes of the definitions: true
}
