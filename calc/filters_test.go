package calc

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

const preHiresFilter = `  pre-hires:
    class: MemberOfGroup
    config:
      group: lib/pre-hires
`

func TestFilters(t *testing.T) {
	withF := conf{Filters: contractorsFilter}.String()
	contractors := "ldap-config/lib/contractors.txt"
	runRepoCases(t, []repoCase{
		{name: "group entries of a filter list use the Ref view", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\nusername = eve\n",
			"ldap-config/lib/vendors.txt": "username = mallory\n",
			ax:                            "username = mallory\nusername = eve\nusername = bob\ncontractors = lib/vendors\n"},
			// lib/vendors is filtered to nothing by its own default, but its Ref view has mallory.
			want: map[string][]string{"a/x": {"bob", "mallory"}, "lib/vendors": nil}},
		{name: "wildcard group entry in a filter list", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\nusername = eve\n",
			"ldap-config/lib/v1.txt": "username = mallory\n", "ldap-config/lib/v2.txt": "username = eve\n",
			ax: "username = mallory\nusername = eve\ncontractors = lib/v*\n"},
			want: map[string][]string{"a/x": {"eve", "mallory"}}},
		{name: "group entry expired as a whole allows nobody", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n",
			"ldap-config/lib/vendors.txt": "username = mallory\nexpiration = 2020-01-01\n",
			ax:                            "username = mallory\nusername = bob\ncontractors = lib/vendors\n"},
			want: map[string][]string{"a/x": {"bob"}}},
		{name: "filters of a referenced group do not apply to the referencer", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n",
			"ldap-config/lib/vendors.txt": "username = mallory\nusername = bob\n",
			ax:                            "group = lib/vendors\ncontractors = all\n",
			ay:                            "group = lib/vendors\n"},
			want: map[string][]string{"a/x": {"bob", "mallory"}, "a/y": {"bob"}, "lib/vendors": {"bob"}}},
		{name: "the population group is filtered by itself in the output", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n", ax: "username = bob\n"},
			want: map[string][]string{"lib/contractors": nil, "a/x": {"bob"}}},
		{name: "population group that opts out of its own filter", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\ncontractors = all\n", ax: "username = mallory\n"},
			want: map[string][]string{"lib/contractors": {"mallory"}, "a/x": nil}},
		{name: "population given as a wildcard", files: map[string]string{
			"config.yaml":            strings.Replace(withF, "group: lib/contractors", "group: lib/c*", 1),
			"ldap-config/lib/c1.txt": "username = mallory\n", "ldap-config/lib/c2.txt": "username = eve\n",
			ax: "management = boss\n"},
			want: map[string][]string{"a/x": {"Carol", "alice", "bob", "boss", "dave"}}},
		{name: "population group expired as a whole filters nobody", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\nexpiration = 2020-01-01\n", ax: "username = mallory\n"},
			want: map[string][]string{"a/x": {"mallory"}}},
		{name: "two filters are independent", files: map[string]string{
			"config.yaml":                   conf{Filters: contractorsFilter + preHiresFilter}.String(),
			contractors:                     "username = mallory\n",
			"ldap-config/lib/pre-hires.txt": "username = dave\n",
			ax:                              "management = boss\ncontractors = all\n",
			ay:                              "management = boss\npre-hires = dave\n",
			az:                              "management = boss\n"},
			want: map[string][]string{
				"a/x": {"Carol", "alice", "bob", "boss", "eve", "mallory"},
				"a/y": {"Carol", "alice", "bob", "boss", "dave", "eve"},
				"a/z": {"Carol", "alice", "bob", "boss", "eve"}}},
		// The reference resolves list entries only for members in the population.
		{name: "broken filter list entry nobody reaches", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n", ax: "username = bob\ncontractors = lib/nope\n"},
			want: map[string][]string{"a/x": {"bob"}}},
		{name: "broken filter list entry a contractor reaches", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n", ax: "username = mallory\ncontractors = lib/nope\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 2)}},
		{name: "username entries are checked before a broken group entry, whatever the order", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n", ax: "username = mallory\ncontractors = lib/nope\ncontractors = mallory\n"},
			want: map[string][]string{"a/x": {"mallory"}}},
		{name: "broken entry after the entry that allows the contractor", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n", ax: "username = mallory\ncontractors = mallory\ncontractors = lib/nope\n"},
			want: map[string][]string{"a/x": {"mallory"}}},
		{name: "filter list entry that is circular through the group itself", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\n", ax: "username = mallory\ncontractors = a/x\n"},
			// Filters act on Final; a/x's Ref view is available, so listing itself is allowed.
			want: map[string][]string{"a/x": {"mallory"}}},
		{name: "filter population that does not exist", files: map[string]string{
			"config.yaml": strings.Replace(withF, "lib/contractors", "lib/nope", 1), ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindMissingReference, "config.yaml", -1, "filename: nil")}},
		{name: "filter population that is broken", files: map[string]string{
			"config.yaml": withF, contractors: "bogus line\n", ax: "username = bob\n"},
			errs: []errSpec{ee(validate.KindTextFile, contractors, 1)}},
		{name: "yaml filter list with a group entry", files: map[string]string{
			"config.yaml": withF, contractors: "username = mallory\nusername = eve\n",
			"ldap-config/lib/vendors.txt": "username = eve\n",
			"ldap-config/a/x.yaml":        "filters:\n  contractors: [lib/vendors]\nrules:\n  management: boss\n"},
			want: map[string][]string{"a/x": {"Carol", "alice", "bob", "boss", "dave", "eve"}}},
	})
}

// TestFilterPaths is the excluded_paths / included_paths table of spec 9.4: plain substrings
// of the group file's full path, included winning over excluded.
func TestFilterPaths(t *testing.T) {
	files := map[string]string{
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		"ldap-config/a/ex-base.txt":       "username = mallory\nusername = bob\n",
		"ldap-config/a/ex-inc1.txt":       "username = mallory\nusername = bob\n",
		"ldap-config/a/pinned.txt":        "username = mallory\nusername = bob\ncontractors = none\n",
		"ldap-config/b/other.txt":         "username = mallory\nusername = bob\n",
	}
	filtered, kept := []string{"bob"}, []string{"bob", "mallory"}
	cases := []struct {
		name     string
		excluded string
		included string
		want     map[string][]string
	}{
		{"neither", "", "", map[string][]string{"a/ex-base": filtered, "a/ex-inc1": filtered, "a/pinned": filtered, "b/other": filtered}},
		{"excluded only", `["/a/ex"]`, "", map[string][]string{"a/ex-base": kept, "a/ex-inc1": kept, "a/pinned": filtered, "b/other": filtered}},
		{"included only", "", `["/a/ex-inc"]`, map[string][]string{"a/ex-base": kept, "a/ex-inc1": filtered, "a/pinned": kept, "b/other": kept}},
		{"both: included wins", `["/a/ex"]`, `["/a/ex-inc"]`, map[string][]string{"a/ex-base": kept, "a/ex-inc1": filtered, "a/pinned": filtered, "b/other": filtered}},
		// Substring, not prefix: "config/a/" matches inside ".../ldap-config/a/...".
		{"substring match", `["config/a/"]`, "", map[string][]string{"a/ex-base": kept, "a/ex-inc1": kept, "a/pinned": kept, "b/other": filtered}},
		// An explicit `contractors = none` does not switch back on a filter the paths switch off.
		{"explicit none in an excluded file", `["pinned"]`, "", map[string][]string{"a/pinned": kept, "a/ex-base": filtered}},
		// Set but empty: excluded_paths [] excludes nothing, so the filter applies.
		{"empty lists", `[]`, `[]`, map[string][]string{"a/ex-base": filtered, "b/other": filtered}},
		{"empty excluded list", `[]`, "", map[string][]string{"a/ex-base": filtered, "b/other": filtered}},
		{"empty included list", "", `[]`, map[string][]string{"a/ex-base": kept, "b/other": kept}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := contractorsFilter
			if c.excluded != "" {
				f += "      excluded_paths: " + c.excluded + "\n"
			}
			if c.included != "" {
				f += "      included_paths: " + c.included + "\n"
			}
			fs := map[string]string{"config.yaml": conf{Filters: f}.String()}
			for k, v := range files {
				fs[k] = v
			}
			res := mustRun(t, fs, Options{})
			for k, w := range c.want {
				wantMembers(t, res, k, w...)
			}
		})
	}
}

// TestLDAPGroupFilter: MemberOfLDAPGroup populations come from the LDAP group reader; a missing
// LDAP group (or no reader at all) filters nobody.
func TestLDAPGroupFilter(t *testing.T) {
	lockout := `  lockout:
    class: Entitlements::Extras::LDAPGroup::Filters::MemberOfLDAPGroup
    config:
      ldap_group: cn=lockout,ou=Groups,dc=example
`
	cfg := conf{Filters: lockout, Extras: "  ldap_group: {}\n"}.String()
	files := map[string]string{
		"config.yaml": cfg,
		ax:            "management = alice\n",
		ay:            "management = alice\nlockout = all\n",
		az:            "management = alice\nlockout = BOB\n",
	}
	locked := &LDAPGroup{DN: "cn=lockout,ou=Groups,dc=example", Attrs: map[string][]string{
		"objectclass":  {"groupOfUniqueNames"},
		"uniquemember": {"uid=bob,ou=People,dc=example", "uid=CAROL,ou=People,dc=example", "cn=lockout,ou=Groups,dc=example"},
	}}
	t.Run("members of the LDAP group are removed", func(t *testing.T) {
		res := mustRun(t, files, Options{LDAPGroups: NewLDAPSnapshot(locked)})
		wantMembers(t, res, "a/x", "alice", "dave")
		wantMembers(t, res, "a/y", "Carol", "alice", "bob", "dave")
		wantMembers(t, res, "a/z", "alice", "bob", "dave")
	})
	t.Run("DN compared case-insensitively", func(t *testing.T) {
		g := *locked
		g.DN = "CN=Lockout,OU=Groups,DC=example"
		res := mustRun(t, files, Options{LDAPGroups: NewLDAPSnapshot(&g)})
		wantMembers(t, res, "a/x", "alice", "dave")
	})
	t.Run("missing LDAP group filters nobody", func(t *testing.T) {
		res := mustRun(t, files, Options{LDAPGroups: NewLDAPSnapshot()})
		wantMembers(t, res, "a/x", "Carol", "alice", "bob", "dave")
	})
	t.Run("no reader at all filters nobody, with a warning", func(t *testing.T) {
		repo, _, err := loadRepo(t, files, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, _ := repo.Calculate(t.Context())
		wantMembers(t, res, "a/x", "Carol", "alice", "bob", "dave")
		if !hasWarning(repo, "config.yaml", "LDAP groups are referenced") {
			t.Errorf("warnings: %q", warningsOf(repo))
		}
	})
	t.Run("unknown object class is an error", func(t *testing.T) {
		// The reference only forgives a missing group; an unreadable one raises.
		g := *locked
		g.Attrs = map[string][]string{"objectclass": {"top"}, "uniquemember": {"uid=bob,ou=People"}}
		errs := mustFail(t, files, Options{LDAPGroups: NewLDAPSnapshot(&g)})
		if !strings.Contains(errs.Error(), "Do not know how to handle objectClass") {
			t.Errorf("errors: %v", errs)
		}
	})
}

func TestLDAPGroupRule(t *testing.T) {
	cfg := conf{Extras: "  ldap_group: {}\n"}.String()
	groups := NewLDAPSnapshot(
		&LDAPGroup{DN: "cn=ops,ou=Groups,dc=example", Attrs: map[string][]string{
			"objectclass": {"groupOfNames"}, "member": {"uid=ALICE,ou=People,dc=example", "uid=ghost,ou=People,dc=example", "cn=ops,ou=Groups,dc=example"}}},
		&LDAPGroup{DN: "cn=posix,ou=Groups,dc=example", Attrs: map[string][]string{
			"objectclass": {"top", "posixGroup"}, "memberuid": {"bob", "eve"}}},
		&LDAPGroup{DN: "cn=odd,ou=Groups,dc=example", Attrs: map[string][]string{"objectclass": {"top"}}},
	)
	runRepoCases(t, []repoCase{
		{name: "groupOfNames, case-insensitive members, self and unknown dropped", opt: Options{LDAPGroups: groups},
			files: map[string]string{"config.yaml": cfg, ax: "ldap_group = cn=ops,ou=Groups,dc=example\n"},
			want:  map[string][]string{"a/x": {"alice"}}},
		{name: "posixGroup", opt: Options{LDAPGroups: groups},
			files: map[string]string{"config.yaml": cfg, "ldap-config/a/x.yaml": "rules:\n  ldap_group: cn=posix,ou=Groups,dc=example\n"},
			want:  map[string][]string{"a/x": {"bob", "eve"}}},
		{name: "missing LDAP group", opt: Options{LDAPGroups: groups},
			files: map[string]string{"config.yaml": cfg, ax: "username = bob\nldap_group = cn=nope,dc=example\n"},
			errs:  []errSpec{ee(validate.KindLDAPGroup, ax, 2, "cn=nope,dc=example")}},
		{name: "unknown object class", opt: Options{LDAPGroups: groups},
			files: map[string]string{"config.yaml": cfg, ax: "ldap_group = cn=odd,ou=Groups,dc=example\n"},
			errs:  []errSpec{ee(validate.KindLDAPGroup, ax, 1, "objectClass")}},
		{name: "no reader", files: map[string]string{"config.yaml": cfg, ax: "ldap_group = cn=ops,ou=Groups,dc=example\n"},
			errs: []errSpec{ee(validate.KindLDAPGroup, ax, 1)}},
	})
}

// TestCustomMethodsAndFilterClasses: Options.Methods and Options.FilterClasses.
func TestCustomMethodsAndFilterClasses(t *testing.T) {
	var coreCalls atomic.Int32
	team := func(_ context.Context, value string, _ *people.Directory) ([]string, error) {
		switch value {
		case "core":
			return []string{"BOB", "alice", "not-a-person"}, nil
		case "broken":
			return nil, fmt.Errorf("team service down")
		}
		return nil, nil
	}
	methods := map[string]Method{"team": team}
	runRepoCases(t, []repoCase{
		{name: "custom method in txt and yaml", opt: Options{Methods: methods}, files: map[string]string{
			ax: "team = core\n", "ldap-config/a/y.yaml": "rules:\n  and:\n    - team: core\n    - not:\n        username: bob\n",
			az: "team = core\nteam = core\n"},
			want: map[string][]string{"a/x": {"alice", "bob"}, "a/y": {"alice"}, "a/z": {"alice", "bob"}}},
		{name: "custom method error is reported at the line", opt: Options{Methods: methods}, files: map[string]string{
			ax: "username = bob\nteam = broken\n"},
			errs: []errSpec{ee(validate.KindConfig, ax, 2, "team service down")}},
		{name: "custom method cannot replace a built-in", opt: Options{Methods: map[string]Method{"username": team}},
			files: map[string]string{ax: "username = bob\n"},
			errs:  []errSpec{ee(validate.KindConfig, "", 0, `"username"`)}},
		{name: "custom method obeys allowed_methods", opt: Options{Methods: methods}, files: map[string]string{
			"config.yaml": strings.Replace(conf{}.String(), "    base: ou=a,dc=example\n", "    base: ou=a,dc=example\n    allowed_methods: [username]\n", 1),
			ax:            "team = core\n"},
			errs: []errSpec{ee(validate.KindMethodNotAllowed, ax, 1)}},
	})
	// Each distinct value is computed once per run.
	counting := map[string]Method{"team": func(ctx context.Context, value string, d *people.Directory) ([]string, error) {
		coreCalls.Add(1)
		return team(ctx, value, d)
	}}
	mustRun(t, map[string]string{ax: "team = core\n", ay: "team = core\n", az: "team = core\nteam != core\n"},
		Options{Methods: counting})
	if n := coreCalls.Load(); n != 1 {
		t.Errorf("team core computed %d times, want 1", n)
	}

	vip := `  vip:
    class: VIPFilter
    config:
      tier: gold
`
	var gotTier string
	classes := map[string]FilterClass{"VIPFilter": func(_ context.Context, f *config.Filter, _ *people.Directory) ([]string, error) {
		gotTier = f.Config.Get("tier").Text()
		return []string{"Eve", "boss"}, nil
	}}
	res := mustRun(t, map[string]string{
		"config.yaml": conf{Filters: vip}.String(),
		ax:            "management = boss\n",
		ay:            "management = boss\nvip = eve\n",
	}, Options{FilterClasses: classes})
	wantMembers(t, res, "a/x", "Carol", "alice", "bob", "dave", "mallory")
	wantMembers(t, res, "a/y", "Carol", "alice", "bob", "dave", "eve", "mallory")
	if gotTier != "gold" {
		t.Errorf("filter class saw tier %q", gotTier)
	}
	errs := mustFail(t, map[string]string{"config.yaml": conf{Filters: vip}.String(), ax: "username = bob\n"}, Options{})
	wantErrs(t, errs, ee(validate.KindConfig, "config.yaml", -1, "VIPFilter"))

	failing := map[string]FilterClass{"VIPFilter": func(context.Context, *config.Filter, *people.Directory) ([]string, error) {
		return nil, fmt.Errorf("directory unavailable")
	}}
	errs = mustFail(t, map[string]string{"config.yaml": conf{Filters: vip}.String(), ax: "username = bob\n"},
		Options{FilterClasses: failing})
	wantErrs(t, errs, ee(validate.KindFilter, "config.yaml", -1, "directory unavailable"))
}

// countingReader records every bulk read of LDAP groups.
type countingReader struct {
	LDAPGroupReader
	calls [][]string
}

func (c *countingReader) ReadLDAPGroups(ctx context.Context, dns []string) (map[string]*LDAPGroup, error) {
	c.calls = append(c.calls, slices.Clone(dns))
	return c.LDAPGroupReader.ReadLDAPGroups(ctx, dns)
}

// TestLDAPGroupsReadInOneRequest: every LDAP group that rules name, in any file format and
// nested anywhere in a rule tree, is read in one bulk request before linking, not one by one
// (found by mutation testing: the one-by-one fallback hid a broken collection).
func TestLDAPGroupsReadInOneRequest(t *testing.T) {
	cfg := conf{Extras: "  ldap_group: {}\n"}.String()
	snap := NewLDAPSnapshot(
		&LDAPGroup{DN: "cn=ops,ou=Groups,dc=example", Attrs: map[string][]string{"objectclass": {"posixGroup"}, "memberuid": {"alice"}}},
		&LDAPGroup{DN: "cn=dev,ou=Groups,dc=example", Attrs: map[string][]string{"objectclass": {"posixGroup"}, "memberuid": {"bob"}}},
	)
	reader := &countingReader{LDAPGroupReader: snap}
	res := mustRun(t, map[string]string{"config.yaml": cfg,
		ax:                     "ldap_group = cn=ops,ou=Groups,dc=example\n",
		"ldap-config/a/y.yaml": "rules:\n  or:\n  - username: carol\n  - not:\n      ldap_group: cn=dev,ou=Groups,dc=example\n"},
		Options{LDAPGroups: reader})
	wantMembers(t, res, "a/x", "alice")
	if want := [][]string{{"cn=dev,ou=Groups,dc=example", "cn=ops,ou=Groups,dc=example"}}; !reflect.DeepEqual(reader.calls, want) {
		t.Errorf("LDAP group reads %q, want one request %q", reader.calls, want)
	}
}
