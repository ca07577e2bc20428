package calc

import (
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

// Cases written from mutation testing (issue 15): each one fails under a small deliberate
// bug of the evaluator or the reference parser that the other tests let through.

func TestAndOfThreeOrMore(t *testing.T) {
	runFileCases(t, []fileCase{
		// management alice = alice bob Carol dave; management bob = bob dave. The third term
		// removes dave, who is in both of the others: an and that looked at two terms only
		// would keep him.
		yc("the third term of an and counts", "rules:\n  and:\n    - management: alice\n    - management: bob\n    - not:\n        username: dave\n", "bob"),
		yc("so does the first", "rules:\n  and:\n    - not:\n        username: dave\n    - management: alice\n    - management: bob\n", "bob"),
		yc("and of four", "rules:\n  and:\n    - management: boss\n    - management: alice\n    - management: bob\n    - username: dave\n", "dave"),
	})
}

func TestWildcardIsAnchored(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "a*b matches ab and axb, not axbc or xab", files: map[string]string{
			ax:                         "group = b/a*b\n",
			"ldap-config/b/ab.txt":     "username = alice\n",
			"ldap-config/b/axb.txt":    "username = bob\n",
			"ldap-config/b/axbc.txt":   "username = dave\n",
			"ldap-config/b/xab.txt":    "username = eve\n",
			"ldap-config/b/a-b-b.yaml": "rules:\n  username: mallory\n"},
			want: map[string][]string{"a/x": {"alice", "bob", "mallory"}}},
	})
}

func TestEmptyOUInAReference(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "group = /y", files: map[string]string{ax: "username = bob\ngroup = /y\n", ay: "username = alice\n"},
			errs: []errSpec{ee(validate.KindInvalidReference, ax, 2)}},
		{name: "yaml group: /y", files: map[string]string{"ldap-config/a/x.yaml": "rules:\n  or:\n    - username: bob\n    - group: /y\n", ay: "username = alice\n"},
			errs: []errSpec{ee(validate.KindInvalidReference, "ldap-config/a/x.yaml", 4)}},
	})
}
