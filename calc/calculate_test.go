package calc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/validate"
)

// TestExpirationBoundary: an item dated D is expired from D 00:00:00 UTC on; only the UTC date of
// Options.Now matters.
func TestExpirationBoundary(t *testing.T) {
	files := map[string]string{
		ax:                     "username = bob; expiration = 2024-06-15\nusername = alice\n",
		ay:                     "username = bob\nexpiration = 2024-06-15\n",
		"ldap-config/a/z.yaml": "rules:\n  or:\n    - username: bob\n      expiration: \"2024-06-15\"\n    - username: alice\n",
	}
	cases := []struct {
		name    string
		now     time.Time
		expired bool
	}{
		{"last second of the day before", time.Date(2024, 6, 14, 23, 59, 59, 999999999, time.UTC), false},
		{"first instant of the day", time.Date(2024, 6, 15, 0, 0, 0, 0, time.UTC), true},
		{"later that day", time.Date(2024, 6, 15, 23, 59, 0, 0, time.UTC), true},
		{"years later", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), true},
		{"local date is the 15th but UTC is the 14th", time.Date(2024, 6, 15, 1, 0, 0, 0, time.FixedZone("+05", 5*3600)), false},
		{"local date is the 14th but UTC is the 15th", time.Date(2024, 6, 14, 22, 0, 0, 0, time.FixedZone("-05", -5*3600)), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := mustRun(t, files, Options{Now: c.now})
			if c.expired {
				wantMembers(t, res, "a/x", "alice")
				wantMembers(t, res, "a/y")
				wantMembers(t, res, "a/z", "alice")
			} else {
				wantMembers(t, res, "a/x", "alice", "bob")
				wantMembers(t, res, "a/y", "bob")
				wantMembers(t, res, "a/z", "alice", "bob")
			}
		})
	}
}

func TestIgnoreExpirations(t *testing.T) {
	files := map[string]string{
		"config.yaml":                     conf{Filters: contractorsFilter}.String(),
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		ax:                                "username = bob; expiration = 2020-01-01\nusername = alice\n",
		ay:                                "username = bob\nexpiration = 2020-01-01\n",
		"ldap-config/a/z.yaml":            "rules:\n  or:\n    - username: bob\n      expiration: \"2020-01-01\"\n",
		"ldap-config/a/f.txt":             "username = mallory\ncontractors = all; expiration = 2020-01-01\n",
		// 5.5 step 1 ignores ignore_expirations: an expired file without live "=" lines is empty.
		"ldap-config/a/e.txt": "expiration = 2020-01-01\nusername != bob\n",
	}
	check := func(t *testing.T, res *Result) {
		t.Helper()
		wantMembers(t, res, "a/x", "alice", "bob")
		wantMembers(t, res, "a/y", "bob")
		wantMembers(t, res, "a/z", "bob")
		wantMembers(t, res, "a/f", "mallory")
		wantMembers(t, res, "a/e")
		if md := res.Group("a/y").Metadata; len(md) != 0 {
			t.Errorf("a/y metadata %v, want none", md)
		}
	}
	t.Run("option", func(t *testing.T) {
		t.Parallel()
		check(t, mustRun(t, files, Options{IgnoreExpirations: true}))
	})
	t.Run("config key (Q-09)", func(t *testing.T) {
		t.Parallel()
		fs := maps.Clone(files)
		fs["config.yaml"] = conf{Filters: contractorsFilter, Top: "ignore_expirations: true\n"}.String()
		check(t, mustRun(t, fs, Options{}))
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		res := mustRun(t, files, Options{})
		wantMembers(t, res, "a/x", "alice")
		wantMembers(t, res, "a/y")
		wantMembers(t, res, "a/z")
		wantMembers(t, res, "a/f")
	})
}

func TestOrgchart(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "management includes indirect reports", files: map[string]string{
			ax: "management = boss\n", ay: "management = alice\n", az: "management = BOB\n"},
			want: map[string][]string{"a/x": everyone, "a/y": {"Carol", "alice", "bob", "dave"}, "a/z": {"bob", "dave"}}},
		{name: "direct_report is one level", files: map[string]string{
			ax: "direct_report = boss\n", ay: "direct_report = bob\n"},
			want: map[string][]string{"a/x": {"alice", "boss", "eve"}, "a/y": {"bob", "dave"}}},
		{name: "management minus the manager", files: map[string]string{ax: "management = alice\nusername != alice\n"},
			want: map[string][]string{"a/x": {"Carol", "bob", "dave"}}},
		{name: "unknown manager", files: map[string]string{ax: "username = bob\nmanagement = nobody\n"},
			errs: []errSpec{ee(validate.KindUnknownManager, ax, 2, "Manager nobody does not exist!")}},
		{name: "unknown manager in direct_report", files: map[string]string{"ldap-config/a/x.yaml": "rules:\n  direct_report: nobody\n"},
			errs: []errSpec{ee(validate.KindUnknownManager, "ldap-config/a/x.yaml", 2)}},
		{name: "manager without reports", files: map[string]string{ax: "management = Mallory\n"},
			errs: []errSpec{ee(validate.KindNoReports, ax, 1, "Manager Mallory has no reports!")}},
		{name: "direct_report of a manager without reports", files: map[string]string{ax: "direct_report = dave\n"},
			errs: []errSpec{ee(validate.KindNoReports, ax, 1)}},
		{name: "expired management line is never evaluated", files: map[string]string{ax: "username = bob\nmanagement = nobody; expiration = 2020-01-01\n"},
			want: map[string][]string{"a/x": {"bob"}}},
		{name: "a person missing from the manager map breaks management rules", files: map[string]string{
			"manager-map.yaml": strings.Replace(stdManagerMap, "dave: {manager: bob}\n", "", 1),
			ax:                 "management = eve\n"},
			errs: []errSpec{ee(validate.KindPeople, ax, 1, "User dave is not included in manager map data!")}},
		{name: "a person missing from the manager map does not matter without management rules", files: map[string]string{
			"manager-map.yaml": strings.Replace(stdManagerMap, "dave: {manager: bob}\n", "", 1),
			ax:                 "username = dave\n"},
			want: map[string][]string{"a/x": {"dave"}}},
		{name: "a person without a manager entry", files: map[string]string{
			"manager-map.yaml": strings.Replace(stdManagerMap, "dave: {manager: bob}\n", "dave: {status: [x]}\n", 1),
			ax:                 "direct_report = eve\n"},
			errs: []errSpec{ee(validate.KindPeople, ax, 1, "does not have a manager")}},
		{name: "manager map keys must be lower case", files: map[string]string{
			"manager-map.yaml": strings.Replace(stdManagerMap, "carol:", "Carol:", 1),
			ax:                 "management = eve\n"},
			errs: []errSpec{ee(validate.KindPeople, ax, 1, "User carol is not included")}},
		{name: "manager values are case-insensitive", files: map[string]string{
			"manager-map.yaml": strings.Replace(stdManagerMap, "dave: {manager: bob}", "dave: {manager: BOB}", 1),
			ax:                 "management = bob\n"},
			want: map[string][]string{"a/x": {"bob", "dave"}}},
		{name: "a manager who is not a person cannot be named", files: map[string]string{
			"manager-map.yaml": strings.Replace(stdManagerMap, "dave: {manager: bob}", "dave: {manager: ghost}", 1),
			ax:                 "management = ghost\n"},
			errs: []errSpec{ee(validate.KindUnknownManager, ax, 1)}},
		{name: "cycles in the manager map terminate", files: map[string]string{
			"manager-map.yaml": "boss: {manager: boss}\nalice: {manager: carol}\ncarol: {manager: alice}\nbob: {manager: boss}\ndave: {manager: boss}\neve: {manager: boss}\nmallory: {manager: boss}\n",
			ax:                 "management = alice\n", ay: "management = boss\n"},
			want: map[string][]string{"a/x": {"Carol", "alice"}, "a/y": {"bob", "boss", "dave", "eve", "mallory"}}},
	})
}

func TestMirrors(t *testing.T) {
	groups := stdGroups + `  m:
    backend: l
    base: ou=m,dc=example
    mirror: a
`
	files := map[string]string{
		"config.yaml":                     conf{Groups: groups, Filters: contractorsFilter}.String(),
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		ax:                                "description = X team\nmetadata_gid_number = 1234\nusername = bob\nusername = mallory\n",
		ay:                                "username = eve\nexpiration = 2020-01-01\n",
	}
	res := mustRun(t, files, Options{})
	wantKeys(t, res, "a/x", "a/y", "lib/contractors", "m/x", "m/y")
	src, mir := res.Group("a/x"), res.Group("m/x")
	if mir.DN != "cn=x,ou=m,dc=example" || !mir.Mirror || src.Mirror || mir.OU != "m" || mir.File != ax {
		t.Errorf("mirror group %+v", mir)
	}
	if !slices.Equal(mir.Members, []string{"bob"}) || mir.Description != "X team" ||
		!reflect.DeepEqual(mir.Metadata, map[string]any{"gid_number": "1234"}) {
		t.Errorf("mirror copy %+v differs from %+v", mir, src)
	}
	if !reflect.DeepEqual(res.Group("m/y").Metadata, map[string]any{"no_members_ok": true}) {
		t.Errorf("m/y metadata %v", res.Group("m/y").Metadata)
	}
	ex, err := res.Explain("m/x", "BOB")
	if err != nil || !ex.Member || ex.File != ax || ex.Group != "m/x" {
		t.Errorf("explain mirror: %+v, %v", ex, err)
	}
}

func TestExplain(t *testing.T) {
	files := map[string]string{
		"config.yaml":                     conf{Filters: contractorsFilter}.String(),
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		"ldap-config/lib/team.txt":        "username = bob\nusername = mallory\n",
		ax:                                "group = lib/team\nmanagement = alice\nusername = eve; expiration = 2020-01-01\n",
		ay:                                "username = bob\nexpiration = 2020-01-01\n",
	}
	res := mustRun(t, files, Options{})
	wantMembers(t, res, "a/x", "Carol", "alice", "bob", "dave")

	t.Run("via a referenced group", func(t *testing.T) {
		ex, err := res.Explain("a/x", "BOB")
		if err != nil {
			t.Fatal(err)
		}
		if !ex.Known || !ex.Member || !ex.InRules || ex.Person != "bob" || ex.File != ax {
			t.Fatalf("explanation %+v", ex)
		}
		via := findTrace(ex.Rules, func(tr *Trace) bool { return len(tr.Via) > 0 })
		if via == nil || via.Rule != "group = lib/team" || via.Line != 1 || !via.Matched ||
			via.Via[0].Group != "lib/team" || via.Via[0].File != "ldap-config/lib/team.txt" || via.Via[0].Rules == nil {
			t.Errorf("no Via trace for lib/team: %+v", via)
		}
	})
	t.Run("via management", func(t *testing.T) {
		ex, err := res.Explain("a/x", "dave")
		if err != nil {
			t.Fatal(err)
		}
		tr := findTrace(ex.Rules, func(tr *Trace) bool { return len(tr.OrgChain) > 0 })
		if tr == nil || !slices.Equal(tr.OrgChain, []string{"dave", "bob", "alice"}) || tr.Line != 2 {
			t.Errorf("org chain trace %+v", tr)
		}
		if grp := findTrace(ex.Rules, func(tr *Trace) bool { return tr.Rule == "group = lib/team" }); grp == nil || grp.Matched {
			t.Errorf("group rule should not match dave: %+v", grp)
		}
	})
	t.Run("removed by a filter", func(t *testing.T) {
		ex, err := res.Explain("a/x", "mallory")
		if err != nil {
			t.Fatal(err)
		}
		if !ex.InRules || ex.Member {
			t.Errorf("mallory in rules %v member %v; want in rules, not member", ex.InRules, ex.Member)
		}
		if len(ex.Filters) != 1 || !ex.Filters[0].Removed || !ex.Filters[0].InPopulation || ex.Filters[0].Setting != "none" || !ex.Filters[0].Applies {
			t.Errorf("filters %+v", ex.Filters)
		}
		var buf bytes.Buffer
		ex.WriteText(&buf)
		if !strings.Contains(buf.String(), "REMOVED") || !strings.Contains(buf.String(), "is NOT a member") {
			t.Errorf("text:\n%s", buf.String())
		}
	})
	t.Run("expired line listed", func(t *testing.T) {
		ex, err := res.Explain("a/x", "eve")
		if err != nil {
			t.Fatal(err)
		}
		if ex.Member || len(ex.ExpiredLines) != 1 || ex.ExpiredLines[0].Line != 3 || ex.ExpiredLines[0].Date != "2020-01-01" ||
			!strings.Contains(ex.ExpiredLines[0].Text, "username = eve") {
			t.Errorf("expired lines %+v", ex.ExpiredLines)
		}
	})
	t.Run("whole-file expiration", func(t *testing.T) {
		ex, err := res.Explain("a/y", "bob")
		if err != nil {
			t.Fatal(err)
		}
		if ex.Member || !ex.InRules || ex.FileExpiration == nil || !ex.FileExpiration.Reached ||
			ex.FileExpiration.Date != "2020-01-01" || ex.FileExpiration.Line != 2 {
			t.Errorf("explanation %+v, file expiration %+v", ex, ex.FileExpiration)
		}
	})
	t.Run("unknown person", func(t *testing.T) {
		ex, err := res.Explain("a/x", "nobody")
		if err != nil {
			t.Fatal(err)
		}
		if ex.Known || ex.Member || ex.Person != "nobody" {
			t.Errorf("explanation %+v", ex)
		}
		var buf bytes.Buffer
		ex.WriteText(&buf)
		if !strings.Contains(buf.String(), "not in the people data") {
			t.Errorf("text:\n%s", buf.String())
		}
	})
	t.Run("unknown group", func(t *testing.T) {
		_, err := res.Explain("a/nope", "bob")
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Group != "a/nope" {
			t.Errorf("error %v (%T), want *NotFoundError", err, err)
		}
	})
}

func findTrace(t *Trace, pred func(*Trace) bool) *Trace {
	if t == nil {
		return nil
	}
	if pred(t) {
		return t
	}
	for _, c := range t.Children {
		if f := findTrace(c, pred); f != nil {
			return f
		}
	}
	return nil
}

func TestERBConfig(t *testing.T) {
	cfg := strings.Replace(conf{}.String(), "base: ou=a,dc=example", `base: <%= ENV["A_BASE"] %>`, 1)
	files := map[string]string{"config.yaml": cfg, ax: "username = bob\n"}
	t.Run("set", func(t *testing.T) {
		env := func(k string) (string, bool) {
			if k == "A_BASE" {
				return "ou=from-env,dc=example", true
			}
			return "", false
		}
		res := mustRun(t, files, Options{Getenv: env})
		if dn := res.Group("a/x").DN; dn != "cn=x,ou=from-env,dc=example" {
			t.Errorf("DN %q", dn)
		}
	})
	t.Run("unset renders null", func(t *testing.T) {
		errs := mustFail(t, files, Options{})
		wantErrs(t, errs, ee(validate.KindConfig, "config.yaml", -1, "base"))
	})
}

// TestPeopleFileRelativeToWorkingDirectory: a relative people filename is resolved against the
// working directory, not the config directory.
func TestPeopleFileRelativeToWorkingDirectory(t *testing.T) {
	root := build(t, map[string]string{
		"conf/config.yaml":      strings.Replace(conf{People: "people.yaml"}.String(), "./ldap-config", "../ldap-config", 1),
		"conf/people.yaml":      "wrong: {}\n",
		"conf/manager-map.yaml": stdManagerMap,
		ax:                      "username = bob\n",
	})
	t.Chdir(root)
	repo, err := Load(context.Background(), filepath.Join("conf", "config.yaml"), defaults(Options{}, root))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := repo.Calculate(context.Background())
	wantMembers(t, res, "a/x", "bob")
	if repo.People().Len() != len(everyone) {
		t.Errorf("read %d people, want the working directory's %d", repo.People().Len(), len(everyone))
	}
	// Without the file in the working directory, the config directory's is used (a fallback
	// the reference does not have); without either, the people source fails.
	if err := os.Remove(filepath.Join(root, "people.yaml")); err != nil {
		t.Fatal(err)
	}
	repo, err = Load(context.Background(), filepath.Join("conf", "config.yaml"), defaults(Options{}, root))
	if err != nil {
		t.Fatal(err)
	}
	if uids := repo.People().UIDs(); !slices.Equal(uids, []string{"wrong"}) {
		t.Errorf("fallback read %q", uids)
	}
	if err := os.Remove(filepath.Join(root, "conf", "people.yaml")); err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), filepath.Join("conf", "config.yaml"), defaults(Options{}, root))
	if !validate.HasKind(err, validate.KindPeople) {
		t.Errorf("error %v, want a people error", err)
	}
}

func TestPeopleErrors(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "uids differing only in case", files: map[string]string{"people.yaml": stdPeople + "BOB: {}\n", ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "people.yaml", -1, "letter case")}},
		{name: "YAML 1.1 boolean uid", files: map[string]string{"people.yaml": stdPeople + "no: {}\n", ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "people.yaml", 8)}},
		{name: "record without attributes", files: map[string]string{"people.yaml": stdPeople + "zed:\n", ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "people.yaml", 8)}},
		{name: "missing people file", files: map[string]string{"config.yaml": conf{People: "{{ROOT}}/nope.yaml"}.String(), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1)}},
	})
}

// TestCalculateOnce: Calculate returns the same result every time.
func TestCalculateOnce(t *testing.T) {
	repo, _, err := loadRepo(t, map[string]string{ax: "username = bob\n"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r1, err1 := repo.Calculate(context.Background())
	r2, err2 := repo.Calculate(context.Background())
	if err1 != nil || err2 != nil || r1 != r2 {
		t.Errorf("Calculate not memoised: %p %v, %p %v", r1, err1, r2, err2)
	}
}

func TestWriteJSON(t *testing.T) {
	res := mustRun(t, map[string]string{
		ax:                       "description = Say \"hi\"\nmetadata_k = v\nusername = bob\nusername = Carol\n",
		"ldap-config/lib/e.yaml": "metadata:\n  n: 1\nrules:\n  always: false\n",
	}, Options{})
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	want := `{
  "groups": {
    "a/x": {
      "description": "Say \"hi\"",
      "dn": "cn=x,ou=a,dc=example",
      "members": [
        "Carol",
        "bob"
      ],
      "metadata": {
        "k": "v"
      }
    },
    "lib/e": {
      "description": "e",
      "dn": null,
      "members": [],
      "metadata": {
        "n": 1
      }
    }
  }
}
`
	if buf.String() != want {
		t.Errorf("JSON:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestCombinedPeople: `combined` sources merge components with or/and; uids match
// case-insensitively and the first component that has a uid supplies the person.
func TestCombinedPeople(t *testing.T) {
	people := func(source string) string {
		return strings.Replace(conf{}.String(), `people:
  yaml:
    type: yaml
    config:
      filename: {{ROOT}}/people.yaml
people_data_source: yaml
`, source, 1)
	}
	extra := "mallory: {}\nZED: {}\nBOB: {}\n"
	both := `people:
  main:
    type: yaml
    config:
      filename: {{ROOT}}/people.yaml
  all:
    type: combined
    config:
      operator: %s
      components:
        - main
        - type: yaml
          config:
            filename: {{ROOT}}/extra.yaml
people_data_source: all
`
	cases := []struct {
		name, op string
		uids     []string
	}{
		{"or", "or", []string{"Carol", "ZED", "alice", "bob", "boss", "dave", "eve", "mallory"}},
		{"and", "and", []string{"bob", "mallory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := people(strings.Replace(both, "%s", c.op, 1))
			repo, _, err := loadRepo(t, map[string]string{
				"config.yaml": cfg, "extra.yaml": extra, ax: "username = BOB\nusername = zed\n",
				// The org chart covers the union, so management works in both cases.
				"manager-map.yaml": stdManagerMap + "zed: {manager: boss}\n",
			}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := repo.People().UIDs(); !slices.Equal(got, c.uids) {
				t.Errorf("people %q, want %q", got, c.uids)
			}
			res, _ := repo.Calculate(context.Background())
			want := []string{"ZED", "bob"}
			if c.op == "and" {
				want = []string{"bob"}
			}
			wantMembers(t, res, "a/x", want...)
		})
	}
	runRepoCases(t, []repoCase{
		// The reference treats any operator but "and" as "or" during a run.
		{name: "unknown operator means or", files: map[string]string{
			"config.yaml": people(strings.Replace(both, "%s", "xor", 1)), "extra.yaml": extra, ax: "username = bob\nusername = zed\n",
			"manager-map.yaml": stdManagerMap + "zed: {manager: boss}\nmallory: {manager: boss}\n"},
			want: map[string][]string{"a/x": {"ZED", "bob"}}},
		{name: "missing operator", files: map[string]string{
			"config.yaml": people("people:\n  all:\n    type: combined\n    config:\n      components: [all]\npeople_data_source: all\n"), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1, "operator")}},
		{name: "no components: nobody", files: map[string]string{
			"config.yaml": strings.Replace(people("people:\n  all:\n    type: combined\n    config: {operator: or}\npeople_data_source: all\n"),
				"extras:\n  orgchart:\n    manager_map_file: ./manager-map.yaml\n", "", 1), ax: "username = bob\n"},
			opt: Options{AllowEmptyPeople: true}, want: map[string][]string{"a/x": nil}},
		{name: "no components: refused unless allowed", files: map[string]string{
			"config.yaml": strings.Replace(people("people:\n  all:\n    type: combined\n    config: {operator: or}\npeople_data_source: all\n"),
				"extras:\n  orgchart:\n    manager_map_file: ./manager-map.yaml\n", "", 1), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1, "yields no people")}},
		{name: "component naming an unknown source", files: map[string]string{
			"config.yaml": people("people:\n  all:\n    type: combined\n    config:\n      operator: or\n      components: [nope]\npeople_data_source: all\n"), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1, `"nope"`)}},
		{name: "inline component without a type", files: map[string]string{
			"config.yaml": people("people:\n  all:\n    type: combined\n    config:\n      operator: or\n      components:\n        - main\n        - config: {filename: x.yaml}\n  main:\n    type: yaml\n    config:\n      filename: {{ROOT}}/people.yaml\npeople_data_source: all\n"), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1, `people source "all": combined people source: component 2 has no type`)}},
		{name: "combined source naming itself", files: map[string]string{
			"config.yaml": people("people:\n  all:\n    type: combined\n    config:\n      operator: or\n      components: [all]\npeople_data_source: all\n"), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1, "nest")}},
		{name: "ldap source without a loader", files: map[string]string{
			"config.yaml": people("people:\n  l:\n    type: ldap\n    config: {base: ou=People}\npeople_data_source: l\n"), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1, "people loader")}},
		{name: "yaml source without a filename", files: map[string]string{
			"config.yaml": people("people:\n  y:\n    type: yaml\npeople_data_source: y\n"), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindPeople, "config.yaml", -1, "filename")}},
		{name: "dummy source has nobody", files: map[string]string{
			"config.yaml": strings.Replace(people("people:\n  d:\n    type: dummy\npeople_data_source: d\n"),
				"extras:\n  orgchart:\n    manager_map_file: ./manager-map.yaml\n", "", 1),
			ax: "username = bob\n", "ldap-config/a/y.yaml": "rules:\n  not:\n    username: bob\n"},
			want: map[string][]string{"a/x": nil, "a/y": nil}},
	})
}

// TestCalculateHonoursCancellation: a cancelled context stops the calculation before the first
// group, even in a repo of one group (found by mutation testing: the check ran only every
// 1,024 groups counted from the second).
func TestCalculateHonoursCancellation(t *testing.T) {
	repo, _, err := loadRepo(t, map[string]string{ax: "username = bob\n"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := repo.Calculate(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Calculate with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestExplainDepthLimit: an explanation follows a chain of group references exactly
// maxExplainDepth levels deep and no further (found by mutation testing).
func TestExplainDepthLimit(t *testing.T) {
	files := map[string]string{}
	const n = maxExplainDepth + 3
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("group = a/g%d\n", i+1)
		if i == n-1 {
			body = "username = bob\n"
		}
		files[fmt.Sprintf("ldap-config/a/g%d.txt", i)] = body
	}
	res := mustRun(t, files, Options{})
	ex, err := res.Explain("a/g0", "bob")
	if err != nil || !ex.Member {
		t.Fatalf("explain: %v, member %v", err, ex != nil && ex.Member)
	}
	depth := 0
	for tr := ex.Rules; tr != nil; depth++ {
		ref := findTrace(tr, func(x *Trace) bool { return len(x.Via) > 0 })
		if ref == nil {
			break
		}
		tr = ref.Via[0].Rules
	}
	if depth != maxExplainDepth+1 {
		t.Errorf("the trace follows %d references, want %d", depth, maxExplainDepth+1)
	}
}

// TestExplainTextUnknownPerson: the text of an explanation for someone not in the people data
// says so (with the closest uid) and nothing else; for a known person it shows the rules.
func TestExplainTextUnknownPerson(t *testing.T) {
	res := mustRun(t, map[string]string{ax: "username = bob\n"}, Options{})
	for _, c := range []struct {
		person string
		want   []string
		not    []string
	}{
		{"bobb", []string{"bobb is NOT a member of a/x", "bobb is not in the people data; did you mean \"bob\"?"}, []string{"username = bob"}},
		// The test config has no filters: no "filters:" heading either.
		{"bob", []string{"bob IS a member of a/x", "username = bob"}, []string{"not in the people data", "filters:"}},
	} {
		ex, err := res.Explain("a/x", c.person)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		ex.WriteText(&b)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: text lacks %q:\n%s", c.person, w, b.String())
			}
		}
		for _, w := range c.not {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: text has %q:\n%s", c.person, w, b.String())
			}
		}
	}
}
