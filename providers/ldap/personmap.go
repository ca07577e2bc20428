package ldap

import (
	"context"
	"fmt"
	"strings"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/internal/dn"
)

// personMap maps people keys to their entries' DNs and back through one attribute
// (person_attribute, e.g. sAMAccountName or userPrincipalName) of the entries under
// person_base: in Active Directory users live in many OUs and their CN is usually a display
// name, so no person_dn_format can build their DNs. Values compare case-insensitively, as AD
// compares them.
type personMap struct {
	byKey map[string]string // lower-cased value → DN; "" when two entries share the value
	byDN  map[string]string // normalised DN → value
}

// dnOf returns the DN of the person whose attribute value is key.
func (m *personMap) dnOf(key string) (string, bool) {
	d, ok := m.byKey[strings.ToLower(key)]
	return d, ok && d != ""
}

// persons returns the map of base and attr, read once per service with one paged subtree
// search.
func (s *ldapServer) persons(ctx context.Context, base, attr string) (*personMap, error) {
	return s.people.Get(ctx, dn.Normalize(base)+"\x00"+strings.ToLower(attr), func(ctx context.Context) (*personMap, error) {
		req := goldap.NewSearchRequest(base, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, 0, false,
			"("+goldap.EscapeFilter(attr)+"=*)", []string{attr}, nil)
		entries, err := s.pool.search(ctx, req, nil)
		if err != nil {
			return nil, fmt.Errorf("reading people from %s by %s: %w", base, attr, err)
		}
		m := &personMap{byKey: make(map[string]string, len(entries)), byDN: make(map[string]string, len(entries))}
		for _, e := range entries {
			v := e.GetEqualFoldAttributeValue(attr)
			if v == "" {
				continue
			}
			k := strings.ToLower(v)
			if _, dup := m.byKey[k]; dup {
				m.byKey[k] = "" // ambiguous: neither entry is the person
			} else {
				m.byKey[k] = e.DN
			}
			m.byDN[dn.Normalize(e.DN)] = v
		}
		return m, nil
	})
}
