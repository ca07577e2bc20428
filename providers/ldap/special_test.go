package ldap_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// specialUIDs are uids that need escaping in a DN (RFC 4514), plus a few that do not but
// are easy to mangle (non-ASCII, inner space).
var specialUIDs = []string{`a,b`, `x=y`, `p+q`, `back\slash`, `quote"d`, `lt<gt>`, `semi;colon`, `#hash`, `sp ace`, `Ünïcode`, `plain`}

// specialFor is the uids of the special group of an OU: posixGroup's memberUid is an
// IA5String, so it cannot hold a DN with non-ASCII characters.
func specialFor(ou string) []string {
	if ou != "posix" {
		return specialUIDs
	}
	return slices.DeleteFunc(slices.Clone(specialUIDs), func(u string) bool { return strings.ContainsFunc(u, func(r rune) bool { return r > 127 }) })
}

func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// specialRepo has one group per object class holding every special uid. With ldapPeople the
// people come from the directory (their entries exist); otherwise from a YAML file and no
// person entry exists on the server.
func specialRepo(t *testing.T, srv *testldap.Server, ldapPeople bool) string {
	t.Helper()
	var cfg, ppl, rules strings.Builder
	cfg.WriteString("configuration_path: ./defs\n" + ldapBackend(srv) + "groups:\n")
	for _, ou := range []struct{ key, plugin string }{{"unique", ""}, {"names", "GroupOfNames"}, {"posix", "PosixGroup"}} {
		fmt.Fprintf(&cfg, "  %s:\n    backend: test-ldap\n    base: ou=%s,ou=Groups,%s\n    create_if_missing: true\n", ou.key, ou.key, srv.Suffix)
		if ou.plugin != "" {
			fmt.Fprintf(&cfg, "    plugin:\n      file: x.rb\n      class: %s\n", ou.plugin)
		}
	}
	if ldapPeople {
		fmt.Fprintf(&cfg, "people:\n  ldap:\n    type: ldap\n    config:\n      base: ou=People,%s\n      ldap_uri: %s\n      ldap_binddn: %s\n      ldap_bindpw: %s\npeople_data_source: ldap\n",
			srv.Suffix, srv.URL, srv.BindDN, srv.Password)
	} else {
		cfg.WriteString("people:\n  yaml:\n    type: yaml\n    config:\n      filename: people.yaml\npeople_data_source: yaml\n")
	}
	ppl.WriteString("---\n")
	for _, u := range specialUIDs {
		fmt.Fprintf(&ppl, "%s:\n  cn: %s\n", yamlQuote(u), yamlQuote(u))
	}
	files := map[string]string{"config.yaml": cfg.String(), "people.yaml": ppl.String()}
	for _, ou := range []string{"unique", "names", "posix"} {
		rules.Reset()
		rules.WriteString("---\ndescription: special\nmetadata:\n  gid_number: 4242\nrules:\n  or:\n")
		for _, u := range specialFor(ou) {
			fmt.Fprintf(&rules, "    - username: %s\n", yamlQuote(u))
		}
		files["defs/"+ou+"/special.yaml"] = rules.String()
		// A group of one person whose entry does not exist anywhere.
		files["defs/"+ou+"/ghost.yaml"] = "---\ndescription: ghost\nmetadata:\n  gid_number: 4243\nrules:\n  username: ghost\n"
	}
	if !ldapPeople {
		files["people.yaml"] += "ghost:\n  cn: ghost\n"
	}
	return writeFiles(t, files)
}

func TestSpecialCharacterUIDsConverge(t *testing.T) {
	for _, ldapPeople := range []bool{false, true} {
		t.Run(fmt.Sprintf("ldapPeople=%v", ldapPeople), func(t *testing.T) {
			srv := testldap.Start(t, testldap.Options{})
			if ldapPeople {
				conn := srv.Dial(t)
				for _, u := range specialUIDs {
					req := goldap.NewAddRequest(fmt.Sprintf("uid=%s,ou=People,%s", escapeRDN(u), srv.Suffix), nil)
					req.Attribute("objectClass", []string{"inetOrgPerson"})
					req.Attribute("uid", []string{u})
					req.Attribute("cn", []string{u})
					req.Attribute("sn", []string{u})
					if err := conn.Add(req); err != nil {
						t.Fatalf("adding person %q: %v", u, err)
					}
				}
			}
			dir := specialRepo(t, srv, ldapPeople)
			reg := ldapprov.NewRegistry(ldapprov.Options{})
			defer reg.Close()
			first := deployWith(t, reg, dir, true, deploy.Options{})
			mustApply(t, first)
			if got := first.plan.Totals()[providers.CreateGroup]; got != 6 {
				t.Fatalf("created %d groups, want 6: %v", got, first.plan.Totals())
			}
			for _, ou := range []string{"unique", "names", "posix"} {
				want := slices.Clone(specialFor(ou))
				slices.Sort(want)
				e := srv.Entry(t, "cn=special,ou="+ou+",ou=Groups,"+srv.Suffix)
				if e == nil {
					t.Fatalf("%s: special group missing", ou)
				}
				var got []string
				for _, v := range memberValues(e) {
					d, err := goldap.ParseDN(v)
					if err != nil {
						t.Fatalf("%s: member %q is not a DN: %v", ou, v, err)
					}
					got = append(got, d.RDNs[0].Attributes[0].Value)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s: members on the server %q, want %q", ou, got, want)
				}
			}
			// The same registry (its base cache must follow its own writes) and a fresh one.
			for _, r := range []*ldapprov.Registry{reg, ldapprov.NewRegistry(ldapprov.Options{})} {
				again := deployWith(t, r, dir, false, deploy.Options{})
				if err := again.plan.Err(); err != nil {
					t.Fatalf("plan: %v", err)
				}
				for _, tp := range again.plan.Targets {
					for _, c := range tp.Changes {
						t.Errorf("plan after apply: %s: %s", tp.OU, c.Describe())
					}
				}
				if w := writes(again.counters); w != 0 {
					t.Errorf("plan wrote %d times", w)
				}
			}
		})
	}
}

// escapeRDN escapes an RDN value the way the test wants it on the server: the \XX hex form
// for every special character, which is what slapd returns, unlike the \c form we write.
func escapeRDN(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if strings.IndexByte(`,+"\<>;=#`, c) >= 0 || c == ' ' && (i == 0 || i == len(v)-1) {
			fmt.Fprintf(&b, `\%02X`, c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func memberValues(e *goldap.Entry) []string {
	for _, a := range []string{"uniqueMember", "member", "memberUid"} {
		if v := e.GetAttributeValues(a); len(v) > 0 {
			out := []string{}
			for _, m := range v {
				if !dn.Equal(m, e.DN) {
					out = append(out, m)
				}
			}
			return out
		}
	}
	return nil
}
