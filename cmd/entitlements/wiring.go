package main

import (
	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// openBackends opens the library's backends (backends.Open) for the command: the LDAP
// registry serves the calculation's LDAP people sources and ldap_group rules, and, for plan
// and apply against the real systems, every provider. The providers own connection pools
// that live as long as the command (s.close closes them). A predictive state directory that
// cannot be read fails the run before anything is read (a typo must not silently turn it off).
func (s *session) openBackends() error {
	opt := backends.Options{Logger: s.logger}
	pred, err := s.predictiveState()
	if err != nil {
		return err
	}
	opt.Predictive = pred
	set, err := backends.Open(opt, aadBackends(s)...)
	if err != nil {
		return err
	}
	s.backends = set
	return nil
}

// targetBackends is the registry whose providers plan and apply. With a state file every
// target type is served by one fake provider seeded from it (a simulation: the bundled example
// plans with no servers at all).
func targetBackends(state string, s *session) (*backend.Registry, error) {
	if state != "" {
		fp, err := fake.LoadState(state)
		if err != nil {
			return nil, err
		}
		return s.backends.WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil }), nil
	}
	if s.ext.providers != nil {
		return s.backends.WithFactory(s.ext.providers), nil
	}
	return s.backends.Registry, nil
}
