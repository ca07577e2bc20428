package ldap

import (
	"fmt"
	"strings"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/providers"
)

// The keys of an LDAP connection, shared by ldap and member_of OUs.
var (
	connKeys    = []string{"ldap_uri", "ldap_binddn", "ldap_bindpw", "person_dn_format"}
	connOptKeys = []string{"ldap_ca_file", "disable_ssl_verification", "ldap_disable_ssl_verification", "ldap_starttls"}
	// groupKeys choose how an ldap OU's groups are stored (object_class, and for Active
	// Directory's group the group_scope and group_category) and how people map to entries
	// (person_attribute under person_base instead of person_dn_format).
	groupKeys = []string{"object_class", "group_scope", "group_category", "person_attribute", "person_base"}
	secrets   = []string{"ldap_bindpw", "ldap_binddn"}
)

// Types are the config specs of the two LDAP backend types: `ldap` (groups in a base) and
// `member_of` (an attribute of every person listing the groups of other OUs).
func Types() []config.TypeSpec {
	return []config.TypeSpec{
		{Name: "ldap", Priority: 10, Enumerates: true,
			Required:    append([]string{"base"}, connKeys...),
			Optional:    append(append([]string{"create_if_missing", "plugin", "mirror"}, connOptKeys...), groupKeys...),
			Secrets:     secrets,
			Substitutes: map[string]string{"person_dn_format": "person_attribute"},
			Enums: map[string][]string{
				"object_class":   {"groupOfUniqueNames", "groupOfNames", "posixGroup", "group"},
				"group_scope":    {"global", "domain_local", "universal"},
				"group_category": {"security", "distribution"},
			},
			Overlap: func(a, b *config.OU, _ config.GroupFiles) string {
				if a.Base != "" && dn.Normalize(a.Base) == dn.Normalize(b.Base) && config.SameServer(a, b, "ldap_uri", "") {
					return fmt.Sprintf("both manage the LDAP base %s", b.Base)
				}
				return ""
			}},
		{Name: "member_of", Priority: 20, Derived: true,
			Required: append([]string{"memberof_attribute", "ou"}, connKeys...),
			Optional: connOptKeys,
			Secrets:  secrets,
			Lists:    []string{"ou"},
			Check:    checkMemberOf,
			Overlap: func(a, b *config.OU, _ config.GroupFiles) string {
				x, _ := a.Setting("memberof_attribute")
				y, _ := b.Setting("memberof_attribute")
				if x != "" && strings.EqualFold(x, y) && config.SameServer(a, b, "ldap_uri", "") {
					return fmt.Sprintf("both manage the person attribute %s", y)
				}
				return ""
			}},
	}
}

// checkMemberOf warns about listed OUs that are not configured: the reference only fails when
// none of them exists, at plan time.
func checkMemberOf(c *config.Checker, ou *config.OU) {
	for _, it := range ou.Settings.Get("ou").Items() {
		if c.Config().OU(it.Text()) == nil && !c.Refused(it.Text()) {
			c.Warnf(it.Line(), "Group %q: member_of OU %s is not configured; it is ignored", ou.Key, c.Show(it))
		}
	}
}

// Backends describes the LDAP backend types, with providers from r (nil: no providers, for
// programs that only calculate or simulate).
func Backends(r *Registry) []backend.Backend {
	var f providers.Factory
	if r != nil {
		f = func(ou *config.OU) (providers.Provider, error) {
			p, err := r.Provider(ou)
			if err != nil {
				return nil, err // not a typed nil in a non-nil interface
			}
			return p, nil
		}
	}
	var out []backend.Backend
	for _, t := range Types() {
		b := backend.Backend{Spec: t, New: f}
		if t.Derived {
			b.Derive = memberOf{}
		}
		out = append(out, b)
	}
	return out
}
