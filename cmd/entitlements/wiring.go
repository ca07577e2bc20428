package main

import (
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
)

// realFactories builds the providers for the backend types this binary supports. The
// registries own connection pools and live as long as the command (c.stop closes them).
func realFactories(c *common) map[string]deploy.Factory {
	ldapFactory := func(ou *config.OU) (providers.Provider, error) { return c.ldap.Provider(ou) }
	c.github = github.NewRegistry(github.Options{Logger: c.logger})
	ghFactory := func(ou *config.OU) (providers.Provider, error) { return c.github.Provider(ou) }
	out := map[string]deploy.Factory{
		"ldap":        ldapFactory,
		"member_of":   ldapFactory,
		"github_org":  ghFactory,
		"github_team": ghFactory,
	}
	addAAD(c, out)
	return out
}
