package calc

import (
	"context"
	"fmt"
	"strings"

	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/ldapschema"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/internal/yaml11"
)

// LDAPGroup is a group read from LDAP: its DN and attributes (names lower-cased).
type LDAPGroup struct {
	DN    string
	Attrs map[string][]string
}

// LDAPGroupReader serves ldap_group rules and MemberOfLDAPGroup filters. The engine collects
// every DN it needs and asks once, so an implementation can read them in bulk. The result is
// keyed by the DN as asked; a DN that does not exist is simply absent.
type LDAPGroupReader interface {
	ReadLDAPGroups(ctx context.Context, dns []string) (map[string]*LDAPGroup, error)
}

// Members returns the member uids of an LDAP group, chosen by object class as the reference
// does: groupOfUniqueNames → uniqueMember, groupOfNames → member, posixGroup → memberUid. The
// group's own DN (the empty-group convention) is dropped and each value is reduced to its
// first RDN value.
func (g *LDAPGroup) Members() ([]string, error) {
	classes := g.Attrs["objectclass"]
	class := ldapschema.LegacyClass(classes)
	if class == "" {
		return nil, fmt.Errorf("Do not know how to handle objectClass = %v for dn=%s!", classes, g.DN)
	}
	self := dn.Normalize(g.DN)
	var out []string
	for _, v := range g.Attrs[strings.ToLower(ldapschema.MemberAttr(class))] {
		if dn.Normalize(v) == self {
			continue
		}
		out = append(out, dn.FirstValue(v))
	}
	return out, nil
}

// LDAPSnapshot is an offline LDAPGroupReader: a YAML file `DN: {attribute: [values]}` as in the
// conformance corpus (and as `entitlements calc --ldap-groups` takes).
type LDAPSnapshot struct {
	groups map[string]*LDAPGroup // by normalised DN
}

// LoadLDAPSnapshot reads a snapshot file.
func LoadLDAPSnapshot(path string) (*LDAPSnapshot, error) {
	data, err := safefile.Read(path, safefile.Options{})
	if err != nil {
		return nil, fmt.Errorf("ldap groups snapshot: %w", err)
	}
	root, _, err := yaml11.Parse(data, yaml11.Options{AllowDates: true})
	if err != nil {
		return nil, fmt.Errorf("ldap groups snapshot %s: %w", path, err)
	}
	s := &LDAPSnapshot{groups: map[string]*LDAPGroup{}}
	if root.Kind == yaml11.Null {
		return s, nil
	}
	if root.Kind != yaml11.Map {
		return nil, fmt.Errorf("ldap groups snapshot %s: expected a map of DN to attributes", path)
	}
	for i, k := range root.Keys {
		v := root.Values[i]
		if v.Kind != yaml11.Map {
			return nil, fmt.Errorf("ldap groups snapshot %s:%d: entry %s must be a map of attributes", path, v.Line, textsafe.Excerpt(k.Text()))
		}
		g := &LDAPGroup{DN: k.Text(), Attrs: map[string][]string{}}
		for j, ak := range v.Keys {
			av := v.Values[j]
			name := strings.ToLower(ak.Text())
			if av.Kind == yaml11.Seq {
				for _, it := range av.Items {
					g.Attrs[name] = append(g.Attrs[name], it.Text())
				}
			} else if av.Kind != yaml11.Null {
				g.Attrs[name] = []string{av.Text()}
			}
		}
		s.groups[dn.Normalize(g.DN)] = g
	}
	return s, nil
}

// NewLDAPSnapshot builds a snapshot from groups in memory (for tests and embedders).
func NewLDAPSnapshot(groups ...*LDAPGroup) *LDAPSnapshot {
	s := &LDAPSnapshot{groups: map[string]*LDAPGroup{}}
	for _, g := range groups {
		s.groups[dn.Normalize(g.DN)] = g
	}
	return s
}

// ReadLDAPGroups implements LDAPGroupReader.
func (s *LDAPSnapshot) ReadLDAPGroups(_ context.Context, dns []string) (map[string]*LDAPGroup, error) {
	out := make(map[string]*LDAPGroup, len(dns))
	for _, d := range dns {
		if g, ok := s.groups[dn.Normalize(d)]; ok {
			out[d] = g
		}
	}
	return out, nil
}
