package calc

import (
	"bytes"
	"strings"
	"testing"
)

// A negated condition reads as what it excludes, not as a `!=` line under `not` with the
// opposite mark (issue 22.11); a `not` of a compound rule keeps its nested form.
func TestExplainNegatedRules(t *testing.T) {
	files := map[string]string{
		"ldap-config/lib/team.txt": "username = bob\n",
		ax:                         "management = alice\nusername != carol\ngroup != lib/team\n",
		"ldap-config/a/y.yaml":     "rules:\n  and:\n    - management: alice\n    - not:\n        or:\n          - username: bob\n          - username: dave\n",
	}
	res := mustRun(t, files, Options{})
	for _, tc := range []struct {
		group, person string
		want, not     []string
	}{
		{"a/x", "carol", []string{"- not: username = carol (line 2) excludes Carol\n"}, []string{"!="}},
		{"a/x", "dave", []string{"+ not: username = carol (line 2) does not exclude dave\n", "+ not: group = lib/team (line 3) does not exclude dave\n"}, []string{"!="}},
		{"a/x", "bob", []string{"- not: group = lib/team (line 3) excludes bob\n", "    via lib/team (ldap-config/lib/team.txt)\n"}, nil},
		{"a/y", "bob", []string{"- not (line 4)\n", "  + any of (line 5)\n", "    + username: bob (line 6)\n"}, nil},
	} {
		t.Run(tc.group+" "+tc.person, func(t *testing.T) {
			ex, err := res.Explain(tc.group, tc.person)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			ex.WriteText(&buf)
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, buf.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(buf.String(), w) {
					t.Errorf("text has %q:\n%s", w, buf.String())
				}
			}
		})
	}
}
