// Package backend is where a backend type (the `type:` of an OU entry) is described once: its
// config spec (keys, secrets, processing order, enumeration, when two OUs overlap) and the
// factory of its provider. Each backend package declares its own descriptions (providers/ldap:
// ldap and member_of; providers/github: github_org and github_team; Azure AD: aad) and a
// Registry gathers the ones a program uses; the config loader, the calculation and deploy see
// only what the registry hands them (Types, Factories) and never name a type.
//
// Adding a backend is writing one package that returns a Backend, and registering it:
//
//	reg, err := backend.NewRegistry(append(ldapReg.Backends(), myBackend())...)
//	calcOpt.Types = reg.Types()
//	deployOpt.Providers = reg.Factories()
package backend

import (
	"errors"
	"fmt"
	"slices"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
)

// Backend describes one backend type.
type Backend struct {
	// Spec is what the config loader and the calculation need; Spec.Name is the type.
	Spec config.TypeSpec
	// New builds the provider of one OU of the type. It is nil for a type whose OUs are never
	// targets (Spec.CalculateOnly), and may be nil for a type this program can calculate but
	// not write (the provider was left out of the build): planning such an OU fails with a
	// message that says so.
	New providers.Factory
	// Derive plans the targets of a derived type (Spec.Derived); nil for every other type.
	// Their providers write through providers.PersonWriter.
	Derive providers.Deriver
}

// Dummy is the `dummy` type of the reference: an OU whose files are calculated when other
// groups reference them, never enumerated, never written; any key is accepted.
func Dummy() Backend {
	return Backend{Spec: config.TypeSpec{Name: "dummy", Priority: 10, AnyKeys: true, CalculateOnly: true}}
}

// Registry is a set of backends by type name, checked once when it is made.
type Registry struct {
	list []Backend
}

// ErrInvalid is wrapped by the errors of NewRegistry.
var ErrInvalid = errors.New("invalid backend")

// NewRegistry checks the backends and gathers them: every type has a name, no name is
// registered twice, a type whose OUs are never targets has no factory, and a derived type (one
// that writes from the groups of other OUs) cannot also be calculate-only.
func NewRegistry(backends ...Backend) (*Registry, error) {
	seen := map[string]bool{}
	var errs []error
	for _, b := range backends {
		s := b.Spec
		switch {
		case s.Name == "":
			errs = append(errs, fmt.Errorf("%w: a backend has no type name", ErrInvalid))
		case seen[s.Name]:
			errs = append(errs, fmt.Errorf("%w: type %q is registered twice", ErrInvalid, s.Name))
		case s.CalculateOnly && b.New != nil:
			errs = append(errs, fmt.Errorf("%w: type %q is calculate-only but has a provider factory", ErrInvalid, s.Name))
		case s.CalculateOnly && s.Derived:
			errs = append(errs, fmt.Errorf("%w: type %q cannot be both derived and calculate-only", ErrInvalid, s.Name))
		case s.Derived != (b.Derive != nil):
			errs = append(errs, fmt.Errorf("%w: type %q must have a planner (Derive) exactly when it is derived", ErrInvalid, s.Name))
		case s.Derived && s.Enumerates:
			errs = append(errs, fmt.Errorf("%w: type %q is derived and has no files to enumerate", ErrInvalid, s.Name))
		}
		seen[s.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Registry{list: slices.Clone(backends)}, nil
}

// Types are the config specs of every registered type (config.Options.Types,
// calc.Options.Types).
func (r *Registry) Types() []config.TypeSpec {
	out := make([]config.TypeSpec, len(r.list))
	for i, b := range r.list {
		out[i] = b.Spec
	}
	return out
}

// Factories are the provider factories by type (deploy.Options.Providers); types without
// one are left out.
func (r *Registry) Factories() map[string]providers.Factory {
	out := map[string]providers.Factory{}
	for _, b := range r.list {
		if b.New != nil {
			out[b.Spec.Name] = b.New
		}
	}
	return out
}

// WithFactory is the registry with f as the factory of the named types, or of every type
// whose OUs are targets when none is named: the same specs and planners, the providers
// simulated (a plan against a state file) or replaced (tests).
func (r *Registry) WithFactory(f providers.Factory, types ...string) *Registry {
	out := &Registry{list: slices.Clone(r.list)}
	for i, b := range out.list {
		if !b.Spec.CalculateOnly && (len(types) == 0 || slices.Contains(types, b.Spec.Name)) {
			out.list[i].New = f
		}
	}
	return out
}

// Lookup returns the backend of a type.
func (r *Registry) Lookup(name string) (Backend, bool) {
	i := slices.IndexFunc(r.list, func(b Backend) bool { return b.Spec.Name == name })
	if i < 0 {
		return Backend{}, false
	}
	return r.list[i], true
}
