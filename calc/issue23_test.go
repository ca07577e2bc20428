package calc

import (
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

// Issue 23 (accept/reject differences from the reference). The cases of testdata/compat hold
// the repositories; these tests check what a case cannot: every error, and nothing more.

// A manager that is not a string is refused once, at its line in the manager map, and the
// management rules that would have used the org chart add no error of their own.
func TestManagerNotAStringIsOneErrorEach(t *testing.T) {
	errs := mustFail(t, map[string]string{
		"manager-map.yaml":    "boss: {manager: boss}\nalice: {manager: 123}\nbob: {manager: alice}\ncarol:\n  manager: [alice]\ndave: {manager: bob}\neve: {manager: boss}\nmallory: {manager: eve}\n",
		"ldap-config/a/x.txt": "management = boss\n",
		"ldap-config/a/y.txt": "direct_report = eve\n",
	}, Options{})
	wantErrs(t, errs,
		errSpec{validate.KindPeople, "manager-map.yaml", 2, `manager of "alice" is an Integer 123, not a string`},
		errSpec{validate.KindPeople, "manager-map.yaml", 5, `manager of "carol" is an Array ["alice"], not a string`})
}
