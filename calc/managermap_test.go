package calc

import (
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

// A manager-map entry whose manager names nobody (a typo: "bosss" for "boss") silently takes
// the person out of every management group above it: it is a warning with the closest uid,
// and an error under Strict (issue 22.5). Managers that are entries of the map without being
// people (a root above the people data) and people without a manager are not typos.
func TestManagerMapUnknownManager(t *testing.T) {
	const typo = `boss: {manager: boss}
alice: {manager: boss}
bob: {manager: alice}
carol: {manager: alice}
dave: {manager: bob}
eve: {manager: bosss}
mallory: {manager: eve}
`
	files := map[string]string{
		"manager-map.yaml":           typo,
		"ldap-config/a/mgmt.txt":     "management = boss\n",
		"ldap-config/a/everyone.txt": "username = alice\n",
	}
	for _, tc := range []struct {
		name     string
		mm       string
		wantWarn []string
	}{
		{"typo", typo, []string{`manager-map.yaml:6: manager of "eve" is "bosss", who is in neither the people data nor the manager map ("eve" is left out of every management group above); did you mean "boss"?`}},
		{"root above the people data", strings.Replace(stdManagerMap, "boss: {manager: boss}", "boss: {manager: ceo}\nceo: {manager: ceo}", 1), nil},
		{"clean", stdManagerMap, nil},
		{"no suggestion", strings.Replace(stdManagerMap, "eve: {manager: boss}", "eve: {manager: zzzzzzzz}", 1),
			[]string{`manager-map.yaml:6: manager of "eve" is "zzzzzzzz", who is in neither the people data nor the manager map ("eve" is left out of every management group above)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := map[string]string{}
			for k, v := range files {
				f[k] = v
			}
			f["manager-map.yaml"] = tc.mm
			_, warns, err := loadWarned(t, f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := warningTexts(warns)
			if strings.Join(got, "\n") != strings.Join(tc.wantWarn, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantWarn, "\n"))
			}
			if len(tc.wantWarn) == 0 {
				run(t, f, Options{Strict: true})
				return
			}
			errs := mustFail(t, f, Options{Strict: true})
			if len(errs) != len(tc.wantWarn) || !validate.HasKind(errs, validate.KindUnknownManager) || errs[0].Error() != tc.wantWarn[0] {
				t.Errorf("strict: %v, kinds %v", errs, errs.Kinds())
			}
		})
	}
}
