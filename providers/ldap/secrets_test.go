package ldap_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	ber "github.com/go-asn1-ber/asn1-ber"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/deploy"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// sentinelPW is the bind password of the secret tests: distinctive, so any leak is found.
const sentinelPW = "S3NT1NEL-bindpw-4e1f"

// echoServer is an LDAP server that refuses every bind with a diagnostic message quoting the
// bind DN and password, as a hostile or badly written server may. It returns its URL.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					p, err := ber.ReadPacket(c)
					if err != nil || len(p.Children) < 2 {
						return
					}
					id := p.Children[0].Value
					op := p.Children[1]
					var name, pw string
					if op.Tag == 0 && len(op.Children) >= 3 { // BindRequest
						name, _ = op.Children[1].Value.(string)
						pw = op.Children[2].Data.String()
					}
					resp := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "LDAP Response")
					resp.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, id, "MessageID"))
					br := ber.Encode(ber.ClassApplication, ber.TypeConstructed, 1, nil, "Bind Response")
					br.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, 49, "resultCode"))
					br.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", "matchedDN"))
					br.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString,
						"invalid credentials for "+name+" with password "+pw, "diagnosticMessage"))
					resp.AppendChild(br)
					if _, err := c.Write(resp.Bytes()); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "ldap://" + l.Addr().String()
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Issue 20 (also close): no error of the LDAP provider (plan, people source, ldap_group
// reads) holds the bind password, whatever goes wrong: a refused password, no server, TLS to
// a plain port, a server that quotes the password in its answer, a password in ldap_uri.
func TestBindPasswordNeverInErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		uri  func(t *testing.T) (uri, binddn string)
		pw   string
	}{
		{"refused password", func(t *testing.T) (string, string) {
			srv := startB(t)
			return srv.URL, srv.BindDN
		}, sentinelPW},
		{"no server", func(t *testing.T) (string, string) { return "ldap://" + closedPort(t), "cn=admin" }, sentinelPW},
		{"TLS to a plain port", func(t *testing.T) (string, string) {
			srv := startB(t)
			return strings.Replace(srv.URL, "ldap://", "ldaps://", 1), srv.BindDN
		}, sentinelPW},
		{"server quoting the password", func(t *testing.T) (string, string) { return echoServer(t), "cn=admin" }, sentinelPW},
		{"password in ldap_uri", func(t *testing.T) (string, string) {
			return "ldap://cn=admin:" + sentinelPW + "@" + closedPort(t), "cn=admin"
		}, "another-password"},
		{"password in an invalid ldap_uri", func(t *testing.T) (string, string) {
			return "ldapz://cn=admin:" + sentinelPW + "@" + closedPort(t), "cn=admin"
		}, "another-password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uri, binddn := tc.uri(t)
			cfg := bConfig(uri, binddn, tc.pw, "ou=Teams,ou=Groups,"+bSuffix) +
				"extras:\n  ldap_group:\n    ldap_uri: " + uri + "\n    ldap_binddn: " + binddn + "\n    ldap_bindpw: " + tc.pw + "\n"
			dir := bRepo(t, cfg, bDefs)
			var texts []string
			ctx := context.Background()

			// Plan (and apply, which has nothing to write to failed targets).
			res, c := bCalc(t, dir)
			reg := ldapprov.NewRegistry(ldapprov.Options{})
			defer reg.Close()
			plan, err := deploy.Build(ctx, res, c, bOptions(reg))
			if err != nil {
				t.Fatal(err)
			}
			if plan.Err() == nil {
				t.Fatal("the plan did not fail")
			}
			texts = append(texts, plan.Err().Error())
			rep, _ := deploy.Apply(ctx, plan, deploy.ApplyOptions{})
			if err := rep.Err(); err != nil {
				texts = append(texts, err.Error())
			}

			// ldap_group reads.
			if _, err := reg.GroupReaderFor(c).ReadGroups(ctx, []string{"cn=x,ou=Groups," + bSuffix}); err != nil {
				texts = append(texts, err.Error())
			} else {
				t.Error("ldap_group read did not fail")
			}

			// An ldap people source.
			peopleCfg := strings.Replace(cfg, "people:\n  y:\n    type: yaml\n    config: {filename: people.yaml}\n",
				"people:\n  y:\n    type: ldap\n    config:\n      base: ou=People,"+bSuffix+"\n      ldap_uri: "+uri+
					"\n      ldap_binddn: "+binddn+"\n      ldap_bindpw: "+tc.pw+"\n", 1)
			if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(peopleCfg), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := calc.Load(ctx, filepath.Join(dir, "config.yaml"), calc.Options{Types: backends.Types(), Now: now, BaseDir: dir, People: reg.PeopleLoader()}); err != nil {
				texts = append(texts, err.Error())
			} else {
				t.Error("the people source did not fail")
			}

			all := strings.Join(texts, "\n")
			if strings.Contains(all, sentinelPW) {
				t.Errorf("the password leaked:\n%s", all)
			}
			t.Logf("messages:\n%s", all)
		})
	}
}
