package main

import (
	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/providers/github"
)

// realBackends is the registry of the backend types this binary supports, with real
// providers. The providers' registries own connection pools and live as long as the command
// (c.stop closes them). A predictive state directory that cannot be read fails the whole run
// (a typo must not silently turn it off).
func realBackends(c *common) (*backend.Registry, error) {
	pred, err := c.predictiveState()
	if err != nil {
		return nil, err
	}
	gopt := github.Options{Logger: c.logger, Predictive: pred}
	if c.ext.githubHook != nil {
		c.ext.githubHook(&gopt)
	}
	c.github = github.NewRegistry(gopt)
	return backends.New(backends.Providers{LDAP: c.ldap, GitHub: c.github}, aadBackends(c)...)
}
