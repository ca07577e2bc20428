package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/entitlements-go/entitlements/backends"
	. "github.com/entitlements-go/entitlements/config"
)

// Settings read as strings, booleans and plain Go maps.
func TestPlainValueAccessors(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "groups", "teams"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Parse(filepath.Join(root, "entitlements.yaml"), []byte(`configuration_path: ./groups
backends:
  corp:
    type: ldap
    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: cn=x
    ldap_bindpw: x
    person_dn_format: uid=%KEY%,ou=People
groups:
  teams:
    backend: corp
    base: ou=Teams
    create_if_missing: true
filters:
  contractors:
    class: Entitlements::Data::Groups::Calculated::Filters::MemberOfGroup
    config:
      group: teams/contractors
extras:
  ldap_group:
    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: cn=y
    ldap_bindpw: y
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`), Options{Types: backends.Types(), BaseDir: root, Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	ou := cfg.OU("teams")
	if !ou.SettingTrue("create_if_missing") {
		t.Errorf("SettingTrue(create_if_missing) = false")
	}
	if got, ok := ou.Setting("base"); got != "ou=Teams" || !ok {
		t.Errorf("Setting(base) = %q, %v", got, ok)
	}
	if got, ok := ou.Setting("nope"); got != "" || ok {
		t.Errorf("missing setting = %q, %v", got, ok)
	}
	if m := ou.Settings.Map(); m["ldap_uri"] != "ldaps://ldap.example.net" {
		t.Errorf("SettingsMap = %#v", m)
	}
	if got := cfg.Filters[0].Config.Map(); !reflect.DeepEqual(got, map[string]any{"group": "teams/contractors"}) {
		t.Errorf("filter ConfigMap = %#v", got)
	}
	if got := cfg.People["yaml"].Config.Map(); got["filename"] != "people.yaml" {
		t.Errorf("people ConfigMap = %#v", got)
	}
	if got := cfg.LDAPGroup.Map(); got["ldap_binddn"] != "cn=y" {
		t.Errorf("LDAPGroupSettings = %#v", got)
	}
	if len(cfg.Auditors) != 0 {
		t.Errorf("Auditors = %#v", cfg.Auditors)
	}
}

// Value keeps the reference's YAML 1.1 typing and the lines, and every method works on the
// zero Value (an absent key).
func TestValue(t *testing.T) {
	v, err := ParseValue(`s: text
yes_word: yes
octal: 010
big: 123456789012345678901234567890
f: 1.50
empty:
list: [a, 2, true]
map: {k: v}
"12345": quoted key
12345: int key
`)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		exists, null, list, isMap bool
		str                       string
		strOK                     bool
		text                      string
		line                      int
		iface                     any
	}
	for _, tc := range []struct {
		key string
		want
	}{
		{"s", want{exists: true, str: "text", strOK: true, text: "text", line: 1, iface: "text"}},
		{"yes_word", want{exists: true, text: "true", line: 2, iface: true}},
		{"octal", want{exists: true, text: "8", line: 3, iface: int64(8)}},
		{"big", want{exists: true, text: "123456789012345678901234567890", line: 4, iface: json.Number("123456789012345678901234567890")}},
		{"f", want{exists: true, text: "1.5", line: 5, iface: 1.5}},
		{"empty", want{exists: true, null: true, line: 6}},
		{"list", want{exists: true, list: true, text: `["a", 2, true]`, line: 7, iface: []any{"a", int64(2), true}}},
		{"map", want{exists: true, isMap: true, text: `{"k"=>"v"}`, line: 8, iface: map[string]any{"k": "v"}}},
		{"12345", want{exists: true, str: "quoted key", strOK: true, text: "quoted key", line: 9, iface: "quoted key"}},
		{"absent", want{null: true}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			x := v.Get(tc.key)
			str, strOK := x.AsString()
			got := want{exists: x.Exists(), null: x.IsNull(), list: x.IsList(), isMap: x.IsMap(),
				str: str, strOK: strOK, text: x.Text(), line: x.Line(), iface: x.Interface()}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if b, ok := v.Get("yes_word").AsBool(); !b || !ok {
		t.Errorf("AsBool(yes) = %v, %v", b, ok)
	}
	if _, ok := v.Get("s").AsBool(); ok {
		t.Error("AsBool of a string is ok")
	}
	if i, ok := v.Get("octal").AsInt(); i != 8 || !ok {
		t.Errorf("AsInt(010) = %v, %v", i, ok)
	}
	if _, ok := v.Get("big").AsInt(); ok {
		t.Error("AsInt of an integer beyond int64 is ok")
	}
	items := v.Get("list").Items()
	if len(items) != 3 || items[1].Text() != "2" || items[1].Line() != 7 {
		t.Errorf("Items = %v", items)
	}
	if v.Get("s").Items() != nil || v.Get("list").Get("a").Exists() || v.Get("map").Get("k").Text() != "v" {
		t.Error("Items of a scalar, Get on a list or Get on a map")
	}
	// The plain values are copies: changing them changes nothing in the configuration.
	v.Get("map").Map()["k"] = "changed"
	if v.Get("map").Get("k").Text() != "v" {
		t.Error("Map shares its storage with the configuration")
	}
	var zero Value
	if zero.Exists() || !zero.IsNull() || zero.Text() != "" || zero.Interface() != nil || len(zero.Map()) != 0 || zero.Get("x").Exists() {
		t.Error("zero Value is not an absent value")
	}
	if _, err := ParseValue("a: *alias\n"); err == nil {
		t.Error("ParseValue accepted an alias")
	}
	if e, err := ParseValue(""); err != nil || !e.Exists() || !e.IsNull() {
		t.Errorf("ParseValue(\"\") = %v, %v", e, err)
	}
}
