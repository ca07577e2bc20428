package main

import (
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
)

// realFactories builds the providers for the backend types this binary supports. The
// registries own connection pools and live as long as the command (c.stop closes them). A
// predictive state directory that cannot be read fails the whole run (a typo must not
// silently turn it off).
func realFactories(c *common) (map[string]deploy.Factory, error) {
	ldapFactory := func(ou *config.OU) (providers.Provider, error) { return c.ldap.Provider(ou) }
	pred, err := c.predictiveState()
	if err != nil {
		return nil, err
	}
	gopt := github.Options{Logger: c.logger, Predictive: pred}
	if c.ext.githubHook != nil {
		c.ext.githubHook(&gopt)
	}
	c.github = github.NewRegistry(gopt)
	ghFactory := func(ou *config.OU) (providers.Provider, error) { return c.github.Provider(ou) }
	out := map[string]deploy.Factory{
		"ldap":        ldapFactory,
		"member_of":   ldapFactory,
		"github_org":  ghFactory,
		"github_team": ghFactory,
	}
	addAAD(c, out)
	return out, nil
}
