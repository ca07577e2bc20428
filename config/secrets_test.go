package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	. "github.com/entitlements-go/entitlements/config"
)

// Issue 10 item 5: a substituted value is one string scalar exactly as given, whatever YAML
// syntax it contains, and it is never quoted by an error.
func TestSubstitutedValuesAreStringsAsGiven(t *testing.T) {
	values := []string{"*secret", "!secret x", "&secret x", "secret #x", "'single'", `"double"`,
		"a: b", "line1\nline2", "{x: y}", "[a, b]", "- a", "%x", "@x", "`x", "|", ">", "? x",
		"trailing space ", " leading", "0x1F", "12345", "true", "~", "null", "<%= x %>", "${OTHER}",
		"erbvalue0_", "tab\there", `back\slash`, "ünïcode"}
	forms := map[string]string{
		"erb":           `<%= ENV["PW"] %>`,
		"erb fetch":     `<%= ENV.fetch("PW") %>`,
		"dollar":        `${PW}`,
		"double quoted": `"<%= ENV['PW'] %>"`,
		"single quoted": `'${PW}'`,
	}
	for _, v := range values {
		for name, form := range forms {
			t.Run(name+"/"+v, func(t *testing.T) {
				text := strings.Replace(cfgText(okGroups), "ldap_bindpw: secret", "ldap_bindpw: "+form, 1)
				root := tempRepo(t)
				o := testOptions(root)
				o.Getenv = func(k string) (string, bool) {
					if k == "PW" {
						return v, true
					}
					return "", false
				}
				cfg, _, err := Parse(filepath.Join(root, "config.yaml"), []byte(text), o)
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				got, ok := cfg.OU("a").Settings.Get("ldap_bindpw").AsString()
				if !ok || got != v {
					t.Fatalf("ldap_bindpw = %q (a string: %v), want the string %q", got, ok, v)
				}
			})
		}
	}
	// The whole scalar was one empty substitution: null, as `key:` with nothing (2.5).
	text := strings.Replace(cfgText(okGroups), "ldap_bindpw: secret", `ldap_bindpw: <%= ENV["UNSET"] %>`, 1)
	cfg, _, errs := parse(t, text)
	if errs != nil || !cfg.OU("a").Settings.Get("ldap_bindpw").IsNull() {
		t.Fatalf("empty substitution: %v", errs)
	}
	// Flags and numbers given whole keep their type, so that configs can set them from the
	// environment.
	root := tempRepo(t)
	o := testOptions(root)
	o.Getenv = func(k string) (string, bool) { return map[string]string{"C": "true", "N": "3"}[k], true }
	text = cfgText(ldapOU("a", "    create_if_missing: ${C}\n"), "max_parallelism: <%= ENV['N'] %>\n")
	cfg, _, err := Parse(filepath.Join(root, "config.yaml"), []byte(text), o)
	if err != nil || cfg.MaxParallelism != 3 || !cfg.OU("a").SettingTrue("create_if_missing") {
		t.Fatalf("typed substitution: %v", err)
	}
}

const sentinel = "S3NT1NEL"

// secretEnv serves a distinct sentinel for every variable, so any leak is found.
func secretEnv(k string) (string, bool) { return sentinel + "-env-" + k, true }

// secretBase is a config where every secret key holds a sentinel, literally and from the
// environment; mutations turn it into each error the loader reports.
func secretBase() string {
	return `configuration_path: ./ldap-config
backends:
  l:
    type: ldap
    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: uid=binder,dc=example
    ldap_bindpw: ` + sentinel + `-literal-bindpw
    person_dn_format: uid=%KEY%,ou=People,dc=example
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
      ldap_bindpw: <%= ENV["PEOPLE_PW"] %>
      password: ` + sentinel + `-literal-password
  ldappeople:
    type: ldap
    config:
      ldap_uri: ldaps://x
      ldap_bindpw: ${LDAP_PW}
      token: ` + sentinel + `-literal-token
      my_secret_key: ` + sentinel + `-literal-secret
      sshkey: ` + sentinel + `-literal-sshkey
      private_key: ` + sentinel + `-literal-private
people_data_source: yaml
groups:
  a:
    backend: l
    base: ou=a,dc=example
  b:
    type: ldap
    base: ou=b,dc=example
    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: <%= ENV["BINDDN"] %>
    ldap_bindpw: <%= ENV["BINDPW"] %>
    person_dn_format: uid=%KEY%,ou=People,dc=example
  gh:
    type: github_team
    org: example
    base: ou=gh,dc=example
    token: ${GITHUB_TOKEN}
  az:
    type: aad
    base: ou=az
    client_secret: <%= ENV["AAD_SECRET"] %>
    tenant_id: ` + sentinel + `-literal-tenant
extras:
  ldap_group:
    ldap_uri: ldaps://x
    ldap_bindpw: ` + sentinel + `-literal-extra-pw
`
}

// Issue 10 item 6: every error and warning of the config loader, on a config whose secret keys
// hold sentinels, is grepped for them.
func TestNoErrorShowsASecret(t *testing.T) {
	muts := map[string]func(string) string{
		"valid":                func(s string) string { return s },
		"people without type":  func(s string) string { return strings.Replace(s, "    type: yaml\n", "", 1) },
		"people type from env": func(s string) string { return strings.Replace(s, "    type: yaml\n", "    type: ${TYPE}\n", 1) },
		"people bad type": func(s string) string {
			return strings.Replace(s, "    type: ldap\n    config:", "    type: nope\n    config:", 1)
		},
		"people config not map": func(s string) string { return strings.Replace(s, "      filename: people.yaml\n", "", 1) + "" },
		"people source not map": func(s string) string {
			return strings.Replace(s, "  ldappeople:\n", "  broken: <%= ENV['X'] %>\n  ldappeople:\n", 1)
		},
		"selected source from env": func(s string) string {
			return strings.Replace(s, "people_data_source: yaml", "people_data_source: ${SRC}", 1)
		},
		"ou without type": func(s string) string {
			return strings.Replace(s, "    type: github_team\n", "", 1)
		},
		"ou type from env": func(s string) string {
			return strings.Replace(s, "    type: github_team\n", "    type: ${T}\n", 1)
		},
		"backend from env": func(s string) string {
			return strings.Replace(s, "    backend: l\n", "    backend: ${B}\n", 1)
		},
		"unknown ou key": func(s string) string {
			return strings.Replace(s, "    org: example\n", "    org: example\n    passwd: "+sentinel+"-literal-passwd\n", 1)
		},
		"ou not a map": func(s string) string { return s + "  zz: " + sentinel + "-x\n" },
		"missing attr": func(s string) string { return strings.Replace(s, "    org: example\n", "", 1) },
		"bool from env": func(s string) string {
			return strings.Replace(s, "    org: example\n", "    org: example\n    delete_teams: ${BOOL}\n", 1)
		},
		"ldap bool": func(s string) string {
			return strings.Replace(s, "    base: ou=b,dc=example\n", "    base: ou=b,dc=example\n    create_if_missing: ${CIM}\n", 1)
		},
		"plugin class from env": func(s string) string {
			return strings.Replace(s, "    base: ou=b,dc=example\n", "    base: ou=b,dc=example\n    plugin: {file: x.rb, class: \"${PLUGIN}\"}\n", 1)
		},
		"mirror to nowhere": func(s string) string {
			return strings.Replace(s, "    base: ou=b,dc=example\n", "    base: ou=b,dc=example\n    mirror: ${MIRROR}\n", 1)
		},
		"dir from env": func(s string) string {
			return strings.Replace(s, "    base: ou=b,dc=example\n", "    base: ou=b,dc=example\n    dir: ${DIR}\n", 1)
		},
		"extra path":    func(s string) string { return s + "  custom:\n    path: ${EXTRA_PATH}\n" },
		"extra unknown": func(s string) string { return s + "  ${EXTRA}: {}\n" },
		"orgchart env":  func(s string) string { return s + "  orgchart:\n    manager_map_file: ${MM}\n" },
		"filter class":  func(s string) string { return s + "filters:\n  f:\n    class: ${FILTER}\n" },
		"filter group": func(s string) string {
			return s + "filters:\n  f:\n    class: MemberOfGroup\n    config: {group: ${G}}\n"
		},
		"member_of ou": func(s string) string {
			return strings.Replace(s, "groups:\n", "groups:\n  mo:\n    type: member_of\n    memberof_attribute: x\n    ou: [${MO}]\n    ldap_uri: ldaps://x\n    ldap_binddn: x\n    ldap_bindpw: ${MO_PW}\n    person_dn_format: x\n", 1)
		},
		"max_parallelism": func(s string) string { return s + "max_parallelism: ${MP}\n" },
		"auditor":         func(s string) string { return s + "auditors:\n  - auditor_class: ${AUD}\n    token: ${AUD_TOKEN}\n" },
		"unknown top key": func(s string) string { return s + "${TOP}: 1\n" },
		"yaml error near a value": func(s string) string {
			return strings.Replace(s, "    org: example\n", "    org: [${BAD}\n", 1)
		},
		"erb error": func(s string) string { return s + "# <%= ENV[\"A\"] + 'x' %>\n" },
		// Issue 24: a GitHub OU with a token and an app's key, literal and from the environment.
		"two github credentials": func(s string) string {
			return strings.Replace(s, "    token: ${GITHUB_TOKEN}\n", "    token: ${GITHUB_TOKEN}\n    app_id: ${APP_ID}\n    private_key: "+sentinel+"-literal-private-key\n    private_key_path: ${KEY_PATH}\n", 1)
		},
		"github credential kind from env": func(s string) string {
			return strings.Replace(s, "    token: ${GITHUB_TOKEN}\n", "    token: ${GITHUB_TOKEN}\n    credential: ${CRED}\n    private_key: <%= ENV['KEY'] %>\n", 1)
		},
		"github credential kind literal": func(s string) string {
			return strings.Replace(s, "    token: ${GITHUB_TOKEN}\n", "    token: ${GITHUB_TOKEN}\n    credential: "+sentinel+"\n", 1)
		},
		// Issue 24 item 2: aad credential kinds and certificate keys, literal and from the
		// environment, in every error they can cause.
		"aad credential kind literal": func(s string) string {
			return strings.Replace(s, "    type: aad\n", "    type: aad\n    credential: "+sentinel+"-literal-kind\n", 1)
		},
		"aad credential kind from env": func(s string) string {
			return strings.Replace(s, "    type: aad\n", "    type: aad\n    credential: ${AAD_KIND}\n", 1)
		},
		"aad certificate without path": func(s string) string {
			return strings.Replace(s, "    type: aad\n", "    type: aad\n    credential: certificate\n    client_certificate_password: "+sentinel+"-literal-certpw\n", 1)
		},
		"aad two credentials": func(s string) string {
			return strings.Replace(s, "    type: aad\n", "    type: aad\n    client_certificate_path: ${CERT_PATH}\n    client_certificate_password: "+sentinel+"-literal-certpw\n", 1)
		},
		"top not a map": func(string) string { return "- ${X}\n- " + sentinel + "\n" },
	}
	for name, mut := range muts {
		t.Run(name, func(t *testing.T) {
			root := tempRepo(t)
			o := testOptions(root)
			o.Getenv = secretEnv
			_, warns, err := Parse(filepath.Join(root, "config.yaml"), []byte(mut(secretBase())), o)
			var out strings.Builder
			if err != nil {
				out.WriteString(err.Error())
			}
			for _, w := range warns {
				out.WriteString("\n" + w.String())
			}
			if strings.Contains(out.String(), sentinel) {
				t.Errorf("a secret is shown:\n%s", out.String())
			}
			if name != "valid" && err == nil && len(warns) == 0 {
				t.Errorf("mutation produced neither an error nor a warning")
			}
		})
	}
}
