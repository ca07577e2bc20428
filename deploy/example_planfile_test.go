package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"testing/fstest"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// A plan is saved for review, then applied later only where nothing moved in between: the
// target whose state drifted is refused and not written.
func ExampleSavedPlan() {
	ctx := context.Background()
	fsys := fstest.MapFS{
		"config.yaml":        {Data: []byte(cfgYAML)},
		"people.yaml":        {Data: []byte("alice: {}\nbob: {}\n")},
		"defs/teams/sre.txt": {Data: []byte("username = alice\n")},
		"defs/apps/ssh.txt":  {Data: []byte("username = bob\n")},
	}
	repo, err := calc.LoadFS(ctx, fsys, "config.yaml", calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		panic(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		panic(err)
	}
	fp := fake.New()
	f := func(*config.OU) (providers.Provider, error) { return fp, nil }
	opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of")}

	plan, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	if _, err := plan.Save(deploy.InputsOf(repo)).WriteTo(&file); err != nil { // entitlements plan --out PLANFILE
		panic(err)
	}

	// Later, someone adds carol to the sre team by hand.
	fp.Seed("teams", &providers.Group{DN: "cn=sre,ou=Teams", Members: []string{"carol"}})

	saved, err := deploy.ReadPlan(&file) // entitlements apply PLANFILE
	if err != nil {
		panic(err)
	}
	fresh, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil {
		panic(err)
	}
	if err := fresh.Restrict(saved, deploy.InputsOf(repo)); err != nil {
		panic(err) // not the config's targets: nothing of it may be applied
	}
	rep, err := deploy.Apply(ctx, fresh, deploy.ApplyOptions{})
	for _, t := range rep.Targets {
		if t.Err != nil {
			fmt.Printf("%s: refused\n", t.OU)
		} else {
			fmt.Printf("%s: %d change(s) applied\n", t.OU, len(t.Outcomes))
		}
	}
	fmt.Println("error:", err != nil)
	// Output:
	// apps: 1 change(s) applied
	// teams: refused
	// shell: 1 change(s) applied
	// error: true
}
