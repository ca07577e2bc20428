package config

import "slices"

// TypeSpec describes one backend type (the `type:` of an OU entry): how it is ordered, whether
// its directory is enumerated, and which keys its OU entries accept. Providers register their
// own specs through Options.Types; the built-in table below covers every type the reference
// app and its GitHub/AAD plugins know.
type TypeSpec struct {
	Name string
	// Priority orders OUs for processing (lower first), as the reference's controller sort.
	Priority int
	// Enumerates: every file of the OU directory is a managed group (ldap, github_team, ...).
	// A type that does not enumerate (dummy) only evaluates files that are referenced.
	Enumerates bool
	// Required and Optional list the accepted keys besides `type` and the common keys
	// (dir, allowed_methods, allowed_types). AnyKeys disables key checks (dummy).
	Required, Optional []string
	AnyKeys            bool
	// Secrets are keys that may be null after environment substitution: they are only needed
	// when a provider connects, so an offline calculation must not fail on them.
	Secrets []string
	// Substitutes lets a required key be left out when another key is given: the key →
	// the key that replaces it (an ldap OU that finds people by person_attribute needs no
	// person_dn_format).
	Substitutes map[string]string
	// Enums lists the values a key accepts (compared case-insensitively, since they name
	// LDAP object classes and AD settings).
	Enums map[string][]string
	// Credentials maps each kind of credential the type takes to the keys that give it. An
	// OU whose keys give two kinds (a key counts when it is set and not empty after
	// substitution) must say which one its provider uses in its `credential` key, which the
	// type must accept (give it an Enums entry of the kinds); otherwise it does not load.
	Credentials map[string][]string
}

// commonKeys are accepted by every typed OU.
var commonKeys = []string{"dir", "allowed_methods", "allowed_types"}

var ldapConn = []string{"ldap_uri", "ldap_binddn", "ldap_bindpw", "person_dn_format"}
var ldapOpt = []string{"ldap_ca_file", "disable_ssl_verification", "ldap_disable_ssl_verification", "ldap_starttls"}

// ldapGroupOpt choose how an ldap OU's groups are stored (object_class, and for Active
// Directory's group the group_scope and group_category) and how people map to entries
// (person_attribute under person_base instead of person_dn_format). providers/ldap reads them.
var ldapGroupOpt = []string{"object_class", "group_scope", "group_category", "person_attribute", "person_base"}

// githubCredentialKeys are the keys of a GitHub OU (github_org, github_team) that choose how
// it authenticates: a token, or a GitHub App (providers/github reads them; README
// "Credentials").
var githubCredentialKeys = []string{"credential", "app_id", "private_key", "private_key_path", "installation_id"}

// githubCredentials are the kinds of credential of a GitHub OU and the keys that give them.
func githubCredentials() map[string][]string {
	return map[string][]string{"token": {"token"}, "app": {"app_id", "private_key", "private_key_path", "installation_id"}}
}

var githubCredentialEnum = []string{"token", "app"}

// DefaultTypes is the built-in backend table. It is returned fresh on every call so that no
// caller can mutate shared state.
func DefaultTypes() []TypeSpec {
	return []TypeSpec{
		{Name: "ldap", Priority: 10, Enumerates: true,
			Required:    append([]string{"base"}, ldapConn...),
			Optional:    append(append([]string{"create_if_missing", "plugin", "mirror"}, ldapOpt...), ldapGroupOpt...),
			Secrets:     []string{"ldap_bindpw", "ldap_binddn"},
			Substitutes: map[string]string{"person_dn_format": "person_attribute"},
			Enums: map[string][]string{
				"object_class":   {"groupOfUniqueNames", "groupOfNames", "posixGroup", "group"},
				"group_scope":    {"global", "domain_local", "universal"},
				"group_category": {"security", "distribution"},
			}},
		{Name: "dummy", Priority: 10, AnyKeys: true},
		{Name: "member_of", Priority: 20,
			Required: append([]string{"memberof_attribute", "ou"}, ldapConn...),
			Optional: ldapOpt,
			Secrets:  []string{"ldap_bindpw", "ldap_binddn"}},
		{Name: "github_org", Priority: 30, Enumerates: true,
			Required:    []string{"org", "base"},
			Optional:    append([]string{"token", "addr", "graphql_url", "ignore_not_found", "features", "ignore", "min_admins"}, githubCredentialKeys...),
			Secrets:     []string{"token", "private_key"},
			Enums:       map[string][]string{"credential": githubCredentialEnum},
			Credentials: githubCredentials()},
		{Name: "github_team", Priority: 40, Enumerates: true,
			Required:    []string{"org", "base"},
			Optional:    append([]string{"token", "addr", "graphql_url", "ignore_not_found", "delete_teams"}, githubCredentialKeys...),
			Secrets:     []string{"token", "private_key"},
			Enums:       map[string][]string{"credential": githubCredentialEnum},
			Credentials: githubCredentials()},
		{Name: "aad", Priority: 50, Enumerates: true,
			Required: []string{"base"},
			Optional: []string{"tenant_id", "client_id", "client_secret", "user_principal_format",
				"create_if_missing", "ignore_not_found", "delete_groups", "managed_prefix", "graph_url"},
			Secrets: []string{"tenant_id", "client_id", "client_secret"}},
	}
}

// mergeTypes overlays user specs over the defaults by name (a user's partial list never
// removes the built-ins).
func mergeTypes(user []TypeSpec) map[string]TypeSpec {
	out := map[string]TypeSpec{}
	for _, t := range DefaultTypes() {
		out[t.Name] = t
	}
	for _, t := range user {
		out[t.Name] = t
	}
	return out
}

// keys are the keys the type accepts (for did-you-mean hints).
func (t TypeSpec) keys() func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for _, l := range [][]string{commonKeys, t.Required, t.Optional} {
			for _, k := range l {
				if !yield(k) {
					return
				}
			}
		}
	}
}

func (t TypeSpec) accepts(key string) bool {
	return t.AnyKeys || slices.Contains(commonKeys, key) || slices.Contains(t.Required, key) ||
		slices.Contains(t.Optional, key)
}
