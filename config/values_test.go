package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The accessors give programs outside this module the raw YAML as plain Go values.
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
`), Options{BaseDir: root, Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	ou := cfg.OU("teams")
	if got := ou.Setting("create_if_missing"); got != true {
		t.Errorf("Setting(create_if_missing) = %#v", got)
	}
	if got := ou.SettingString("base"); got != "ou=Teams" {
		t.Errorf("SettingString(base) = %q", got)
	}
	if got := ou.Setting("nope"); got != nil {
		t.Errorf("missing setting = %#v", got)
	}
	if m := ou.SettingsMap(); m["ldap_uri"] != "ldaps://ldap.example.net" {
		t.Errorf("SettingsMap = %#v", m)
	}
	if got := cfg.Filters[0].ConfigMap(); !reflect.DeepEqual(got, map[string]any{"group": "teams/contractors"}) {
		t.Errorf("filter ConfigMap = %#v", got)
	}
	if got := cfg.People["yaml"].ConfigMap(); got["filename"] != "people.yaml" {
		t.Errorf("people ConfigMap = %#v", got)
	}
	if got := cfg.LDAPGroupSettings(); got["ldap_binddn"] != "cn=y" {
		t.Errorf("LDAPGroupSettings = %#v", got)
	}
	if got := cfg.AuditorSettings(); len(got) != 0 {
		t.Errorf("AuditorSettings = %#v", got)
	}
}
