// Package ldapcalc connects the LDAP provider to the calculator, so that a program embedding
// both reads `ldap_group` rules, MemberOfLDAPGroup filters and ldap people sources through
// the provider's connection pools, as the entitlements CLI does:
//
//	reg := ldap.NewRegistry(ldap.Options{})
//	defer reg.Close()
//	repo, err := calc.Load(ctx, path, ldapcalc.Options(reg, calc.Options{Types: backends.Types()}))
//
// It is a package of its own because the provider must not depend on the calculator
// (providers only see groups and changes) and the calculator must not pull in an LDAP
// client for repos that never use one.
package ldapcalc

import (
	"context"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers/ldap"
)

// Options returns opt with People and LDAPGroupsFor served by reg (fields already set are
// kept).
func Options(reg *ldap.Registry, opt calc.Options) calc.Options {
	if opt.People == nil {
		opt.People = reg.PeopleLoader()
	}
	if opt.LDAPGroupsFor == nil {
		opt.LDAPGroupsFor = GroupsFor(reg)
	}
	return opt
}

// GroupsFor builds, from a loaded config, the reader of the LDAP groups that rules and
// filters name, with the settings of the config's ldap_group extra (none: no reader).
func GroupsFor(reg *ldap.Registry) func(cfg *config.Config) (calc.LDAPGroupReader, error) {
	return func(cfg *config.Config) (calc.LDAPGroupReader, error) {
		gr := reg.GroupReaderFor(cfg)
		if gr == nil {
			return nil, nil
		}
		return Groups(gr), nil
	}
}

// Groups adapts the provider's group reader to calc.LDAPGroupReader.
func Groups(r *ldap.GroupReader) calc.LDAPGroupReader { return groups{r} }

type groups struct{ r *ldap.GroupReader }

func (g groups) ReadLDAPGroups(ctx context.Context, dns []string) (map[string]*calc.LDAPGroup, error) {
	got, err := g.r.ReadGroups(ctx, dns)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*calc.LDAPGroup, len(got))
	for d, attrs := range got {
		out[d] = &calc.LDAPGroup{DN: d, Attrs: attrs}
	}
	return out, nil
}
