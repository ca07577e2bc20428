package ldap

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
)

// A target's read reports the groups read so far after each page of its base search, so a
// terminal can show a read of many thousand groups moving; a base read once per run reports
// once, to the target that read it.
func TestReadReportsEachPage(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{})
	const groups = 250
	var b strings.Builder
	fmt.Fprintf(&b, "dn: ou=Teams,%s\nobjectClass: organizationalUnit\nou: Teams\n\n", srv.Suffix)
	for i := range groups {
		fmt.Fprintf(&b, "dn: cn=g%d,ou=Teams,%s\nobjectClass: groupOfNames\ncn: g%d\nmember: cn=g%d,ou=Teams,%s\n\n", i, srv.Suffix, i, i, srv.Suffix)
	}
	srv.Add(t, b.String())
	settings, err := config.ParseValue(fmt.Sprintf("ldap_uri: %s\nldap_binddn: %s\nldap_bindpw: %s\nperson_dn_format: uid=%%KEY%%,ou=People,%s\n",
		srv.URL, srv.BindDN, srv.Password, srv.Suffix))
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(Options{PageSize: 100})
	defer reg.Close()
	ou := &config.OU{Key: "teams", Type: "ldap", Base: "ou=Teams," + srv.Suffix, Settings: settings}
	p, err := reg.Provider(ou)
	if err != nil {
		t.Fatal(err)
	}
	var got []providers.ReadProgress
	target := &providers.Target{OU: ou, Progress: func(rp providers.ReadProgress) { got = append(got, rp) }}
	st, err := p.Read(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Groups) != groups {
		t.Fatalf("%d groups read, want %d", len(st.Groups), groups)
	}
	want := []providers.ReadProgress{{Groups: 100}, {Groups: 200}, {Groups: groups}}
	if !slices.Equal(got, want) {
		t.Errorf("progress %+v, want %+v", got, want)
	}
	// The second read of the base in this run comes from the run's cache: no pages, no reports.
	got = nil
	if _, err := p.Read(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("a cached read reported %+v", got)
	}
}
