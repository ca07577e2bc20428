package github

import (
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
)

// credentialKeys choose how a GitHub OU authenticates: a token, or a GitHub App (README
// "Credentials").
var credentialKeys = []string{"credential", "app_id", "private_key", "private_key_path", "installation_id"}

// credentialKinds are the values of the `credential` key.
var credentialKinds = []string{"token", "app"}

// credentials are the kinds of credential of a GitHub OU and the keys that give them.
func credentials() map[string][]string {
	return map[string][]string{"token": {"token"}, "app": {"app_id", "private_key", "private_key_path", "installation_id"}}
}

// Types are the config specs of the GitHub backend types: `github_org` (org members and their
// roles) and `github_team` (one team per group file).
func Types() []config.TypeSpec {
	return []config.TypeSpec{
		{Name: "github_org", Priority: 30, Enumerates: true,
			Required:    []string{"org", "base"},
			Optional:    append([]string{"token", "addr", "graphql_url", "ignore_not_found", "features", "ignore", "min_admins"}, credentialKeys...),
			Secrets:     []string{"token", "private_key"},
			Enums:       map[string][]string{"credential": credentialKinds},
			Credentials: credentials(),
			Overlap: func(a, b *config.OU, _ config.GroupFiles) string {
				if sameOrg(a, b) {
					return fmt.Sprintf("both manage the members of GitHub org %s and their roles", b.Settings.Get("org").Shown())
				}
				return ""
			}},
		{Name: "github_team", Priority: 40, Enumerates: true,
			Required:    []string{"org", "base"},
			Optional:    append([]string{"token", "addr", "graphql_url", "ignore_not_found", "delete_teams"}, credentialKeys...),
			Secrets:     []string{"token", "private_key"},
			Enums:       map[string][]string{"credential": credentialKinds},
			Credentials: credentials(),
			Overlap:     teamsOverlap},
	}
}

// Backends describes the GitHub backend types, with providers from r (nil: no providers, for
// programs that only calculate or simulate).
func Backends(r *Registry) []backend.Backend {
	var f providers.Factory
	if r != nil {
		f = r.Provider
	}
	var out []backend.Backend
	for _, t := range Types() {
		out = append(out, backend.Backend{Spec: t, New: f})
	}
	return out
}

// sameOrg reports whether two GitHub OUs name one org (GitHub logins are case-insensitive) on
// one API host.
func sameOrg(a, b *config.OU) bool {
	x, _ := a.Setting("org")
	y, _ := b.Setting("org")
	return x != "" && strings.EqualFold(x, y) && config.SameServer(a, b, "addr", "https://api.github.com")
}

// teamsOverlap: two github_team OUs of one org overlap when delete_teams makes one delete
// every team without a file of its own, or when both have a file for the same team (each run
// of one would set the team to its own file's members). A team's slug is its file's name in
// lower case.
func teamsOverlap(a, b *config.OU, files config.GroupFiles) string {
	if !sameOrg(a, b) {
		return ""
	}
	org := b.Settings.Get("org").Shown()
	if a.SettingTrue("delete_teams") || b.SettingTrue("delete_teams") {
		return fmt.Sprintf("both manage the teams of GitHub org %s and delete_teams makes one of them delete every team without a file of its own", org)
	}
	ta, tb := files(a), files(b)
	var both []string
	for slug := range ta {
		if _, ok := tb[slug]; ok {
			both = append(both, slug)
		}
	}
	if len(both) == 0 {
		return ""
	}
	slices.Sort(both)
	if len(both) == 1 {
		return fmt.Sprintf("both manage the team %s of GitHub org %s (%s, %s)", both[0], org, ta[both[0]], tb[both[0]])
	}
	more := ""
	if len(both) > 5 {
		more = fmt.Sprintf(" and %d more", len(both)-5)
		both = both[:5]
	}
	return fmt.Sprintf("both manage the teams %s%s of GitHub org %s", strings.Join(both, ", "), more, org)
}
