// Package backends gathers the built-in backend types of entitlements-go: ldap and member_of
// (providers/ldap), github_org and github_team (providers/github), aad (Azure AD) and dummy.
//
// Spec returns them without providers: enough to load and calculate any config
// (calc.Options.Types) and to plan against simulated providers (Registry.WithFactory). A
// program that writes to the real systems builds the providers' registries and passes them to
// New. Azure AD's provider compiles the Microsoft Graph SDK, so it is not built in: a program
// that needs it adds providers/aad's backend (aad.Backends) to New's extra backends, which
// replace the built-in descriptions of the same type.
package backends

import (
	"log/slog"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers/aadspec"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/ldap"
)

// Providers are the provider registries the built-in backends use; nil ones leave their
// types without providers (calculated, not written).
type Providers struct {
	LDAP   *ldap.Registry
	GitHub *github.Registry
}

// New is the registry of the built-in backend types with the given providers, and extra
// backends (a type of the same name replaces the built-in one).
func New(p Providers, extra ...backend.Backend) (*backend.Registry, error) {
	var list []backend.Backend
	list = append(list, ldap.Backends(p.LDAP)...)
	list = append(list, backend.Dummy())
	list = append(list, github.Backends(p.GitHub)...)
	list = append(list, aadspec.Backend())
	for _, x := range extra {
		replaced := false
		for i := range list {
			if list[i].Spec.Name == x.Spec.Name {
				list[i], replaced = x, true
			}
		}
		if !replaced {
			list = append(list, x)
		}
	}
	return backend.NewRegistry(list...)
}

// Spec is the registry of the built-in backend types without providers.
func Spec() *backend.Registry {
	r, err := New(Providers{})
	if err != nil {
		panic("backends: the built-in backends are inconsistent: " + err.Error()) // a bug, never input
	}
	return r
}

// Types are the config specs of the built-in backend types (calc.Options.Types).
func Types() []config.TypeSpec { return Spec().Types() }

// Options configure Open. Zero fields take the providers' documented defaults.
type Options struct {
	// Logger is given to every provider that has none of its own. Default: discard.
	Logger *slog.Logger
	// Predictive is the predictive state of the last applied run (cache.LoadPredictive of a
	// checkout of the audit log), used by the GitHub provider to skip reading groups whose
	// definitions did not change. Default: none, every group is read.
	Predictive *cache.Predictive
	LDAP       ldap.Options
	GitHub     github.Options
}

// Set is the built-in backends with their providers, which own connection pools: Close
// releases them.
type Set struct {
	*backend.Registry
	ldap   *ldap.Registry
	github *github.Registry
}

// Open builds the providers of the built-in backends (LDAP, GitHub) and the registry of every
// built-in type with them, plus extra backends (aad.Backends for Azure AD: a type of the same
// name replaces the built-in one).
func Open(opt Options, extra ...backend.Backend) (*Set, error) {
	if opt.LDAP.Logger == nil {
		opt.LDAP.Logger = opt.Logger
	}
	if opt.GitHub.Logger == nil {
		opt.GitHub.Logger = opt.Logger
	}
	if opt.GitHub.Predictive == nil {
		opt.GitHub.Predictive = opt.Predictive
	}
	s := &Set{ldap: ldap.NewRegistry(opt.LDAP), github: github.NewRegistry(opt.GitHub)}
	reg, err := New(Providers{LDAP: s.ldap, GitHub: s.github}, extra...)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Registry = reg
	return s, nil
}

// LDAP is the LDAP provider registry, which also reads LDAP people sources and ldap_group
// rules for the calculation (providers/ldap/ldapcalc).
func (s *Set) LDAP() *ldap.Registry { return s.ldap }

// Close releases the providers' connections.
func (s *Set) Close() {
	s.ldap.Close()
	s.github.Close()
}
