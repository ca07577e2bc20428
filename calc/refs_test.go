package calc

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

// repoCase is a whole repository and its expected result: exact members for some groups, the
// exact set of group keys, or the exact errors.
type repoCase struct {
	name  string
	files map[string]string
	opt   Options

	want map[string][]string // members per group key (nil slice: empty)
	keys []string            // when non-nil: exactly these group keys
	errs []errSpec
}

func runRepoCases(t *testing.T, cases []repoCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, errs := run(t, c.files, c.opt)
			if len(c.errs) > 0 {
				if errs == nil {
					var got []string
					for _, g := range res.Groups {
						got = append(got, g.Key+"="+strings.Join(g.Members, ","))
					}
					t.Fatalf("succeeded (%v); want errors %v", got, c.errs)
				}
				wantErrs(t, errs, c.errs...)
				return
			}
			if errs != nil {
				t.Fatalf("unexpected errors:\n%v", errs)
			}
			for k, w := range c.want {
				wantMembers(t, res, k, w...)
			}
			if c.keys != nil {
				wantKeys(t, res, c.keys...)
			}
		})
	}
}

func ee(kind validate.Kind, path string, line int, msg ...string) errSpec {
	s := errSpec{Kind: kind, Path: path, Line: line}
	if len(msg) > 0 {
		s.Msg = msg[0]
	}
	return s
}

const (
	ax = "ldap-config/a/x.txt"
	ay = "ldap-config/a/y.txt"
	az = "ldap-config/a/z.txt"
	by = "ldap-config/b/y.txt"
)

func TestReferences(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "explicit reference uses the Ref view", files: map[string]string{
			ax: "group = b/y\n", by: "username = alice\nusername = bob\n"},
			want: map[string][]string{"a/x": {"alice", "bob"}, "b/y": {"alice", "bob"}}},
		{name: "wildcard matching several", files: map[string]string{
			ax: "group = b/team-*\n", "ldap-config/b/team-1.txt": "username = alice\n",
			"ldap-config/b/team-2.yaml": "rules:\n  username: bob\n", "ldap-config/b/other.txt": "username = eve\n"},
			want: map[string][]string{"a/x": {"alice", "bob"}}},
		{name: "wildcard in the middle", files: map[string]string{
			ax: "group = b/t*-x\n", "ldap-config/b/t1-x.txt": "username = alice\n",
			"ldap-config/b/t2-y.txt": "username = bob\n", "ldap-config/b/t-x.txt": "username = eve\n"},
			want: map[string][]string{"a/x": {"alice", "eve"}}},
		{name: "bare star matches the whole OU", files: map[string]string{
			ax: "group = b/*\n", by: "username = alice\n", "ldap-config/b/z.txt": "username = bob\n"},
			want: map[string][]string{"a/x": {"alice", "bob"}}},
		{name: "wildcard matching nothing", files: map[string]string{ax: "username = bob\ngroup = b/nope-*\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 2, "Could not find a configuration")}},
		{name: "wildcard matching only itself", files: map[string]string{ax: "username = bob\ngroup = a/x*\n"},
			errs: []errSpec{ee(validate.KindSelfWildcard, ax, 2, "a/x.txt")}},
		{name: "wildcard skips itself among others", files: map[string]string{
			ax: "group = a/*\n", ay: "username = bob\n", az: "username = alice\n"},
			want: map[string][]string{"a/x": {"alice", "bob"}, "a/y": {"bob"}, "a/z": {"alice"}}},
		{name: "wildcard reaches dummy OUs and expired groups", files: map[string]string{
			ax:                        "group = lib/*\n",
			"ldap-config/lib/l1.txt":  "username = bob\n",
			"ldap-config/lib/l2.txt":  "username = eve\nexpiration = 2020-01-01\n",
			"ldap-config/lib/l3.yaml": "rules:\n  username: dave\n"},
			want: map[string][]string{"a/x": {"bob", "dave"}}},
		{name: "wildcard reaching a broken dummy group fails", files: map[string]string{
			ax: "group = lib/*\n", "ldap-config/lib/ok.txt": "username = bob\n", "ldap-config/lib/zz.txt": "username: bob\n"},
			errs: []errSpec{ee(validate.KindTextFile, "ldap-config/lib/zz.txt", 1)}},
		{name: "negated self reference is circular", files: map[string]string{ax: "username = bob\ngroup != a/x\n"},
			errs: []errSpec{ee(validate.KindCircular, ax, 2, "a/x -> a/x")}},
		{name: "explicit self reference is circular", files: map[string]string{ax: "username = bob\ngroup = a/x\n"},
			errs: []errSpec{ee(validate.KindCircular, ax, 2, "Error: Circular dependency a/x -> a/x")}},
		{name: "circular chain starts at the outermost group", files: map[string]string{
			ax: "group = a/y\n", ay: "group = a/z\n", az: "username = bob\ngroup = a/y\n"},
			errs: []errSpec{ee(validate.KindCircular, az, 2, "Error: Circular dependency a/x -> a/y -> a/z -> a/y")}},
		{name: "circular across OUs", files: map[string]string{ax: "group = b/y\n", by: "group = a/x\n"},
			errs: []errSpec{ee(validate.KindCircular, by, 1, "Circular dependency a/x -> b/y -> a/x")}},
		{name: "circular through a dummy OU", files: map[string]string{
			ax: "group = lib/l\n", "ldap-config/lib/l.yaml": "rules:\n  or:\n    - group: a/x\n"},
			errs: []errSpec{ee(validate.KindCircular, "ldap-config/lib/l.yaml", 3, "a/x -> lib/l -> a/x")}},
		{name: "unknown OU", files: map[string]string{ax: "group = nope/y\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 1, `OU "nope"`)}},
		{name: "missing file", files: map[string]string{ax: "username = bob\ngroup = b/nope\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 2,
				`Could not find a configuration for ldap-config/b/nope.(rb|txt|yaml) (filename: "ldap-config/a/x.txt")`)}},
		{name: "no slash", files: map[string]string{ax: "group = noslash\n"},
			errs: []errSpec{ee(validate.KindInvalidReference, ax, 1)}},
		{name: "DN instead of a reference (Q-17)", files: map[string]string{ax: "group = cn=admins,ou=Groups,dc=example\n"},
			errs: []errSpec{ee(validate.KindInvalidReference, ax, 1, "ldap_group")}},
		{name: "trailing slash", files: map[string]string{ax: "group = b/\n"},
			errs: []errSpec{ee(validate.KindInvalidReference, ax, 1)}},
		{name: "leading slash makes an unknown OU", files: map[string]string{ax: "group = /b/y\n", by: "username = bob\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 1, `"/b"`)}},
		{name: "OU key is case-sensitive", files: map[string]string{ax: "group = B/y\n", by: "username = bob\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 1)}},
		{name: "cn is case-sensitive", files: map[string]string{ax: "group = b/Y\n", by: "username = bob\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 1)}},
		{name: "yaml reference errors have the rule's line", files: map[string]string{
			"ldap-config/a/x.yaml": "rules:\n  or:\n    - username: bob\n    - group: b/nope\n"},
			errs: []errSpec{ee(validate.KindMissingReference, "ldap-config/a/x.yaml", 4)}},
		{name: "expired reference to a missing group is never evaluated", files: map[string]string{
			ax: "username = bob\ngroup = b/nope; expiration = 2020-01-01\n"},
			want: map[string][]string{"a/x": {"bob"}}},
		{name: "reference to a group expired as a whole contributes nothing", files: map[string]string{
			ax: "username = bob\ngroup = b/y\n", by: "username = alice\nexpiration = 2020-01-01\n"},
			want: map[string][]string{"a/x": {"bob"}, "b/y": nil}},
		{name: "reference to a dummy OU group", files: map[string]string{
			ax: "group = lib/l\n", "ldap-config/lib/l.txt": "username = bob\nusername = Carol\n"},
			want: map[string][]string{"a/x": {"Carol", "bob"}, "lib/l": {"Carol", "bob"}}},
		{name: "reference candidates use the enumeration name rules (Q-33)", files: map[string]string{
			ax: "username = bob\ngroup = lib/a.b\n", "ldap-config/lib/a.b.txt": "username = alice\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 2)}},
		{name: "wildcard ignores illegal names in a dummy OU", files: map[string]string{
			ax: "group = lib/a*\n", "ldap-config/lib/a.b.txt": "username = alice\n", "ldap-config/lib/ab.txt": "username = bob\n",
			"ldap-config/lib/a c.txt": "username = eve\n"},
			want: map[string][]string{"a/x": {"bob"}}},
		{name: "a mirror OU cannot be referenced", files: map[string]string{
			"config.yaml": conf{Groups: stdGroups + "  m:\n    backend: l\n    base: ou=m,dc=example\n    mirror: b\n"}.String(),
			ax:            "group = m/y\n", by: "username = bob\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 1, "mirror")}},
		// a wildcard that skipped its own in-progress file; a later explicit reference works.
		{name: "Q-01 later explicit reference to a wildcard-skipped group", files: map[string]string{
			"ldap-config/a/a1.txt": "username = bob\ngroup = a/a*\n", "ldap-config/a/a2.txt": "username = alice\n",
			"ldap-config/a/z.txt": "group = a/a1\n", by: "group = a/a1\n"},
			want: map[string][]string{"a/a1": {"alice", "bob"}, "a/z": {"alice", "bob"}, "b/y": {"alice", "bob"}}},
		{name: "Q-01 earlier explicit reference to a wildcard group", files: map[string]string{
			"ldap-config/a/a0.txt": "group = a/a1\n",
			"ldap-config/a/a1.txt": "username = bob\ngroup = a/a*\n", "ldap-config/a/a2.txt": "username = alice\n"},
			// a0 is being computed when a1's wildcard runs, so a1 skips it (and a2 is still included).
			want: map[string][]string{"a/a0": {"alice", "bob"}, "a/a1": {"alice", "bob"}}},
		{name: "wildcard skipping an in-progress group that is not itself", files: map[string]string{
			ax: "group = b/y\n", by: "group = a/*\n", az: "username = eve\n"},
			want: map[string][]string{"a/x": {"eve"}, "b/y": {"eve"}, "a/z": {"eve"}}},
		{name: "every broken file is reported", files: map[string]string{
			ax: "group = b/nope\n", ay: "username ~ bob\n", by: "management = nobody\n"},
			errs: []errSpec{
				ee(validate.KindMissingReference, ax, 1),
				ee(validate.KindTextFile, ay, 1),
				ee(validate.KindUnknownManager, by, 1),
			}},
		{name: "a broken referenced file is reported once", files: map[string]string{
			ax: "group = lib/bad\n", ay: "group = lib/bad\n", "ldap-config/lib/bad.txt": "username = bob\nnope = x\n"},
			errs: []errSpec{ee(validate.KindMethodNotAllowed, "ldap-config/lib/bad.txt", 2)}},
	})
}

func TestMultiLevelOUs(t *testing.T) {
	groups := stdGroups + `  apps:
    backend: l
    base: ou=apps,dc=example
  apps/web:
    backend: l
    base: ou=web,ou=apps,dc=example
  apps/web/inner:
    type: dummy
`
	cfg := conf{Groups: groups}.String()
	runRepoCases(t, []repoCase{
		{name: "reference split on the last slash", files: map[string]string{
			"config.yaml":                         cfg,
			ax:                                    "group = apps/web/team\ngroup = apps/web/inner/deep\n",
			"ldap-config/apps/top.txt":            "username = eve\n",
			"ldap-config/apps/web/team.txt":       "username = bob\n",
			"ldap-config/apps/web/inner/deep.txt": "username = dave\n"},
			want: map[string][]string{"a/x": {"bob", "dave"}, "apps/top": {"eve"}, "apps/web/team": {"bob"},
				"apps/web/inner/deep": {"dave"}}},
		{name: "parent OU ignores the child directory", files: map[string]string{
			"config.yaml": cfg, "ldap-config/apps/web/team.txt": "username = bob\n"},
			keys: []string{"apps/web/team"}},
		{name: "the child directory is not a group of the parent", files: map[string]string{
			"config.yaml": cfg, ax: "group = apps/web\n", "ldap-config/apps/web/team.txt": "username = bob\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 1)}},
		{name: "a nested directory without an OU key cannot be referenced", files: map[string]string{
			ax: "group = a/sub/y\n", "ldap-config/a/sub/y.txt": "username = bob\n"},
			errs: []errSpec{ee(validate.KindMissingReference, ax, 1, `OU "a/sub"`)}},
		{name: "an OU with only subdirectories has no groups", files: map[string]string{
			"config.yaml": cfg, "ldap-config/apps/web/": ""},
			keys: []string{}},
	})
}

func TestDummyOULaziness(t *testing.T) {
	bad := map[string]string{
		ax:                           "username = bob\n",
		"ldap-config/lib/broken.txt": "this is not a rule\n",
		"ldap-config/lib/rb.rb":      "# ruby\n",
		"ldap-config/lib/bad.yaml":   "rules: [\n",
		"ldap-config/lib/good.txt":   "username = alice\n",
		"ldap-config/lib/ref.txt":    "group = lib/missing\n",
	}
	t.Run("unreferenced broken files do not fail the run", func(t *testing.T) {
		repo, _, err := loadRepo(t, bad, Options{})
		if err != nil {
			t.Fatalf("load failed: %v", err)
		}
		res, err := repo.Calculate(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		wantKeys(t, res, "a/x", "lib/good")
		wantMembers(t, res, "lib/good", "alice")
		for _, p := range []string{"ldap-config/lib/broken.txt", "ldap-config/lib/rb.rb", "ldap-config/lib/bad.yaml", "ldap-config/lib/ref.txt"} {
			if !hasWarning(repo, p, "left out") {
				t.Errorf("no warning for %s; warnings: %q", p, warningsOf(repo))
			}
		}
	})
	t.Run("Strict fails on them", func(t *testing.T) {
		errs := mustFail(t, bad, Options{Strict: true})
		wantErrs(t, errs,
			ee(validate.KindTextFile, "ldap-config/lib/broken.txt", 1),
			ee(validate.KindUnsupported, "ldap-config/lib/rb.rb", 0),
			ee(validate.KindRuleStructure, "ldap-config/lib/bad.yaml", -1),
			ee(validate.KindMissingReference, "ldap-config/lib/ref.txt", 1))
	})
	t.Run("referenced broken file fails", func(t *testing.T) {
		files := map[string]string{ax: "group = lib/broken\n", "ldap-config/lib/broken.txt": "nope\n"}
		wantErrs(t, mustFail(t, files, Options{}), ee(validate.KindTextFile, "ldap-config/lib/broken.txt", 1))
	})
	// A referenced dummy group contributes its Ref view; its own filter settings only matter
	// for its filtered view, which the reference never computes.
	filterBroken := map[string]string{
		"config.yaml":                     conf{Filters: contractorsFilter}.String(),
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		"ldap-config/lib/l.txt":           "username = bob\nusername = mallory\ncontractors = lib/nope\n",
		ax:                                "group = lib/l\n",
	}
	t.Run("referenced dummy group with a broken filter list", func(t *testing.T) {
		repo, _, err := loadRepo(t, filterBroken, Options{})
		if err != nil {
			t.Fatalf("load failed: %v", err)
		}
		res, _ := repo.Calculate(t.Context())
		wantKeys(t, res, "a/x", "lib/contractors")
		wantMembers(t, res, "a/x", "bob")
		if !hasWarning(repo, "ldap-config/lib/l.txt", "lib/nope") {
			t.Errorf("warnings: %q", warningsOf(repo))
		}
	})
	t.Run("referenced dummy group with a broken filter list, Strict", func(t *testing.T) {
		wantErrs(t, mustFail(t, filterBroken, Options{Strict: true}),
			ee(validate.KindMissingReference, "ldap-config/lib/l.txt", 3))
	})
	t.Run("unused rb file in a dummy OU is fine", func(t *testing.T) {
		res := mustRun(t, map[string]string{ax: "username = bob\n", "ldap-config/lib/legacy.rb": "class X; end\n"}, Options{})
		wantKeys(t, res, "a/x")
	})
	t.Run("rb file needed by reference", func(t *testing.T) {
		errs := mustFail(t, map[string]string{ax: "group = lib/legacy\n", "ldap-config/lib/legacy.rb": "class X; end\n"}, Options{})
		wantErrs(t, errs, ee(validate.KindUnsupported, "ldap-config/lib/legacy.rb", 0))
	})
	t.Run("rb file in an enumerated OU", func(t *testing.T) {
		errs := mustFail(t, map[string]string{ax: "username = bob\n", "ldap-config/a/legacy.rb": "class X; end\n"}, Options{})
		wantErrs(t, errs, ee(validate.KindUnsupported, "ldap-config/a/legacy.rb", 0))
	})
	t.Run("dummy OU without a directory is skipped", func(t *testing.T) {
		cfg := conf{Groups: stdGroups + "  ghost:\n    type: dummy\n"}.String()
		res := mustRun(t, map[string]string{"config.yaml": cfg, ax: "username = bob\n"}, Options{})
		wantKeys(t, res, "a/x")
	})
}

func TestDuplicateGroup(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "same cn, two extensions, enumerated", files: map[string]string{
			ax: "username = bob\n", "ldap-config/a/x.yaml": "rules:\n  username: alice\n"},
			errs: []errSpec{ee(validate.KindDuplicateGroup, ax, 0, "duplicate group a/x: ldap-config/a/x.txt, ldap-config/a/x.yaml (one file per group name)")}},
		{name: "same cn, three extensions: every file named", files: map[string]string{
			ax: "username = bob\n", "ldap-config/a/x.yaml": "rules:\n  username: alice\n", "ldap-config/a/x.rb": "# ruby\n"},
			errs: []errSpec{ee(validate.KindDuplicateGroup, "ldap-config/a/x.rb", 0, "duplicate group a/x: ldap-config/a/x.rb, ldap-config/a/x.txt, ldap-config/a/x.yaml (one file per group name)")}},
		{name: "same cn, two extensions, referenced in a dummy OU", files: map[string]string{
			ax: "group = lib/d\n", "ldap-config/lib/d.txt": "username = bob\n", "ldap-config/lib/d.yaml": "rules:\n  username: alice\n"},
			errs: []errSpec{ee(validate.KindDuplicateGroup, "ldap-config/lib/d.txt", 0)}},
		{name: "same cn in an unreferenced dummy OU is only a warning", files: map[string]string{
			ax: "username = bob\n", "ldap-config/lib/d.txt": "username = bob\n", "ldap-config/lib/d.yaml": "rules:\n  username: alice\n"},
			keys: []string{"a/x"}},
	})
}

// TestOULimits: allowed_methods / allowed_types hold for the owning OU however the file is
// reached, and allowed_types is checked before anything else.
func TestOULimits(t *testing.T) {
	limited := func(extra string) string {
		return conf{Groups: `  a:
    backend: l
    base: ou=a,dc=example
  b:
    backend: l
    base: ou=b,dc=example
  lib:
    type: dummy
` + extra}.String()
	}
	libMethods := limited("    allowed_methods: [username, group]\n")
	libTypes := limited("    allowed_types: [yaml]\n")
	aMethods := strings.Replace(limited(""), "    base: ou=a,dc=example\n", "    base: ou=a,dc=example\n    allowed_methods: [username, entitlements_group, bogus]\n", 1)
	aTypes := strings.Replace(limited(""), "    base: ou=a,dc=example\n", "    base: ou=a,dc=example\n    allowed_types: [txt]\n", 1)
	runRepoCases(t, []repoCase{
		{name: "allowed_methods of a dummy OU, file reached by reference", files: map[string]string{
			"config.yaml": libMethods, ax: "group = lib/r\n", "ldap-config/lib/r.txt": "management = alice\n"},
			errs: []errSpec{ee(validate.KindMethodNotAllowed, "ldap-config/lib/r.txt", 1)}},
		{name: "allowed_methods of a dummy OU, yaml file reached by reference", files: map[string]string{
			"config.yaml": libMethods, ax: "group = lib/r\n", "ldap-config/lib/r.yaml": "rules:\n  or:\n    - username: bob\n    - direct_report: alice\n"},
			errs: []errSpec{ee(validate.KindMethodNotAllowed, "ldap-config/lib/r.yaml", 4)}},
		{name: "allowed_methods of the referenced OU, not of the referencing one", files: map[string]string{
			"config.yaml": libMethods, ax: "management = alice\ngroup = lib/r\n", "ldap-config/lib/r.txt": "username = eve\n"},
			want: map[string][]string{"a/x": {"Carol", "alice", "bob", "dave", "eve"}}},
		{name: "aliases and unknown names in allowed_methods allow nothing", files: map[string]string{
			"config.yaml": aMethods, ax: "username = bob\ngroup = b/y\n", by: "username = alice\n"},
			errs: []errSpec{ee(validate.KindMethodNotAllowed, ax, 2)}},
		{name: "alias of an allowed method", files: map[string]string{
			"config.yaml": strings.Replace(aMethods, "entitlements_group", "group", 1), ax: "entitlements_group = b/y\n", by: "username = alice\n"},
			want: map[string][]string{"a/x": {"alice"}}},
		{name: "expired line with a method the OU forbids", files: map[string]string{
			"config.yaml": aMethods, ax: "username = bob\nmanagement = alice; expiration = 2020-01-01\n"},
			want: map[string][]string{"a/x": {"bob"}}},
		{name: "allowed_types of a dummy OU, file reached by reference", files: map[string]string{
			"config.yaml": libTypes, ax: "group = lib/r\n", "ldap-config/lib/r.txt": "username = bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/lib/r.txt", 0, `"txt"`)}},
		{name: "allowed_types of an enumerated OU", files: map[string]string{
			"config.yaml": aTypes, ax: "username = bob\n", "ldap-config/a/y.yaml": "rules:\n  username: bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/y.yaml", 0, "Allowed: txt")}},
		{name: "allowed_types rejects rb before the unsupported error", files: map[string]string{
			"config.yaml": aTypes, ax: "username = bob\n", "ldap-config/a/y.rb": "class Y; end\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/y.rb", 0)}},
		{name: "allowed_types rejects a broken file before parsing it", files: map[string]string{
			"config.yaml": aTypes, ax: "username = bob\n", "ldap-config/a/y.yaml": "rules: [\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/y.yaml", 0)}},
	})
}

func TestEnumeration(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "docs, dotfiles and subdirectories are skipped", files: map[string]string{
			ax: "username = bob\n", "ldap-config/a/README.md": "# docs\n", "ldap-config/a/PR_TEMPLATE.md": "x\n",
			"ldap-config/a/.gitkeep": "", "ldap-config/a/.hidden.txt": "garbage\n", "ldap-config/a/sub/bad.txt": "garbage\n"},
			keys: []string{"a/x"}},
		{name: "readme.md is not skipped", files: map[string]string{ax: "username = bob\n", "ldap-config/a/readme.md": "x\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/readme.md", 0, "Unable to map filename")}},
		{name: "illegal name a.b.txt", files: map[string]string{ax: "username = bob\n", "ldap-config/a/a.b.txt": "username = bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/a.b.txt", 0, `Illegal LDAP group name "a.b"`)}},
		{name: "illegal characters", files: map[string]string{"ldap-config/a/abcd!efg.txt": "username = bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/abcd!efg.txt", 0, "Illegal")}},
		{name: "non-ASCII name", files: map[string]string{"ldap-config/a/kätzchen.txt": "username = bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/kätzchen.txt", 0, "Illegal")}},
		{name: ".yml extension", files: map[string]string{"ldap-config/a/x.yml": "rules: {username: bob}\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/x.yml", 0, "Unable to map filename")}},
		{name: "upper-case extension", files: map[string]string{"ldap-config/a/x.TXT": "username = bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/x.TXT", 0)}},
		// The extension is a trailing "." and word characters: a name ending in a dot, or in a
		// dot and other characters, has none, and is not a legal group name either.
		{name: "name ending in a dot", files: map[string]string{"ldap-config/a/x.": "username = bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/x.", 0, `Illegal LDAP group name "x." in a!`)}},
		{name: "extension with a dash", files: map[string]string{"ldap-config/a/team.v1-old": "username = bob\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/team.v1-old", 0, `Illegal LDAP group name "team.v1-old" in a!`)}},
		{name: "no extension", files: map[string]string{"ldap-config/a/Makefile": "all:\n"},
			errs: []errSpec{ee(validate.KindFileType, "ldap-config/a/Makefile", 0, "extension")}},
		{name: "several illegal files, all reported", files: map[string]string{
			"ldap-config/a/Makefile": "", "ldap-config/a/x.json": "{}", "ldap-config/b/a.b.txt": ""},
			errs: []errSpec{
				ee(validate.KindFileType, "ldap-config/a/Makefile", 0),
				ee(validate.KindFileType, "ldap-config/a/x.json", 0),
				ee(validate.KindFileType, "ldap-config/b/a.b.txt", 0)}},
		{name: "illegal names in an unreferenced dummy OU are ignored", files: map[string]string{
			ax: "username = bob\n", "ldap-config/lib/README": "", "ldap-config/lib/a.b.txt": "", "ldap-config/lib/x.md": ""},
			keys: []string{"a/x"}},
		{name: "DN and metadata of an enumerated group", files: map[string]string{ax: "username = bob\n"},
			keys: []string{"a/x"}},
	})
	t.Run("DN, type, file", func(t *testing.T) {
		res := mustRun(t, map[string]string{ax: "username = bob\n", "ldap-config/lib/l.txt": "username = bob\n"}, Options{})
		g := res.Group("a/x")
		if g.DN != "cn=x,ou=a,dc=example" || g.OU != "a" || g.CN != "x" || g.Type != "ldap" || g.File != ax || g.Mirror {
			t.Errorf("a/x = %+v", g)
		}
		l := res.Group("lib/l")
		if l.DN != "" || l.Type != "dummy" {
			t.Errorf("lib/l = %+v", l)
		}
	})
}

// TestCircularWithDir: a cycle through an OU with a `dir` is reported as a circular dependency
// with OU keys.
func TestCircularWithDir(t *testing.T) {
	cfg := conf{Groups: stdGroups + "  shared:\n    type: dummy\n    dir: ../elsewhere/shared\n"}.String()
	errs := mustFail(t, map[string]string{
		"config.yaml": cfg, ax: "group = shared/s\n", "elsewhere/shared/s.txt": "group = a/x\n"}, Options{})
	wantErrs(t, errs, ee(validate.KindCircular, "elsewhere/shared/s.txt", 1, "a/x -> shared/s -> a/x"))
}

// TestResultOrder: groups are sorted by key and members by byte value.
func TestResultOrder(t *testing.T) {
	res := mustRun(t, map[string]string{
		"ldap-config/b/b.txt": "management = boss\n", "ldap-config/a/z.txt": "username = bob\n",
		"ldap-config/a/A.txt": "username = eve\n"}, Options{})
	var keys []string
	for _, g := range res.Groups {
		keys = append(keys, g.Key)
	}
	if !slices.Equal(keys, []string{"a/A", "a/z", "b/b"}) {
		t.Errorf("keys %q", keys)
	}
	wantMembers(t, res, "b/b", everyone...)
}

// TestErrorsDeterministic: files are parsed concurrently, yet the error list is the same, in
// the same order, on every run.
func TestErrorsDeterministic(t *testing.T) {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("ldap-config/a/g%02d.txt", i)] = fmt.Sprintf("username = bob\ngroup = b/missing%d\nbad line %d\n", i, i)
	}
	var first string
	for i := range 3 {
		errs := mustFail(t, files, Options{Parallelism: 8})
		if len(errs) != 80 { // each file: its missing reference and its unparseable line (issue 13)
			t.Fatalf("%d errors, want 80:\n%v", len(errs), errs)
		}
		if i == 0 {
			first = errs.Error()
		} else if errs.Error() != first {
			t.Fatalf("run %d reported errors in another order", i)
		}
	}
	if !strings.HasPrefix(first, "ldap-config/a/g00.txt:2: ") {
		t.Errorf("first error %q", strings.SplitN(first, "\n", 2)[0])
	}
}
