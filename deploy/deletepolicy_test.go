package deploy_test

import (
	"context"
	"testing"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// silent is a provider that states no delete policy: only Read and Apply.
type silent struct{ p providers.Provider }

func (s silent) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	return s.p.Read(ctx, t)
}

func (s silent) Apply(ctx context.Context, t *providers.Target, cs []*providers.Change) []providers.Outcome {
	return s.p.Apply(ctx, t, cs)
}

// A provider that does not say it deletes groups never deletes one: an undefined group is left
// alone rather than deleted (fail closed).
func TestNoDeletePolicyNeverDeletes(t *testing.T) {
	res, cfg := repo(t, defs)
	for _, tc := range []struct {
		name    string
		p       providers.Provider
		deletes bool
	}{
		{"a policy that deletes", fake.New(), true},
		{"no policy", silent{fake.New()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seeded *fake.Provider
			switch p := tc.p.(type) {
			case *fake.Provider:
				seeded = p
			case silent:
				seeded = p.p.(*fake.Provider)
			}
			seeded.Seed("apps", &providers.Group{DN: "cn=old,ou=Apps", Members: []string{"alice"}})
			f := func(*config.OU) (providers.Provider, error) { return tc.p, nil }
			plan, err := deploy.Build(context.Background(), res, cfg, deploy.Options{Backends: backends.Spec().WithFactory(f)})
			if err != nil || plan.Err() != nil {
				t.Fatal(err, plan.Err())
			}
			deleted := false
			for _, tp := range plan.Targets {
				for _, c := range tp.Changes {
					deleted = deleted || c.Kind == providers.DeleteGroup
				}
			}
			if deleted != tc.deletes {
				t.Errorf("cn=old deleted: %v, want %v", deleted, tc.deletes)
			}
		})
	}
}
