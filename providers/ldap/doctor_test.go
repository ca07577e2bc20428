package ldap_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// Issue 24 item 3: the LDAP doctor binds, finds the base and compares its objectClass,
// writing nothing; each failure says what to fix, never the password.
func TestDoctor(t *testing.T) {
	srv := startB(t)
	for _, tc := range []struct {
		name, base, password string
		create               bool
		want                 []string // check=ok|fail
		fix                  string
	}{
		{name: "good", base: bSuffix, password: srv.Password, want: []string{"bind=ok", "base=ok", "write access=ok"}},
		{name: "missing base", base: "ou=Nowhere," + bSuffix, password: srv.Password, want: []string{"bind=ok", "base=fail"},
			fix: "does not exist (or the bind DN cannot see it): create it, or set create_if_missing: true"},
		{name: "missing base, created", base: "ou=Nowhere," + bSuffix, password: srv.Password, create: true, want: []string{"bind=ok", "base=ok"}},
		{name: "wrong password", base: bSuffix, password: "S3NT1NEL-wrong-pw", want: []string{"bind=fail"},
			fix: "check ldap_uri, ldap_binddn and ldap_bindpw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := bConfig(srv.URL, srv.BindDN, tc.password, tc.base)
			if !tc.create {
				cfg = strings.Replace(cfg, "    create_if_missing: true\n", "", 1)
			}
			dir := bRepo(t, cfg, nil)
			c, _, err := config.Load(filepath.Join(dir, "config.yaml"), config.Options{Types: backends.Types(), BaseDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			reg := ldapprov.NewRegistry(ldapprov.Options{})
			defer reg.Close()
			p, err := reg.Provider(c.OU("teams"))
			if err != nil {
				t.Fatal(err)
			}
			before := reg.Counters()
			fs := providers.Provider(p).(providers.Doctor).Doctor(context.Background(), &providers.Target{OU: c.OU("teams")})
			var got []string
			var fixes string
			for _, f := range fs {
				st := "ok"
				if !f.OK {
					st, fixes = "fail", fixes+f.Fix
				}
				got = append(got, f.Check+"="+st)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || !strings.Contains(fixes, tc.fix) || strings.Contains(fixes, "S3NT1NEL") {
				t.Fatalf("findings %v (%+v), want %v and a fix with %q", got, fs, tc.want, tc.fix)
			}
			after := reg.Counters()
			for _, k := range []string{"adds", "modifies", "deletes"} {
				if after[k] != before[k] {
					t.Errorf("doctor wrote: %s %d -> %d", k, before[k], after[k])
				}
			}
		})
	}
}
