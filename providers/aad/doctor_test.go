package aad

import (
	"context"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// Issue 24 item 3: the AAD doctor gets a token with the OU's credential, reads its roles
// against what the OU's settings need, and compares Graph's clock, writing nothing.
func TestDoctor(t *testing.T) {
	const secret = "S3NT1NEL-doctor-secret"
	for _, tc := range []struct {
		name, extra, secret string
		roles               []string
		want                string // check=ok|fail, space-separated
		fix                 string
	}{
		{name: "good", secret: secret, roles: []string{"GroupMember.ReadWrite.All", "User.Read.All"},
			want: "credential=ok permissions=ok clock=ok rate limit=ok"},
		{name: "no member write", secret: secret, roles: []string{"GroupMember.Read.All", "User.Read.All"},
			want: "credential=ok permissions=fail clock=ok rate limit=ok", fix: "grant the application permission GroupMember.ReadWrite.All and admin consent"},
		{name: "creates groups without Group.ReadWrite.All", extra: "create_if_missing: true", secret: secret,
			roles: []string{"GroupMember.ReadWrite.All", "User.Read.All"},
			want:  "credential=ok permissions=fail clock=ok rate limit=ok", fix: "Group.ReadWrite.All (create_if_missing or delete_groups"},
		{name: "no user read", secret: secret, roles: []string{"Group.ReadWrite.All"},
			want: "credential=ok permissions=fail clock=ok rate limit=ok", fix: "grant User.Read.All"},
		{name: "wrong secret", secret: "S3NT1NEL-wrong-secret", roles: []string{"Group.ReadWrite.All"},
			want: "credential=fail", fix: "AADSTS7000215"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{}, "", 1)
			e.fake.RegisterApp(fakegraph.App{Tenant: testTenant, ClientID: testClient, Secret: secret, Roles: tc.roles})
			reg := e.identityRegistry(Options{}, nil)
			ou := testOU(e.fake.BaseURL(), "tenant_id: "+testTenant+"\nclient_id: "+testClient+"\nclient_secret: "+tc.secret+"\n"+tc.extra)
			p, err := reg.Provider(ou)
			if err != nil {
				t.Fatal(err)
			}
			before := e.fake.Stats().Routes
			fs := p.(providers.Doctor).Doctor(context.Background(), &providers.Target{OU: ou})
			var got []string
			var fixes string
			for _, f := range fs {
				st := "ok"
				if !f.OK {
					st, fixes = "fail", fixes+f.Fix
				}
				got = append(got, f.Check+"="+st)
			}
			if strings.Join(got, " ") != tc.want || !strings.Contains(fixes, tc.fix) || strings.Contains(fixes, "S3NT1NEL") {
				t.Fatalf("findings %v (%+v), want %s and a fix with %q", got, fs, tc.want, tc.fix)
			}
			for k, n := range e.fake.Stats().Routes {
				if n != before[k] && k != "groups.list" {
					t.Errorf("doctor sent %s", k)
				}
			}
		})
	}
}
