package calc

import (
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

func yc(name, body string, want ...string) fileCase {
	return fileCase{name: name, file: "x.yaml", body: body, want: want}
}

func ye(name, body string, errs ...errSpec) fileCase {
	return fileCase{name: name, file: "x.yaml", body: body, errs: errs}
}

func TestYAMLRuleTrees(t *testing.T) {
	runFileCases(t, []fileCase{
		yc("or/and/not nesting", `rules:
  or:
    - and:
        - management: alice
        - not:
            username: bob
    - username: eve
`, "Carol", "alice", "dave", "eve"),
		yc("not is relative to all people", "rules:\n  not:\n    username: bob\n",
			"Carol", "alice", "boss", "dave", "eve", "mallory"),
		yc("not of an unknown user is everyone", "rules:\n  not:\n    username: nobody\n", everyone...),
		yc("not of not", "rules:\n  not:\n    not:\n      username: bob\n", "bob"),
		yc("and is an intersection", "rules:\n  and:\n    - management: alice\n    - management: bob\n", "bob", "dave"),
		yc("and of disjoint sets", "rules:\n  and:\n    - username: bob\n    - username: alice\n"),
		yc("and of a single not", "rules:\n  and:\n    - not:\n        management: alice\n", "boss", "eve", "mallory"),
		yc("single method at top level", "rules:\n  username: bob\n", "bob"),
		yc("always: false", "rules:\n  always: false\n"),
		yc("always: no is YAML 1.1 false", "rules:\n  always: no\n"),
		yc("always: Off is YAML 1.1 false", "rules:\n  always: Off\n"),
		yc("or: [] is empty", "rules:\n  or: []\n"),
		yc("and: [] is empty (Q-05)", "rules:\n  and: []\n"),
		yc("or with always false", "rules:\n  or:\n    - always: false\n    - username: bob\n", "bob"),
		{name: "alias entitlements_group", file: "x.yaml", body: "rules:\n  entitlements_group: b/y\n",
			extra: map[string]string{"ldap-config/b/y.txt": "username = dave\n"}, want: []string{"dave"}},
		yc("duplicate keys: the last wins", "rules:\n  username: alice\n  username: bob\n", "bob"),
		yc("schema_version is not checked", "schema_version: not/a/version!\nrules:\n  username: bob\n", "bob"),
		yc("stray top-level keys are ignored", "contractors: all\nfoo: [1, 2]\nrules:\n  username: bob\n", "bob"),
		// `description:` is nil in the reference, whose description contract then fails.
		ye("description null is an error", "description:\nrules:\n  username: bob\n", e(validate.KindRuleStructure, 1, "description must be a string")),
		ye("always: true", "rules:\n  always: true\n", e(validate.KindMethodNotAllowed, 2)),
		ye("always: quoted false", "rules:\n  always: \"false\"\n", e(validate.KindMethodNotAllowed, 2)),
		ye("unknown method", "rules:\n  or:\n    - username: bob\n    - team: x\n", e(validate.KindMethodNotAllowed, 4, "team")),
		ye("method name is case-sensitive", "rules:\n  Username: bob\n", e(validate.KindMethodNotAllowed, 2)),
		ye("and given a map", "rules:\n  and:\n    username: bob\n", e(validate.KindRuleStructure, -1, `"and"`)),
		ye("or given a string", "rules:\n  or: bob\n", e(validate.KindRuleStructure, -1, `"or"`)),
		ye("not given a list", "rules:\n  not:\n    - username: bob\n", e(validate.KindRuleStructure, -1, `"not"`)),
		ye("list element not a map", "rules:\n  or:\n    - bob\n", e(validate.KindRuleStructure, 3)),
		ye("rules missing", "description: x\n", e(validate.KindRuleStructure, 1, "'rules'")),
		ye("empty file", "", e(validate.KindRuleStructure, 1, "'rules'")),
		ye("rules is a list", "rules:\n  - username: bob\n", e(validate.KindRuleStructure, 2, "'rules'")),
		ye("rules is a string", "rules: bob\n", e(validate.KindRuleStructure, 1, "String")),
		ye("rules: {}", "rules: {}\n", e(validate.KindRuleStructure, 1, "no keys")),
		ye("several keys", "rules:\n  username: bob\n  management: alice\n", e(validate.KindRuleStructure, 2, "multiple keys")),
		ye("several keys in a list element", "rules:\n  or:\n    - username: bob\n      group: b/y\n", e(validate.KindRuleStructure, 3, "multiple keys")),
		ye("method with a list value", "rules:\n  username: [a, b]\n", e(validate.KindRuleStructure, 2)),
		ye("method with a boolean value", "rules:\n  username: yes\n", e(validate.KindRuleStructure, 2)),
		ye("method with a null value", "rules:\n  username:\n", e(validate.KindRuleStructure, -1)),
		ye("document is a list", "- rules\n", e(validate.KindRuleStructure, 1)),
		ye("syntax error", "rules:\n  username: [bob\n", e(validate.KindRuleStructure, -1, "invalid YAML")),
		ye("aliases are refused", "a: &x {username: bob}\nrules: *x\n", e(validate.KindRuleStructure, -1)),
		ye("description must be a string", "description: 123\nrules:\n  username: bob\n", e(validate.KindRuleStructure, 1, "description")),
		ye("description true is not a string", "description: yes\nrules:\n  username: bob\n", e(validate.KindRuleStructure, 1, "description")),
		ye("every error of the file", "description: [x]\nmetadata: 5\nrules:\n  or:\n    - username: bob\n    - team: x\n",
			e(validate.KindRuleStructure, 1), e(validate.KindMetadata, 2), e(validate.KindMethodNotAllowed, 6)),
	})
}

func TestYAMLRuleExpiration(t *testing.T) {
	runFileCases(t, []fileCase{
		yc("expired child of or is dropped", `rules:
  or:
    - username: bob
      expiration: "2020-01-01"
    - username: alice
`, "alice"),
		yc("live child of or is kept", `rules:
  or:
    - username: bob
      expiration: "2099-01-01"
    - username: alice
`, "alice", "bob"),
		yc("expired child of and widens (Q-05b)", `rules:
  and:
    - management: alice
    - username: bob
      expiration: "2020-01-01"
`, "Carol", "alice", "bob", "dave"),
		yc("nested expiration", `rules:
  or:
    - and:
        - management: alice
        - not:
            username: bob
          expiration: "2020-01-01"
    - username: eve
`, "Carol", "alice", "bob", "dave", "eve"),
		yc("expired operator node", `rules:
  or:
    - and:
        - management: alice
      expiration: "2020-01-01"
    - username: eve
`, "eve"),
		yc("all children of or expired: empty, no error", `rules:
  or:
    - username: bob
      expiration: "2020-01-01"
`),
		yc("all children of and expired: empty (Q-05)", `rules:
  and:
    - username: bob
      expiration: "2020-01-01"
`),
		yc("top-level rule expired: empty (Q-06)", `rules:
  username: bob
  expiration: "2020-01-01"
`),
		yc("top-level rule not expired", `rules:
  username: bob
  expiration: "2099-01-01"
`, "bob"),
		yc("expiration inside not, expired: the not disappears (Q-07)", `rules:
  or:
    - username: alice
    - not:
        username: bob
        expiration: "2020-01-01"
`, "alice"),
		yc("expiration inside not, not expired (Q-07)", `rules:
  or:
    - username: alice
    - not:
        username: bob
        expiration: "2099-01-01"
`, "Carol", "alice", "boss", "dave", "eve", "mallory"),
		yc("expiration inside a top-level not, expired (Q-07)", `rules:
  not:
    username: bob
    expiration: "2020-01-01"
`),
		yc("plain date per rule (Q-08), expired", `rules:
  or:
    - username: bob
      expiration: 2020-01-01
    - username: alice
`, "alice"),
		yc("plain date per rule (Q-08), live", `rules:
  or:
    - username: bob
      expiration: 2099-01-01
    - username: alice
`, "alice", "bob"),
		yc("empty string date is no expiration", `rules:
  or:
    - username: bob
      expiration: ""
`, "bob"),
		yc("blank date is no expiration", `rules:
  or:
    - username: bob
      expiration: " "
`, "bob"),
		yc("null date is no expiration", `rules:
  or:
    - username: bob
      expiration:
`, "bob"),
		yc("expired on the date itself", `rules:
  or:
    - username: bob
      expiration: "2024-06-15"
    - username: alice
      expiration: "2024-06-16"
`, "alice"),
		yc("rollover per rule", `rules:
  or:
    - username: bob
      expiration: "2024-06-31"
`, "bob"),
		ye("bad per-rule date", `rules:
  or:
    - username: bob
      expiration: "2020-1-1"
`, e(validate.KindExpirationDate, 4)),
		ye("month 13 per rule", `rules:
  or:
    - username: bob
      expiration: "2020-13-01"
`, e(validate.KindExpirationDate, 4)),
		ye("integer per-rule date", `rules:
  or:
    - username: bob
      expiration: 20200101
`, e(validate.KindExpirationDate, 4)),
		// The reference does not prune below a map that had its own (live) expiration, so a nested
		// per-rule expiration there is a map with two keys.
		ye("nested expiration below a live operator expiration", `rules:
  or:
    - and:
        - username: bob
          expiration: "2020-01-01"
        - username: alice
      expiration: "2099-01-01"
`, e(validate.KindRuleStructure, 4, "multiple keys")),
		yc("expired not inside and widens", `rules:
  and:
    - management: alice
    - not:
        username: bob
        expiration: "2020-01-01"
`, "Carol", "alice", "bob", "dave"),
		ye("expiration inside a method map with other keys stays an error", `rules:
  or:
    - username: bob
      group: b/y
      expiration: "2099-01-01"
`, e(validate.KindRuleStructure, 3, "multiple keys")),
	})
}

func TestYAMLFileExpiration(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "quoted past date", file: "x.yaml", body: "expiration: \"2020-01-01\"\nrules:\n  username: bob\n",
			want: nil, meta: map[string]any{"no_members_ok": true}},
		{name: "plain past date", file: "x.yaml", body: "expiration: 2020-01-01\nrules:\n  username: bob\n",
			want: nil, meta: map[string]any{"no_members_ok": true}},
		{name: "compact string date", file: "x.yaml", body: "expiration: \"20200101\"\nrules:\n  username: bob\n", want: nil},
		{name: "future", file: "x.yaml", body: "expiration: 2099-01-01\nmetadata:\n  k: v\nrules:\n  username: bob\n",
			want: []string{"bob"}, meta: map[string]any{"k": "v"}},
		{name: "on the day itself", file: "x.yaml", body: "expiration: 2024-06-15\nrules:\n  username: bob\n", want: nil},
		{name: "expired with metadata keeps it and adds the flag", file: "x.yaml",
			body: "expiration: 2020-01-01\nmetadata:\n  k: v\n  no_members_ok: false\nrules:\n  username: bob\n",
			want: nil, meta: map[string]any{"k": "v", "no_members_ok": true}},
		{name: "expired and empty: no flag", file: "x.yaml", body: "expiration: 2020-01-01\nrules:\n  always: false\n",
			want: nil, meta: map[string]any{}},
		ye("impossible date", "expiration: \"2099-02-30\"\nrules:\n  username: bob\n", e(validate.KindExpirationDate, 1)),
		ye("integer date", "expiration: 20990101\nrules:\n  username: bob\n", e(validate.KindExpirationDate, 1)),
		ye("words", "expiration: next year\nrules:\n  username: bob\n", e(validate.KindExpirationDate, 1)),
	})
}

func TestYAMLMetadataAndDescription(t *testing.T) {
	runFileCases(t, []fileCase{
		{name: "types kept (YAML 1.1)", file: "x.yaml", body: `description: Typed
metadata:
  octal: 010
  big: 1_000
  flag: yes
  switch: Off
  day: 2024-01-01
  quoted: "010"
  float: 1.5
  list: [a, 2]
  map: {k: v}
  none:
rules:
  username: bob
`, want: []string{"bob"}, desc: "Typed", meta: map[string]any{
			"octal": int64(8), "big": int64(1000), "flag": true, "switch": false, "day": "2024-01-01",
			"quoted": "010", "float": 1.5, "list": []any{"a", int64(2)}, "map": map[string]any{"k": "v"}, "none": nil}},
		{name: "empty description falls back to cn", file: "x.yaml", body: "description: \"\"\nrules:\n  username: bob\n",
			want: []string{"bob"}, desc: "x"},
		ye("metadata null is an error", "metadata:\nrules:\n  username: bob\n", e(validate.KindMetadata, 1, "expected Hash, got nil")),
		ye("metadata is a list", "metadata: [a]\nrules:\n  username: bob\n", e(validate.KindMetadata, 1, "expected Hash")),
		ye("metadata is a string", "metadata: a\nrules:\n  username: bob\n", e(validate.KindMetadata, 1, "expected Hash")),
		ye("metadata with an integer key", "metadata:\n  1: a\nrules:\n  username: bob\n", e(validate.KindMetadata, 2, "strings")),
		ye("metadata with a YAML 1.1 boolean key", "metadata:\n  yes: a\nrules:\n  username: bob\n", e(validate.KindMetadata, 2, "strings")),
	})
}

func TestYAMLFilters(t *testing.T) {
	withF := &conf{Filters: contractorsFilter}
	lib := map[string]string{"ldap-config/lib/contractors.txt": "username = mallory\nusername = eve\n"}
	f := func(name, filters string, want ...string) fileCase {
		return fileCase{name: name, file: "x.yaml", cfg: withF, extra: lib, want: want,
			body: filters + "rules:\n  or:\n    - username: mallory\n    - username: eve\n    - username: bob\n"}
	}
	fe := func(name, filters string, errs ...errSpec) fileCase {
		c := f(name, filters)
		c.errs = errs
		return c
	}
	runFileCases(t, []fileCase{
		f("no filters: default none", "", "bob"),
		f("string all", "filters:\n  contractors: all\n", "bob", "eve", "mallory"),
		f("string none", "filters:\n  contractors: none\n", "bob"),
		f("string name, trimmed", "filters:\n  contractors: \" eve \"\n", "bob", "eve"),
		f("list of names, case-insensitive", "filters:\n  contractors: [EVE, Mallory]\n", "bob", "eve", "mallory"),
		f("map items with expiration", `filters:
  contractors:
    - key: eve
      expiration: "2020-01-01"
    - key: mallory
      expiration: 2099-01-01
`, "bob", "mallory"),
		f("map item without expiration", "filters:\n  contractors:\n    - key: eve\n", "bob", "eve"),
		f("map item with a null or blank expiration", "filters:\n  contractors:\n    - key: eve\n      expiration:\n    - key: mallory\n      expiration: \"  \"\n", "bob", "eve", "mallory"),
		f("every item expired: default none", "filters:\n  contractors:\n    - key: all\n      expiration: \"2020-01-01\"\n", "bob"),
		f("expired all next to a name", "filters:\n  contractors:\n    - key: all\n      expiration: 2020-01-01\n    - eve\n", "bob", "eve"),
		f("singular filter: is ignored (Q-16)", "filter:\n  contractors: all\n", "bob"),
		f("empty filters map", "filters: {}\n", "bob"),
		fe("filters is a list", "filters: [contractors]\n", e(validate.KindFilter, 1, "expected Hash")),
		fe("unknown filter", "filters:\n  vendors: all\n", e(validate.KindFilter, 2, "vendors")),
		fe("value is a map", "filters:\n  contractors: {key: eve}\n", e(validate.KindFilter, 2)),
		fe("value is a number", "filters:\n  contractors: 5\n", e(validate.KindFilter, 2)),
		fe("value is a boolean", "filters:\n  contractors: yes\n", e(validate.KindFilter, 2)),
		fe("list item is a number", "filters:\n  contractors: [eve, 5]\n", e(validate.KindFilter, 2)),
		fe("map item without key", "filters:\n  contractors:\n    - expiration: \"2099-01-01\"\n", e(validate.KindFilter, 3)),
		fe("bad item date", "filters:\n  contractors:\n    - key: eve\n      expiration: soon\n", e(validate.KindExpirationDate, 4)),
		fe("all with others", "filters:\n  contractors: [all, eve]\n", e(validate.KindFilter, -1, "multiple entries")),
	})
}

// TestYAMLWarnings pins the warnings of the YAML deviations.
func TestYAMLWarnings(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"and: [] (Q-05)", "rules:\n  and: []\n", `"and" has no`},
		{"top-level expired (Q-06)", "rules:\n  username: bob\n  expiration: \"2020-01-01\"\n", "expired"},
		{"filter: singular (Q-16)", "filter:\n  contractors: all\nrules:\n  username: bob\n", `"filter" is ignored`},
		{"duplicate key (Q-24)", "rules:\n  username: alice\n  username: bob\n", "uplicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo, _, err := loadRepo(t, map[string]string{"ldap-config/a/x.yaml": c.body}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !hasWarning(repo, "ldap-config/a/x.yaml", c.want) {
				t.Errorf("no warning containing %q for x.yaml; warnings: %q", c.want, warningsOf(repo))
			}
		})
	}
}
