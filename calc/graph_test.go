package calc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestDependencies: the edges of the dependency graph (rules, a filter's population group,
// groups listed in a filter setting) once each, sorted; mirrors add keys, not edges.
func TestDependencies(t *testing.T) {
	groups := stdGroups + "  m:\n    backend: l\n    base: ou=m,dc=example\n    mirror: a\n"
	root := build(t, map[string]string{
		"config.yaml":                     conf{Groups: groups, Filters: contractorsFilter}.String(),
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		"ldap-config/lib/team.txt":        "username = bob\n",
		ax:                                "group = b/y\ncontractors = lib/team\ngroup = b/y\n",
		ay:                                "username = alice\ncontractors = all\n",
		by:                                "username = bob\n",
	})
	repo, err := Load(t.Context(), root+"/config.yaml", defaults(Options{}, root))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range repo.Dependencies() {
		got = append(got, fmt.Sprintf("%s -> %s line %d via %s", d.From, d.To, d.Line, d.Via))
	}
	want := []string{
		"a/x -> b/y line 1 via rule",
		"a/x -> b/y line 3 via rule",
		"a/x -> lib/contractors line 0 via filter contractors",
		"a/x -> lib/team line 2 via filter contractors",
		"b/y -> lib/contractors line 0 via filter contractors",
		// lib/contractors is filtered by its own filter: no self-loop (issue 22.11).
		"lib/team -> lib/contractors line 0 via filter contractors",
	}
	if !slices.Equal(got, want) {
		t.Errorf("dependencies:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	keys := []string{"a/x", "a/y", "b/y", "lib/contractors", "lib/team", "m/x", "m/y"}
	if got := repo.GroupKeys(); !slices.Equal(got, keys) {
		t.Errorf("group keys %q; want %q", got, keys)
	}
}
