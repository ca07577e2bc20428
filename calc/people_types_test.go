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
		errSpec{validate.KindPeople, "manager-map.yaml", 2, `manager of "alice" is an Integer (123), not a string`},
		errSpec{validate.KindPeople, "manager-map.yaml", 5, `manager of "carol" is an Array (["alice"]), not a string`})
}

// People attributes that are not strings or lists of strings: every one is reported, at its
// line of the people file, in one run; references are still checked.
func TestPeopleAttributeTypesAllReported(t *testing.T) {
	errs := mustFail(t, map[string]string{
		"people.yaml":         stdPeople + "zed:\n  cn: 123\n  start: 2026-01-01\nyan: {groups: [a, 1]}\n",
		"ldap-config/a/x.txt": "username = alice\ngroup = a/missing\n",
	}, Options{})
	wantErrs(t, errs,
		errSpec{validate.KindPeople, "people.yaml", 9, `attribute "cn" of person "zed" is an Integer (123)`},
		errSpec{validate.KindPeople, "people.yaml", 10, `attribute "start" of person "zed" is a Date (2026-01-01)`},
		errSpec{validate.KindPeople, "people.yaml", 11, `attribute "groups" of person "yan" is a list holding an Integer (1)`},
		errSpec{validate.KindMissingReference, "ldap-config/a/x.txt", 2, "a/missing"})
}

// A dummy OU whose mirror is ignored (it has its own directory) is a plain dummy OU: its
// files can be referenced, as in the reference, which never looks at a dummy OU's mirror.
func TestIgnoredDummyMirrorKeepsItsFiles(t *testing.T) {
	res := mustRun(t, map[string]string{
		"config.yaml":         conf{Groups: stdGroups + "  m:\n    type: dummy\n    mirror: lib\n"}.String(),
		"ldap-config/m/y.txt": "username = bob\n",
		"ldap-config/a/x.txt": "group = m/y\n",
	}, Options{})
	wantMembers(t, res, "a/x", "bob")
	wantMembers(t, res, "m/y", "bob")
}
