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
// that live as long as the command (c.stop closes them). A predictive state directory that
// cannot be read fails the run before anything is read (a typo must not silently turn it off).
func (c *common) openBackends() error {
	opt := backends.Options{Logger: c.logger}
	pred, err := c.predictiveState()
	if err != nil {
		return err
	}
	opt.Predictive = pred
	if c.ext.githubHook != nil {
		c.ext.githubHook(&opt.GitHub)
	}
	set, err := backends.Open(opt, aadBackends(c)...)
	if err != nil {
		return err
	}
	c.backends = set
	return nil
}

// targetBackends is the registry whose providers plan and apply. With a state file every
// target type is served by one fake provider seeded from it (a simulation: the bundled example
// plans with no servers at all).
func targetBackends(state string, c *common) (*backend.Registry, error) {
	if state != "" {
		fp, err := fake.LoadState(state)
		if err != nil {
			return nil, err
		}
		return c.backends.WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil }), nil
	}
	if c.ext.providers != nil {
		return c.backends.WithFactory(c.ext.providers), nil
	}
	return c.backends.Registry, nil
}
