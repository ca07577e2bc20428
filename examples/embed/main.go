// Command embed shows how a deployment tool embeds entitlements-go: load and validate a repo,
// calculate every group, explain a membership, register a custom rule method, and plan and
// apply against a provider (here the in-memory fake, so it runs with no servers):
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

func main() {
	ctx := context.Background()
	_, here, _, _ := runtime.Caller(0)
	cfgPath := filepath.Join(filepath.Dir(here), "..", "config", "entitlements.yaml")

	repo, err := calc.Load(ctx, cfgPath, calc.Options{Types: backends.Types(),
		// Expirations depend on "today": pin it for reproducible output.
		Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		// A custom rule method: `title = SRE` in a .txt file would match people by title.
		Methods: map[string]calc.Method{
			"title": func(_ context.Context, value string, dir *people.Directory) ([]string, error) {
				var out []string
				for _, uid := range dir.UIDs() {
					id, _ := dir.Lookup(uid)
					if t, _ := dir.Person(id).Attrs["title"].(string); strings.EqualFold(t, value) {
						out = append(out, uid)
					}
				}
				return out, nil
			},
		},
	})
	if err != nil {
		log.Fatalf("invalid repo:\n%v", err) // every problem, one per line, path:line: message
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range res.Groups {
		fmt.Printf("%-24s %s\n", g.Key, strings.Join(g.Members, ","))
	}

	ex, err := res.Explain("apps/prod-ssh", "dave")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println()
	ex.WriteText(os.Stdout)

	// Plan against a provider. A real tool would map backend types to the LDAP, GitHub or
	// AAD providers; the fake keeps state in memory and records every call.
	fp := fake.New()
	fp.Seed("pizza_teams", &providers.Group{DN: "cn=sre,ou=Pizza_Teams,ou=Groups,dc=example,dc=net",
		CN: "sre", Description: "Site reliability engineering", Members: []string{"Dave"}})
	opt := deploy.Options{Backends: backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil }, "ldap")}
	plan, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\nplan: %v\n", plan.Totals())
	if _, err := deploy.Apply(ctx, plan, deploy.ApplyOptions{}); err != nil {
		log.Fatal(err)
	}
	again, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after apply, plan again: %d change(s)\n", len(again.Totals()))
}
