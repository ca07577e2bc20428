package backend_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

type deriver struct{}

func (deriver) Sources(*config.OU, *config.Config) ([]string, error) { return nil, nil }
func (deriver) Plan(*config.OU, providers.DerivedInput) (*providers.DerivedPlan, error) {
	return &providers.DerivedPlan{}, nil
}

func TestNewRegistryRefusesInconsistentBackends(t *testing.T) {
	f := func(*config.OU) (providers.Provider, error) { return fake.New(), nil }
	ok := backend.Backend{Spec: config.TypeSpec{Name: "x", Enumerates: true}, New: f}
	for _, tc := range []struct {
		name string
		bs   []backend.Backend
		want string // "" = accepted
	}{
		{"one backend", []backend.Backend{ok}, ""},
		{"the dummy type", []backend.Backend{ok, backend.Dummy()}, ""},
		{"no name", []backend.Backend{{New: f}}, "has no type name"},
		{"twice", []backend.Backend{ok, ok}, `"x" is registered twice`},
		{"calculate-only with a factory", []backend.Backend{{Spec: config.TypeSpec{Name: "d", CalculateOnly: true}, New: f}}, "calculate-only but has a provider factory"},
		{"derived without a planner", []backend.Backend{{Spec: config.TypeSpec{Name: "m", Derived: true}, New: f}}, "planner (Derive) exactly when it is derived"},
		{"a planner on a type that is not derived", []backend.Backend{{Spec: config.TypeSpec{Name: "m"}, Derive: deriver{}}}, "planner (Derive) exactly when it is derived"},
		{"derived and enumerating", []backend.Backend{{Spec: config.TypeSpec{Name: "m", Derived: true, Enumerates: true}, Derive: deriver{}}}, "no files to enumerate"},
		{"derived and calculate-only", []backend.Backend{{Spec: config.TypeSpec{Name: "m", Derived: true, CalculateOnly: true}, Derive: deriver{}}}, "both derived and calculate-only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := backend.NewRegistry(tc.bs...)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && r == nil:
				t.Fatal("nil registry")
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, backend.ErrInvalid)):
				t.Fatalf("error %v, want one wrapping ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}

func TestRegistryHandsOutSpecsAndFactories(t *testing.T) {
	real := fake.New()
	f := func(*config.OU) (providers.Provider, error) { return real, nil }
	r, err := backend.NewRegistry(
		backend.Backend{Spec: config.TypeSpec{Name: "groups", Enumerates: true}, New: f},
		backend.Backend{Spec: config.TypeSpec{Name: "calc-only-build", Enumerates: true}}, // no provider in this build
		backend.Backend{Spec: config.TypeSpec{Name: "derived", Derived: true}, New: f, Derive: deriver{}},
		backend.Dummy(),
	)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Types() {
		names = append(names, s.Name)
	}
	if want := []string{"groups", "calc-only-build", "derived", "dummy"}; !slices.Equal(names, want) {
		t.Errorf("Types = %v, want %v (registration order)", names, want)
	}
	fs := r.Factories()
	if len(fs) != 2 || fs["groups"] == nil || fs["derived"] == nil {
		t.Errorf("Factories = %v: want groups and derived only", fs)
	}
	if b, ok := r.Lookup("derived"); !ok || b.Derive == nil {
		t.Errorf("Lookup(derived) = %+v, %v", b, ok)
	}
	if _, ok := r.Lookup("nope"); ok {
		t.Error("Lookup of an unknown type succeeded")
	}

	sim := fake.New()
	w := r.WithFactory(func(*config.OU) (providers.Provider, error) { return sim, nil })
	for _, name := range []string{"groups", "calc-only-build", "derived"} {
		b, _ := w.Lookup(name)
		if p, _ := b.New(nil); p != sim {
			t.Errorf("WithFactory: %s is not served by the simulated provider", name)
		}
	}
	if d, _ := w.Lookup("dummy"); d.New != nil {
		t.Error("WithFactory gave the calculate-only dummy type a factory")
	}
	if d, _ := w.Lookup("derived"); d.Derive == nil {
		t.Error("WithFactory lost the planner of the derived type")
	}
	only := r.WithFactory(func(*config.OU) (providers.Provider, error) { return sim, nil }, "derived")
	if b, _ := only.Lookup("calc-only-build"); b.New != nil {
		t.Error("WithFactory(f, derived) gave another type a factory")
	}
	if b, _ := only.Lookup("groups"); func() providers.Provider { p, _ := b.New(nil); return p }() != real {
		t.Error("WithFactory(f, derived) replaced the factory of another type")
	}
	if b, _ := r.Lookup("groups"); func() providers.Provider { p, _ := b.New(nil); return p }() != real {
		t.Error("WithFactory changed the registry it was called on")
	}
}
