package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backends"
	. "github.com/entitlements-go/entitlements/config"

	"github.com/entitlements-go/entitlements/validate"
)

// Fixtures: a temporary directory with ldap-config/{a,b,c,lib,mirror-src} and a manager map, and a
// config text built from the parts below.

const peoplePart = `people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`

const ldapConnPart = `    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: uid=binder,dc=example
    ldap_bindpw: secret
    person_dn_format: uid=%KEY%,ou=People,dc=example
`

// ldapOU is an OU entry of type ldap with every required key.
func ldapOU(key, extra string) string {
	return "  " + key + ":\n    type: ldap\n    base: ou=" + strings.ReplaceAll(key, "/", "-") + ",dc=example\n" + ldapConnPart + extra
}

func cfgText(groups string, rest ...string) string {
	return "configuration_path: ./ldap-config\n" + peoplePart + "groups:\n" + groups + strings.Join(rest, "")
}

func tempRepo(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"a", "b", "c", "lib", "apps/web", "common/internal", "gh"} {
		if err := os.MkdirAll(filepath.Join(root, "ldap-config", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "manager-map.yaml"), []byte("bob: {manager: bob}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

var testEnv = map[string]string{"BASE": "ou=from-env,dc=example", "EMPTY": ""}

func testOptions(root string) Options {
	return Options{Types: backends.Types(), BaseDir: root, Getenv: func(k string) (string, bool) { v, ok := testEnv[k]; return v, ok }}
}

// parse parses text as root/config.yaml.
func parse(t testing.TB, text string, opt ...Options) (*Config, []validate.Warning, validate.List) {
	t.Helper()
	root := tempRepo(t)
	o := testOptions(root)
	if len(opt) > 0 {
		o.FilterClasses = opt[0].FilterClasses
		o.Types = append(o.Types, opt[0].Types...)
	}
	cfg, warns, err := Parse(filepath.Join(root, "config.yaml"), []byte(text), o)
	if err == nil {
		if cfg == nil {
			t.Fatal("nil config without error")
		}
		return cfg, warns, nil
	}
	var l validate.List
	if !errors.As(err, &l) {
		t.Fatalf("error %v (%T) is not a validate.List", err, err)
	}
	if cfg != nil {
		t.Fatal("config returned together with errors")
	}
	for _, e := range l {
		if e.Kind != validate.KindConfig || e.Path != "config.yaml" {
			t.Errorf("error %q has kind %q path %q", e.Msg, e.Kind, e.Path)
		}
	}
	return nil, warns, l
}

type cfgErr struct {
	line int // -1: any
	msg  string
}

func checkCfgErrs(t *testing.T, got validate.List, want []cfgErr) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.Contains(got[i].Msg, want[i].msg) && (want[i].line < 0 || got[i].Line == want[i].line)
	}
	if !ok {
		var g []string
		for _, e := range got {
			g = append(g, fmt.Sprintf("%d: %s", e.Line, e.Msg))
		}
		t.Errorf("errors:\n  %s\nwant %v", strings.Join(g, "\n  "), want)
	}
}

type cfgCase struct {
	name string
	text string
	errs []cfgErr // nil: must load
	opt  Options
}

func runCfgCases(t *testing.T, cases []cfgCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, errs := parse(t, c.text, c.opt)
			if c.errs == nil {
				if errs != nil {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if errs == nil {
				t.Fatalf("loaded; want errors %v", c.errs)
			}
			checkCfgErrs(t, errs, c.errs)
		})
	}
}

var okGroups = ldapOU("a", "")

func TestTopLevel(t *testing.T) {
	runCfgCases(t, []cfgCase{
		{name: "minimal", text: cfgText(okGroups)},
		{name: "missing configuration_path", text: peoplePart + "groups:\n" + okGroups,
			errs: []cfgErr{{1, "Entitlements configuration file is missing attribute configuration_path!"}}},
		{name: "missing people", text: "configuration_path: ./ldap-config\npeople_data_source: yaml\ngroups:\n" + okGroups,
			errs: []cfgErr{{1, "is missing attribute people!"}}},
		{name: "missing people_data_source", text: "configuration_path: ./ldap-config\npeople:\n  yaml: {type: yaml}\ngroups:\n" + okGroups,
			errs: []cfgErr{{1, "is missing attribute people_data_source!"}}},
		{name: "missing groups", text: "configuration_path: ./ldap-config\n" + peoplePart,
			errs: []cfgErr{{1, "is missing attribute groups!"}}},
		{name: "several missing", text: "configuration_path: ./ldap-config\n",
			errs: []cfgErr{{1, "attribute groups!"}, {1, "attribute people!"}, {1, "attribute people_data_source!"}}},
		{name: "groups is a list", text: "configuration_path: ./ldap-config\n" + peoplePart + "groups: [a]\n",
			errs: []cfgErr{{8, `Entitlements configuration file attribute "groups" is supposed to be Hash, not Array!`}}},
		{name: "configuration_path is an integer", text: "configuration_path: 5\n" + peoplePart + "groups:\n" + okGroups,
			errs: []cfgErr{{1, `attribute "configuration_path" is supposed to be String, not Integer!`}}},
		{name: "configuration_path is null", text: "configuration_path:\n" + peoplePart + "groups:\n" + okGroups,
			errs: []cfgErr{{1, `is supposed to be String, not NilClass!`}}},
		{name: "max_parallelism is a string", text: cfgText(okGroups, "max_parallelism: many\n"),
			errs: []cfgErr{{-1, `"max_parallelism" is supposed to be Integer, not String!`}}},
		{name: "max_parallelism zero", text: cfgText(okGroups, "max_parallelism: 0\n"),
			errs: []cfgErr{{-1, "max_parallelism must be at least 1"}}},
		{name: "auditors is a map", text: cfgText(okGroups, "auditors: {a: b}\n"),
			errs: []cfgErr{{-1, `"auditors" is supposed to be Array, not Hash!`}}},
		// Auditors are only built when changes are applied, and entitlements-go does not run them.
		{name: "auditor without class", text: cfgText(okGroups, "auditors:\n  - description: x\n")},
		// A key with no value is nil, which the reference's type check rejects.
		{name: "optional keys may not be null", text: cfgText(okGroups, "backends:\nfilters:\n"),
			errs: []cfgErr{{-1, `"backends" is supposed to be Hash, not NilClass!`}, {-1, `"filters" is supposed to be Hash, not NilClass!`}}},
		{name: "unknown keys", text: cfgText(okGroups, "foo: 1\nbar: 2\n"),
			errs: []cfgErr{{1, "Entitlements configuration file contains unknown attribute(s): foo, bar"}}},
		{name: "ignore_expirations is accepted (Q-09)", text: cfgText(okGroups, "ignore_expirations: yes\n")},
		{name: "ignore_expirations must be a boolean", text: cfgText(okGroups, "ignore_expirations: sometimes\n"),
			errs: []cfgErr{{-1, `"ignore_expirations" is supposed to be Boolean`}}},
		{name: "top level is a list", text: "- a\n", errs: []cfgErr{{1, "must be a map"}}},
		{name: "empty file", text: "", errs: []cfgErr{{1, "must be a map"}}},
		{name: "syntax error", text: "groups: [\n", errs: []cfgErr{{-1, "invalid YAML"}}},
		{name: "aliases are refused", text: "x: &a 1\ny: *a\n", errs: []cfgErr{{-1, "invalid YAML"}}},
		{name: "dates are refused", text: cfgText(okGroups, "max_parallelism: 2024-01-01\n"), errs: []cfgErr{{-1, "invalid YAML"}}},
		{name: "symbols are refused", text: cfgText(okGroups, "max_parallelism: :four\n"), errs: []cfgErr{{-1, "symbols are not allowed"}}},
		{name: "Ruby tags are refused", text: cfgText(okGroups, "auditors: !ruby/object:Set {}\n"), errs: []cfgErr{{-1, "invalid YAML"}}},
		{name: "standard tags are accepted", text: cfgText(okGroups, "max_parallelism: !!int \"4\"\n")},
	})
}

func TestTopLevelValues(t *testing.T) {
	cfg, _, errs := parse(t, cfgText(okGroups, "ignore_expirations: true\nmax_parallelism: 010\n"))
	if errs != nil {
		t.Fatal(errs)
	}
	if !cfg.IgnoreExpirations || cfg.MaxParallelism != 8 || cfg.PeopleDataSource != "yaml" {
		t.Errorf("config %+v", cfg)
	}
	cfg, _, _ = parse(t, cfgText(okGroups))
	if cfg.IgnoreExpirations || cfg.MaxParallelism != 1 {
		t.Errorf("defaults: ignore %v, max_parallelism %d", cfg.IgnoreExpirations, cfg.MaxParallelism)
	}
	if !filepath.IsAbs(cfg.File) || cfg.Dir != filepath.Dir(cfg.File) || cfg.ConfigurationPath != filepath.Join(cfg.Dir, "ldap-config") {
		t.Errorf("paths: file %q dir %q cp %q", cfg.File, cfg.Dir, cfg.ConfigurationPath)
	}
	if cfg.Rel(filepath.Join(cfg.Dir, "x", "y.txt")) != filepath.Join("x", "y.txt") || cfg.Rel("/elsewhere/z") != "/elsewhere/z" {
		t.Errorf("Rel: %q %q", cfg.Rel(filepath.Join(cfg.Dir, "x", "y.txt")), cfg.Rel("/elsewhere/z"))
	}
}

func TestConfigurationPath(t *testing.T) {
	root := tempRepo(t)
	opt := testOptions(root)
	abs := filepath.Join(root, "ldap-config")
	for _, c := range []struct{ cp, want string }{
		{"./ldap-config", abs},
		{"ldap-config/", abs},
		{"./sub/../ldap-config", abs},
		{abs + "/", abs},
		{abs + "/./a/..", abs},
	} {
		text := strings.Replace(cfgText(okGroups), "./ldap-config", c.cp, 1)
		cfg, _, err := Parse(filepath.Join(root, "config.yaml"), []byte(text), opt)
		if err != nil {
			t.Errorf("%s: %v", c.cp, err)
			continue
		}
		if cfg.ConfigurationPath != c.want {
			t.Errorf("configuration_path %q resolved to %q, want %q", c.cp, cfg.ConfigurationPath, c.want)
		}
	}
}

func TestBackends(t *testing.T) {
	backends := "backends:\n  l:\n    type: ldap\n    base: ou=preset,dc=example\n" + ldapConnPart
	runCfgCases(t, []cfgCase{
		{name: "unknown backend", text: cfgText("  a:\n    backend: nope\n    base: ou=a\n", backends),
			errs: []cfgErr{{10, `Entitlements configuration group "a" references non-existing backend "nope"!`}}},
		{name: "backend without a type", text: cfgText("  a:\n    backend: l\n", "backends:\n  l:\n    base: ou=x\n"),
			errs: []cfgErr{{-1, `Entitlements backend "l" is missing a type!`}}},
		{name: "backend is not a map", text: cfgText("  a:\n    type: dummy\n    backend: l\n", "backends:\n  l: ldap\n"),
			errs: []cfgErr{{-1, `backend "l" must be a map`}}},
		{name: "unused broken preset is ignored", text: cfgText("  a:\n    type: dummy\n", "backends:\n  l: ldap\n  m:\n    base: x\n")},
		{name: "merged entry is validated", text: cfgText("  a:\n    backend: l\n    foo: bar\n", backends),
			errs: []cfgErr{{-1, `Group "a" contains unknown attribute(s): foo`}}},
	})
	cfg, _, errs := parse(t, cfgText("  a:\n    backend: l\n    base: ou=a,dc=example\n  b:\n    backend: l\n  lib:\n    backend: l\n    type: dummy\n", backends))
	if errs != nil {
		t.Fatal(errs)
	}
	a, b, lib := cfg.OU("a"), cfg.OU("b"), cfg.OU("lib")
	if a.Base != "ou=a,dc=example" || b.Base != "ou=preset,dc=example" || a.Type != "ldap" || lib.Type != "dummy" || lib.Spec.Enumerates {
		t.Errorf("merge: a %+v, b %+v, lib %+v", a, b, lib)
	}
	if a.Settings.Get("backend").Exists() || a.Settings.Get("type").Exists() || a.Settings.Get("ldap_uri").Text() != "ldaps://ldap.example.net" {
		t.Errorf("a settings keep backend/type or lose preset keys: %s", a.Settings.Text())
	}
}

func TestGroupEntries(t *testing.T) {
	runCfgCases(t, []cfgCase{
		{name: "no type", text: cfgText("  a:\n    base: ou=a\n"),
			errs: []cfgErr{{9, `Entitlements configuration group "a" does not properly declare a type!`}}},
		{name: "type is not a string", text: cfgText("  a:\n    type: [ldap]\n"),
			errs: []cfgErr{{9, "does not properly declare a type!"}}},
		{name: "unknown type", text: cfgText("  a:\n    type: nosql\n"),
			errs: []cfgErr{{10, `Entitlements configuration group "a" has invalid type ("nosql")`}}},
		{name: "entry is not a map", text: cfgText("  a: ldap\n"), errs: []cfgErr{{9, `group "a" must be a map`}}},
		{name: "ldap without base", text: cfgText("  a:\n    type: ldap\n" + ldapConnPart),
			errs: []cfgErr{{9, `Group "a" is missing attribute base!`}}},
		{name: "ldap base is a list", text: cfgText(ldapOU("a", "") + "  b:\n    type: ldap\n    base: [x]\n" + ldapConnPart),
			errs: []cfgErr{{-1, `Group "b" attribute base is supposed to be String, not Array!`}}},
		{name: "ldap unknown key", text: cfgText(ldapOU("a", "    foo: 1\n    bar: 2\n")),
			errs: []cfgErr{{9, `Group "a" contains unknown attribute(s): foo, bar`}}},
		{name: "ldap missing person_dn_format", text: cfgText("  a:\n    type: ldap\n    base: ou=a\n    ldap_uri: x\n    ldap_binddn: y\n    ldap_bindpw: z\n"),
			errs: []cfgErr{{9, "missing attribute person_dn_format!"}}},
		{name: "ldap secrets may be null (unset environment)", text: cfgText("  a:\n    type: ldap\n    base: ou=a\n    ldap_uri: x\n    ldap_binddn: <%= ENV[\"UNSET\"] %>\n    ldap_bindpw:\n    person_dn_format: uid=%KEY%\n")},
		{name: "ldap non-secret null", text: cfgText("  a:\n    type: ldap\n    base: <%= ENV[\"UNSET\"] %>\n" + ldapConnPart),
			errs: []cfgErr{{-1, `Group "a" attribute base is supposed to be a value, not nil`}}},
		{name: "ldap boolean options", text: cfgText(ldapOU("a", "    create_if_missing: yes\n    disable_ssl_verification: false\n"))},
		{name: "ldap boolean option with a string", text: cfgText(ldapOU("a", "    create_if_missing: \"yes\"\n")),
			errs: []cfgErr{{-1, "create_if_missing is supposed to be a boolean"}}},
		{name: "ldap built-in plugin", text: cfgText(ldapOU("a", "    plugin:\n      file: posix_group.rb\n      class: PosixGroup\n"))},
		{name: "ldap plugin not a map", text: cfgText(ldapOU("a", "    plugin: posix_group.rb\n")),
			errs: []cfgErr{{-1, `Group "a" attribute plugin is supposed to be Hash, not String!`}}},
		{name: "ldap AD group settings", text: cfgText(ldapOU("a", "    object_class: group\n    group_scope: domain_local\n    group_category: Distribution\n"))},
		{name: "ldap object_class of another case", text: cfgText(ldapOU("a", "    object_class: GROUPOFNAMES\n"))},
		{name: "ldap unknown object_class", text: cfgText(ldapOU("a", "    object_class: groupOfMembers\n")),
			errs: []cfgErr{{-1, `Group "a" attribute object_class is "groupOfMembers"; it must be one of: groupOfUniqueNames, groupOfNames, posixGroup, group`}}},
		{name: "ldap group_scope not a string", text: cfgText(ldapOU("a", "    object_class: group\n    group_scope: [global]\n")),
			errs: []cfgErr{{-1, `attribute group_scope is "[\"global\"]"; it must be one of: global, domain_local, universal`}}},
		{name: "ldap unknown group_category", text: cfgText(ldapOU("a", "    object_class: group\n    group_category: mail\n")),
			errs: []cfgErr{{-1, `attribute group_category is "mail"; it must be one of: security, distribution`}}},
		// People found by an attribute need no person_dn_format.
		{name: "ldap person_attribute", text: cfgText("  a:\n    type: ldap\n    base: ou=a\n    ldap_uri: x\n    ldap_binddn: y\n    ldap_bindpw: z\n    person_attribute: sAMAccountName\n    person_base: ou=people\n")},
		{name: "ldap unknown key, nothing near", text: cfgText(ldapOU("a", "    group_kind: security\n")),
			errs: []cfgErr{{9, `Group "a" contains unknown attribute(s): group_kind`}}},
		{name: "ldap keys misspelt", text: cfgText(ldapOU("a", "    group_scpoe: global\n    persn_base: ou=x\n    create_if_mising: true\n")),
			errs: []cfgErr{{9, `Group "a" contains unknown attribute(s): group_scpoe (did you mean "group_scope"?), persn_base (did you mean "person_base"?), create_if_mising (did you mean "create_if_missing"?)`}}},
		{name: "member_of needs person_dn_format", text: cfgText(okGroups + "  mo:\n    type: member_of\n    memberof_attribute: x\n    ou: [a]\n    ldap_uri: x\n    ldap_binddn: y\n    ldap_bindpw: z\n    person_attribute: uid\n"),
			errs: []cfgErr{{-1, "contains unknown attribute(s): person_attribute"}, {-1, "missing attribute person_dn_format!"}}},
		{name: "dummy accepts any keys", text: cfgText(okGroups + "  lib:\n    type: dummy\n    anything: [1]\n    dir: ../ldap-config/lib\n")},
		{name: "dummy without a directory is fine", text: cfgText(okGroups + "  ghost:\n    type: dummy\n")},
		{name: "enumerated OU without a directory", text: cfgText(okGroups + ldapOU("zz", "")),
			errs: []cfgErr{{-1, `Non-existing directory "ldap-config/zz" for group "zz"!`}}},
		{name: "allowed_methods not a list", text: cfgText(ldapOU("a", "    allowed_methods: username\n")),
			errs: []cfgErr{{-1, `allowed_methods must be an Array in group "a"!`}}},
		{name: "allowed_types not a list", text: cfgText(ldapOU("a", "    allowed_types: {txt: 1}\n")),
			errs: []cfgErr{{-1, "Configuration error: allowed_types should be an Array, got Hash!"}}},
		{name: "dir not a string", text: cfgText(ldapOU("a", "    dir: 5\n")),
			errs: []cfgErr{{-1, `Group "a" attribute dir is supposed to be String`}}},
		{name: "member_of", text: cfgText(okGroups + "  mo:\n    type: member_of\n    memberof_attribute: shellentitlements\n    ou: [a]\n" + ldapConnPart)},
		{name: "member_of ou not a list", text: cfgText(okGroups + "  mo:\n    type: member_of\n    memberof_attribute: x\n    ou: a\n" + ldapConnPart),
			errs: []cfgErr{{-1, "attribute ou is supposed to be Array"}}},
		// Only a warning: the reference fails only when none of the listed OUs exists.
		{name: "member_of unknown ou", text: cfgText(okGroups + "  mo:\n    type: member_of\n    memberof_attribute: x\n    ou: [a, nope]\n" + ldapConnPart)},
		{name: "custom type", opt: Options{Types: []TypeSpec{{Name: "custom", Priority: 5, Required: []string{"token"}}}},
			text: cfgText(okGroups + "  cu:\n    type: custom\n    token: x\n")},
		{name: "custom type missing key", opt: Options{Types: []TypeSpec{{Name: "custom", Priority: 5, Required: []string{"token"}}}},
			text: cfgText(okGroups + "  cu:\n    type: custom\n"), errs: []cfgErr{{-1, `Group "cu" is missing attribute token!`}}},
		{name: "every bad OU reported", text: cfgText("  a:\n    type: nosql\n  b:\n    base: x\n" + ldapOU("c", "    foo: 1\n")),
			errs: []cfgErr{{-1, `group "a" has invalid type`}, {-1, `group "b" does not properly declare a type`}, {-1, `Group "c" contains unknown`}}},
	})
}

func TestOUDirs(t *testing.T) {
	text := cfgText(okGroups +
		"  b:\n    type: dummy\n    dir: ../ldap-config/common/internal\n" +
		"  c:\n    type: dummy\n    dir: /abs/where\n" +
		"  apps/web:\n    type: dummy\n")
	cfg, _, errs := parse(t, text)
	if errs != nil {
		t.Fatal(errs)
	}
	cp := cfg.ConfigurationPath
	for key, want := range map[string]string{
		"a":        filepath.Join(cp, "a"),
		"b":        filepath.Join(cp, "common", "internal"),
		"c":        "/abs/where",
		"apps/web": filepath.Join(cp, "apps", "web"),
	} {
		if got := cfg.OU(key).Dir; got != want {
			t.Errorf("%s: dir %q, want %q", key, got, want)
		}
	}
	if cfg.OU("a").DirGiven || !cfg.OU("b").DirGiven {
		t.Errorf("DirGiven: a %v b %v", cfg.OU("a").DirGiven, cfg.OU("b").DirGiven)
	}
	if cfg.OU("nope") != nil {
		t.Error("OU(nope) is not nil")
	}
	if am := cfg.OU("a").AllowedMethods; am != nil {
		t.Errorf("AllowedMethods %v, want nil (no restriction)", am)
	}
	cfg, _, _ = parse(t, cfgText(ldapOU("a", "    allowed_methods: []\n    allowed_types: [txt]\n")))
	if am := cfg.OU("a").AllowedMethods; am == nil || len(am) != 0 {
		t.Errorf("allowed_methods: [] gives %#v, want an empty non-nil list (nothing allowed)", am)
	}
	if at := cfg.OU("a").AllowedTypes; !slices.Equal(at, []string{"txt"}) {
		t.Errorf("allowed_types %v", at)
	}
}

func TestMirrors(t *testing.T) {
	runCfgCases(t, []cfgCase{
		{name: "mirror without its own directory", text: cfgText(okGroups + ldapOU("m", "    mirror: a\n"))},
		{name: "mirror with its own directory", text: cfgText(okGroups + ldapOU("b", "    mirror: a\n")),
			errs: []cfgErr{{-1, `"b" is declared as a mirror OU but source "ldap-config/b" exists!`}}},
		{name: "mirror of an unknown OU", text: cfgText(okGroups + ldapOU("m", "    mirror: nope\n")),
			errs: []cfgErr{{-1, `"m" is declared as a mirror to a non-existing target "nope"!`}}},
		{name: "mirror of a mirror", text: cfgText(okGroups + ldapOU("m", "    mirror: a\n") + ldapOU("m2", "    mirror: m\n")),
			errs: []cfgErr{{-1, `"m2" is declared as a mirror to a mirror target "m"!`}}},
		{name: "mirror is not a string", text: cfgText(okGroups + ldapOU("m", "    mirror: [a]\n")),
			errs: []cfgErr{{-1, "attribute mirror is supposed to be String"}}},
	})
}

const groupFilter = "    class: Entitlements::Data::Groups::Calculated::Filters::MemberOfGroup\n    config:\n      group: lib/contractors\n"

func TestFilters(t *testing.T) {
	runCfgCases(t, []cfgCase{
		{name: "MemberOfGroup", text: cfgText(okGroups, "filters:\n  contractors:\n"+groupFilter)},
		{name: "short class name", text: cfgText(okGroups, "filters:\n  contractors:\n    class: MemberOfGroup\n    config: {group: lib/c}\n")},
		{name: "unknown class", text: cfgText(okGroups, "filters:\n  x:\n    class: Entitlements::Custom::Filter\n"),
			errs: []cfgErr{{-1, `filter "x": unknown filter class "Entitlements::Custom::Filter"`}}},
		{name: "custom class registered by the embedder", opt: Options{FilterClasses: []string{"Mine"}},
			text: cfgText(okGroups, "filters:\n  x:\n    class: Mine\n")},
		{name: "missing class", text: cfgText(okGroups, "filters:\n  x:\n    config: {group: lib/c}\n"),
			errs: []cfgErr{{-1, `filter "x" is missing its class`}}},
		{name: "filter is not a map", text: cfgText(okGroups, "filters:\n  x: MemberOfGroup\n"),
			errs: []cfgErr{{-1, `filter "x" must be a map`}}},
		{name: "MemberOfGroup without group", text: cfgText(okGroups, "filters:\n  x:\n    class: MemberOfGroup\n"),
			errs: []cfgErr{{-1, "config.group must be a group reference"}}},
		{name: "MemberOfGroup group without slash", text: cfgText(okGroups, "filters:\n  x:\n    class: MemberOfGroup\n    config: {group: contractors}\n"),
			errs: []cfgErr{{-1, "config.group must be a group reference"}}},
		{name: "MemberOfLDAPGroup with the extra", text: cfgText(okGroups, "extras:\n  ldap_group: {}\nfilters:\n  lockout:\n    class: Entitlements::Extras::LDAPGroup::Filters::MemberOfLDAPGroup\n    config: {ldap_group: cn=lockout,dc=example}\n")},
		{name: "MemberOfLDAPGroup without the extra", text: cfgText(okGroups, "filters:\n  lockout:\n    class: Entitlements::Extras::LDAPGroup::Filters::MemberOfLDAPGroup\n    config: {ldap_group: cn=lockout,dc=example}\n"),
			errs: []cfgErr{{-1, "needs the ldap_group extra"}}},
		{name: "MemberOfLDAPGroup without a DN", text: cfgText(okGroups, "extras:\n  ldap_group: {}\nfilters:\n  lockout:\n    class: MemberOfLDAPGroup\n"),
			errs: []cfgErr{{-1, "config.ldap_group must be the DN"}}},
		{name: "paths not lists", text: cfgText(okGroups, "filters:\n  c:\n"+groupFilter+"      excluded_paths: a/\n      included_paths: {b: 1}\n"),
			errs: []cfgErr{{-1, "excluded_paths must be a list"}, {-1, "included_paths must be a list"}}},
		{name: "config is a list", text: cfgText(okGroups, "filters:\n  c:\n    class: MemberOfGroup\n    config: [a]\n"),
			errs: []cfgErr{{-1, "config must be a map"}}},
	})
	// Reserved names: every method and reserved key of .txt files.
	for _, name := range []string{"username", "group", "entitlements_group", "ldap_group", "management", "direct_report",
		"description", "expiration", "always", "contractor", "metadata_x", "filter_x", "modifier_x"} {
		t.Run("reserved name "+name, func(t *testing.T) {
			t.Parallel()
			_, _, errs := parse(t, cfgText(okGroups, "filters:\n  "+name+":\n"+groupFilter))
			checkCfgErrs(t, errs, []cfgErr{{-1, fmt.Sprintf("filter name %q collides", name)}})
		})
	}
	cfg, _, errs := parse(t, cfgText(okGroups, "filters:\n  b:\n"+groupFilter+"      excluded_paths: [x/]\n  a:\n    class: MemberOfGroup\n    config: {group: lib/a, included_paths: []}\n"))
	if errs != nil {
		t.Fatal(errs)
	}
	if len(cfg.Filters) != 2 || cfg.Filters[0].Name != "b" || cfg.Filters[1].Name != "a" {
		t.Fatalf("filters not in config order: %+v", cfg.Filters)
	}
	b, a := cfg.Filters[0], cfg.Filters[1]
	if b.Class != FilterMemberOfGroup || b.Group != "lib/contractors" || !slices.Equal(b.ExcludedPaths, []string{"x/"}) || b.IncludedPaths != nil {
		t.Errorf("filter b %+v", b)
	}
	if a.IncludedPaths == nil || len(a.IncludedPaths) != 0 || a.ExcludedPaths != nil {
		t.Errorf("filter a: included %#v excluded %#v (an empty list must stay distinct from unset)", a.IncludedPaths, a.ExcludedPaths)
	}
}

func TestExtras(t *testing.T) {
	runCfgCases(t, []cfgCase{
		{name: "orgchart", text: cfgText(okGroups, "extras:\n  orgchart:\n    manager_map_file: ./manager-map.yaml\n")},

		{name: "ldap_group {}", text: cfgText(okGroups, "extras:\n  ldap_group: {}\n")},
		{name: "ldap_group null", text: cfgText(okGroups, "extras:\n  ldap_group:\n"),
			errs: []cfgErr{{-1, `extra "ldap_group" must be a map`}}},
		{name: "unknown extra", text: cfgText(okGroups, "extras:\n  mine: {}\n"),
			errs: []cfgErr{{-1, "Error loading mine"}}},
		{name: "custom extra with a path is refused", text: cfgText(okGroups, "extras:\n  mine:\n    path: ./extras\n"),
			errs: []cfgErr{{-1, `extra "mine": custom extras written in Ruby`}}},
		{name: "path refused even for a built-in name", text: cfgText(okGroups, "extras:\n  orgchart:\n    path: ./x\n    manager_map_file: ./manager-map.yaml\n"),
			errs: []cfgErr{{-1, "custom extras written in Ruby"}}},
		{name: "extra is a list", text: cfgText(okGroups, "extras:\n  orgchart: [x]\n"),
			errs: []cfgErr{{-1, `extra "orgchart" must be a map`}}},
	})
	cfg, _, errs := parse(t, cfgText(okGroups, "extras:\n  orgchart:\n    manager_map_file: ./manager-map.yaml\n  ldap_group: {}\n"))
	if errs != nil {
		t.Fatal(errs)
	}
	if cfg.Orgchart == nil || cfg.Orgchart.ManagerMapFile != filepath.Join(cfg.Dir, "manager-map.yaml") || !cfg.LDAPGroup.IsMap() {
		t.Errorf("extras: orgchart %+v ldap_group %s", cfg.Orgchart, cfg.LDAPGroup.Text())
	}
}

func TestPeopleSources(t *testing.T) {
	withPeople := func(people string) string {
		return "configuration_path: ./ldap-config\n" + people + "groups:\n" + okGroups
	}
	runCfgCases(t, []cfgCase{
		{name: "empty people map", text: withPeople("people: {}\npeople_data_source: yaml\n"),
			errs: []cfgErr{{-1, "At least one data source for people must be specified"}}},
		{name: "empty people_data_source", text: withPeople("people:\n  yaml: {type: yaml}\npeople_data_source: \"\"\n"),
			errs: []cfgErr{{-1, "must define a people_data_source!"}}},
		{name: "unknown people_data_source", text: withPeople("people:\n  yaml: {type: yaml}\npeople_data_source: ldap\n"),
			errs: []cfgErr{{-1, `The people_data_source "ldap" is invalid!`}}},
		{name: "source without type", text: withPeople("people:\n  yaml: {config: {filename: x}}\npeople_data_source: yaml\n"),
			errs: []cfgErr{{-1, "'type' is undefined in:"}}},
		{name: "source with a bad type", text: withPeople("people:\n  yaml: {type: csv}\npeople_data_source: yaml\n"),
			errs: []cfgErr{{-1, `'type' "csv" is invalid!`}}},
		{name: "source is not a map", text: withPeople("people:\n  yaml: people.yaml\npeople_data_source: yaml\n"),
			errs: []cfgErr{{-1, `people source "yaml" must be a map`}}},
		{name: "source config is not a map", text: withPeople("people:\n  yaml: {type: yaml, config: [x]}\npeople_data_source: yaml\n"),
			errs: []cfgErr{{-1, "config must be a map"}}},
		{name: "several sources, unused ones unchecked beyond their type", text: withPeople("people:\n  yaml: {type: yaml}\n  ldap: {type: ldap, config: {whatever: 1}}\n  both: {type: combined}\n  none: {type: dummy}\npeople_data_source: yaml\n")},
	})
}

func TestERB(t *testing.T) {
	text := cfgText(ldapOU("a", "")+"  lib:\n    type: dummy\n    note: <%= ENV[\"EMPTY\"] %>\n", "<%# a comment %>\n")
	text = strings.Replace(text, "base: ou=a,dc=example", `base: <%= ENV["BASE"] %>`, 1)
	cfg, _, errs := parse(t, text)
	if errs != nil {
		t.Fatal(errs)
	}
	if cfg.OU("a").Base != "ou=from-env,dc=example" {
		t.Errorf("base %q", cfg.OU("a").Base)
	}
	// A code tag is dropped with a warning.
	_, warns, errs := parse(t, "<%- require 'plugin' -%>\n"+cfgText(okGroups))
	if errs != nil || len(warns) == 0 || warns[0].Line != 1 {
		t.Errorf("code tag: errors %v, warnings %v", errs, warns)
	}
	// Other output expressions are errors naming the line.
	_, _, errs = parse(t, cfgText(okGroups)+"# <%= 1 + 1 %>\n")
	checkCfgErrs(t, errs, []cfgErr{{16, "unsupported ERB expression"}})
}

func TestDuplicateKeysLastWins(t *testing.T) {
	cfg, warns, errs := parse(t, cfgText(okGroups, "max_parallelism: 2\nmax_parallelism: 3\n"))
	if errs != nil {
		t.Fatal(errs)
	}
	if cfg.MaxParallelism != 3 || len(warns) != 1 {
		t.Errorf("max_parallelism %d, warnings %v", cfg.MaxParallelism, warns)
	}
}

func TestSortedOUs(t *testing.T) {
	groups := "  lib:\n    type: dummy\n" +
		"  mo:\n    type: member_of\n    memberof_attribute: x\n    ou: [a]\n" + ldapConnPart +
		ldapOU("m", "    mirror: a\n") +
		ldapOU("apps/web", "") +
		ldapOU("c", "") +
		ldapOU("a", "") +
		"  b:\n    type: dummy\n" +
		"  gh:\n    type: github_team\n    org: o\n    token: t\n    base: x\n"
	cfg, _, errs := parse(t, cfgText(groups))
	if errs != nil {
		t.Fatal(errs)
	}
	var got, orig []string
	for _, ou := range cfg.SortedOUs() {
		got = append(got, ou.Key)
	}
	for _, ou := range cfg.OUs {
		orig = append(orig, ou.Key)
	}
	// Priority 10 (ldap, dummy): non-mirrors by key length, ties in config order (lib, c, a, b);
	// then the mirror m; then member_of (20); then github_team (40).
	want := []string{"c", "a", "b", "lib", "apps/web", "m", "mo", "gh"}
	if !slices.Equal(got, want) {
		t.Errorf("SortedOUs %q, want %q", got, want)
	}
	if !slices.Equal(orig, []string{"lib", "mo", "m", "apps/web", "c", "a", "b", "gh"}) {
		t.Errorf("OUs not in config order: %q", orig)
	}
	for i, ou := range cfg.OUs {
		if ou.Order != i {
			t.Errorf("%s: Order %d, want %d", ou.Key, ou.Order, i)
		}
	}
}

func TestLoad(t *testing.T) {
	root := tempRepo(t)
	p := filepath.Join(root, "config.yaml")
	if err := os.WriteFile(p, []byte(cfgText(okGroups)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Load(p, testOptions(root))
	if err != nil || cfg.File != p {
		t.Fatalf("Load: %v %+v", err, cfg)
	}
	_, _, err = Load(filepath.Join(root, "missing.yaml"), testOptions(root))
	var e *validate.Error
	if !errors.As(err, &e) || e.Kind != validate.KindConfig || e.Path != "missing.yaml" || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestMirrorOfNonEnumeratingOU(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "defs", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `configuration_path: ./defs
groups:
  lib:
    type: dummy
  copy:
    type: ldap
    base: ou=copy
    ldap_uri: ldap://x
    ldap_binddn: cn=a
    ldap_bindpw: b
    person_dn_format: uid=%KEY%
    mirror: lib
people:
  y: {type: yaml, config: {filename: p.yaml}}
people_data_source: y
`
	_, _, err := Parse(filepath.Join(dir, "config.yaml"), []byte(cfg), Options{Types: backends.Types(), BaseDir: dir})
	if err == nil || !strings.Contains(err.Error(), "does not enumerate") {
		t.Fatalf("err = %v", err)
	}
}

// Issue 23: the reference reads an OU's plugin block only when it applies a change to the OU,
// so a block that cannot be used loads with a warning (the provider refuses it, see
// OU.PluginErr), and a mirror of that OU is not told its target does not exist.
func TestPluginProblemsAreWarnings(t *testing.T) {
	for _, tc := range []struct{ name, plugin, want string }{
		{"without file", "    plugin:\n      class: GroupOfNames\n", "plugin configuration hash must contain 'file' key"},
		{"without class", "    plugin:\n      file: group_of_names.rb\n", "plugin configuration hash must contain 'class' key"},
		{"Ruby class", "    plugin:\n      file: ./mine.rb\n      class: Mine\n", `LDAP plugin class "Mine" is Ruby code and cannot be loaded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, warns, errs := parse(t, cfgText(ldapOU("a", tc.plugin)+ldapOU("m", "    mirror: a\n")))
			if errs != nil {
				t.Fatalf("errors: %v", errs)
			}
			if a := cfg.OU("a"); !strings.HasPrefix(a.PluginErr, tc.want) || a.Plugin != "" {
				t.Errorf("Plugin %q, PluginErr %q; want %q", a.Plugin, a.PluginErr, tc.want)
			}
			if len(warns) != 1 || !strings.Contains(warns[0].Msg, tc.want) || !strings.Contains(warns[0].Msg, "planning or applying this OU fails") {
				t.Errorf("warnings %v", warns)
			}
			if m := cfg.OU("m"); m.Mirror != "a" || m.PluginErr != "" {
				t.Errorf("mirror %+v", m)
			}
		})
	}
	cfg, _, errs := parse(t, cfgText(ldapOU("a", "    plugin:\n      file: posix_group.rb\n      class: PosixGroup\n")))
	if errs != nil || cfg.OU("a").Plugin != "PosixGroup" || cfg.OU("a").PluginErr != "" {
		t.Errorf("built-in plugin: %v %+v", errs, cfg.OU("a"))
	}
}

// An OU entry that is refused is reported once: OUs that mirror or list it do not add "no such
// OU" errors about an OU that is in the config.
func TestBrokenOUIsOneError(t *testing.T) {
	_, warns, errs := parse(t, cfgText(ldapOU("a", "    plugin: x\n")+ldapOU("m", "    mirror: a\n")+
		"  mo:\n    type: member_of\n    memberof_attribute: x\n    ou: [a]\n"+ldapConnPart))
	checkCfgErrs(t, errs, []cfgErr{{-1, `Group "a" attribute plugin is supposed to be Hash, not String!`}})
	for _, w := range warns {
		if strings.Contains(w.Msg, "not configured") {
			t.Errorf("warning about the broken OU: %s", w.Msg)
		}
	}
}

// Issue 23: the reference checks (validate_mirror!) and calculates a mirror only in the ldap
// backend; a dummy OU's `mirror` is neither. A dummy OU mirroring a dummy OU is accepted and
// listed as a copy; one whose mirror could not be calculated loads with a warning, as a plain
// dummy OU. An ldap OU mirroring a dummy OU keeps failing, as in the reference.
func TestDummyMirrors(t *testing.T) {
	for _, tc := range []struct {
		name, groups string
		mirror       string // the copy OU's Mirror after loading
		warn, err    string
	}{
		{name: "dummy of dummy", groups: "  lib:\n    type: dummy\n  copy:\n    type: dummy\n    mirror: lib\n", mirror: "lib"},
		{name: "dummy of ldap", groups: ldapOU("a", "") + "  copy:\n    type: dummy\n    mirror: a\n", mirror: "a"},
		{name: "dummy with its own directory", groups: "  lib:\n    type: dummy\n  copy:\n    type: dummy\n    dir: c\n    mirror: lib\n",
			warn: `"copy" is declared as a mirror OU but source "ldap-config/c" exists! (a dummy OU calculates nothing, so its mirror is ignored)`},
		{name: "dummy of nothing", groups: "  copy:\n    type: dummy\n    mirror: nope\n",
			warn: `"copy" is declared as a mirror to a non-existing target "nope"! (a dummy OU`},
		{name: "dummy of a dummy mirror", groups: "  lib:\n    type: dummy\n  m:\n    type: dummy\n    mirror: lib\n  copy:\n    type: dummy\n    mirror: m\n",
			warn: `"copy" is declared as a mirror to a mirror target "m"! (a dummy OU`},
		{name: "dummy mirror that is not a string", groups: "  copy:\n    type: dummy\n    mirror: [lib]\n",
			warn: `Group "copy" attribute mirror is Array, not a String; a dummy OU calculates nothing, so it is ignored`},
		{name: "dummy mirror false", groups: "  copy:\n    type: dummy\n    mirror: false\n"},
		{name: "ldap of dummy", groups: "  lib:\n    type: dummy\n" + ldapOU("copy", "    mirror: lib\n"),
			err: `"copy" is declared as a mirror of "lib", whose dummy backend does not enumerate its groups`},
		{name: "ldap of a dummy that declares a mirror", groups: "  lib:\n    type: dummy\n  m:\n    type: dummy\n    dir: c\n    mirror: lib\n" + ldapOU("copy", "    mirror: m\n"),
			err: `"copy" is declared as a mirror to a mirror target "m"!`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, warns, errs := parse(t, cfgText(tc.groups))
			if tc.err != "" {
				checkCfgErrs(t, errs, []cfgErr{{-1, tc.err}})
				return
			}
			if errs != nil {
				t.Fatalf("errors: %v", errs)
			}
			if got := cfg.OU("copy").Mirror; got != tc.mirror {
				t.Errorf("Mirror = %q, want %q", got, tc.mirror)
			}
			var ws []string
			for _, w := range warns {
				if strings.Contains(w.Msg, "mirror") {
					ws = append(ws, w.Msg)
				}
			}
			if tc.warn == "" && len(ws) > 0 || tc.warn != "" && (len(ws) != 1 || !strings.Contains(ws[0], tc.warn)) {
				t.Errorf("mirror warnings %q, want %q", ws, tc.warn)
			}
		})
	}
}

// The orgchart extra's problems only matter to management rules (the reference reads the map
// lazily), so loading keeps them on the Orgchart instead of failing.
func TestOrgchartProblemsAreDeferred(t *testing.T) {
	for _, tc := range []struct{ name, extras, want string }{
		{"without manager_map_file", "extras:\n  orgchart: {}\n", "`manager_map_file` must be defined in the configuration!"},
		{"missing file", "extras:\n  orgchart:\n    manager_map_file: nope.yaml\n", "The `manager_map_file` nope.yaml does not exist!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, errs := parse(t, cfgText(okGroups, tc.extras), Options{})
			if errs != nil {
				t.Fatalf("errors: %v", errs)
			}
			if cfg.Orgchart == nil || !strings.Contains(cfg.Orgchart.Err, tc.want) {
				t.Errorf("orgchart %+v; want Err containing %q", cfg.Orgchart, tc.want)
			}
		})
	}
}

// A GitRepo auditor, in either spelling, is supported and gets no warning (the comparison
// once took the quoted message form of the class and warned about every auditor); another
// class, or none, does.
func TestAuditorClassWarning(t *testing.T) {
	for _, tc := range []struct {
		class, warn string
	}{
		{"GitRepo", ""},
		{"Entitlements::Auditor::GitRepo", ""},
		{"' GitRepo '", ""},
		{"Slack", `auditor "Slack" is not supported`},
		{"''", "auditor (no auditor_class) is not supported"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			_, warns, errs := parse(t, cfgText(okGroups, "auditors:\n  - auditor_class: "+tc.class+"\n"))
			if errs != nil {
				t.Fatal(errs)
			}
			switch {
			case tc.warn == "" && len(warns) > 0:
				t.Errorf("warnings %v", warns)
			case tc.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0].Msg, tc.warn)):
				t.Errorf("warnings %v, want %q", warns, tc.warn)
			}
		})
	}
}

// A base whose RDNs hold a '/' would become extra directories of the audit log path (and
// the `..` among them a way out of the checkout): refused where it is written.
func TestBaseWithSlashRefused(t *testing.T) {
	for _, tc := range []struct {
		base, err string
	}{
		{"ou=X/../../../tmp/escaped,ou=Groups,dc=example", `attribute base "ou=X/../../../tmp/escaped,ou=Groups,dc=e"… contains '/'`},
		{`ou=a\/b,dc=example`, "contains '/'"},
		{`ou=a\2Fb,dc=example`, "contains '/'"},
		{"ou=..,dc=example", ""}, // a value, not a path element: harmless
		{`ou=a\,b,dc=example`, ""},
	} {
		t.Run(tc.base, func(t *testing.T) {
			groups := "  a:\n    type: ldap\n    base: '" + tc.base + "'\n" + ldapConnPart
			_, _, errs := parse(t, cfgText(groups))
			if tc.err == "" {
				if errs != nil {
					t.Fatal(errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Line != 11 || !strings.Contains(errs[0].Msg, tc.err) {
				t.Errorf("errors %v, want line 11: %q", errs, tc.err)
			}
		})
	}
}
