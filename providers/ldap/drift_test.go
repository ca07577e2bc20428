package ldap_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/drift"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
	"github.com/entitlements-go/entitlements/providers/ldap/ldapcalc"
)

// Issue 26.2: someone with write access to the directory, not the tool, removes a member and
// creates a group after an apply. drift, against the real slapd, reports both, with the
// intruder's DN (modifiersName) and the time of the change (modifyTimestamp); the plan of
// the definitions, reported apart, would undo them.
func TestDriftOutOfBandChanges(t *testing.T) {
	const intruderPW = "hunter2"
	intruder := "cn=intruder," + "dc=example,dc=net"
	srv := testldap.Start(t, testldap.Options{
		Access: `access to * by dn.exact="` + intruder + `" write by * read`,
		LDIF:   "dn: " + intruder + "\nobjectClass: person\ncn: intruder\nsn: intruder\nuserPassword: " + intruderPW + "\n",
	})
	base := "ou=Apps,ou=Groups," + srv.Suffix
	dir := writeFiles(t, map[string]string{
		"config.yaml": "configuration_path: ./defs\n" + ldapBackend(srv) + "groups:\n  apps:\n    backend: test-ldap\n    base: " + base +
			"\n    create_if_missing: true\npeople:\n  yaml:\n    type: yaml\n    config:\n      filename: people.yaml\npeople_data_source: yaml\n",
		"people.yaml":        "---\nalice:\n  cn: alice\nbob:\n  cn: bob\ncarol:\n  cn: carol\n",
		"defs/apps/ssh.txt":  "username = alice\nusername = bob\n",
		"defs/apps/wiki.txt": "username = carol\n",
	})
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	first := deployWith(t, reg, dir, true, deploy.Options{})
	mustApply(t, first)

	// The last applied state as the GitRepo audit log records it (members as person DNs).
	state := t.TempDir()
	personFormat := "uid=%KEY%,ou=People," + srv.Suffix
	for _, g := range first.result.Groups {
		p := filepath.Join(state, filepath.FromSlash(cache.PathFromDN(g.DN)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(audit.Content(g.Members, g.Metadata, personFormat)), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Behind the tool's back, bound as the intruder.
	before := time.Now().Add(-time.Second).Truncate(time.Second)
	conn, err := goldap.DialURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Bind(intruder, intruderPW); err != nil {
		t.Fatal(err)
	}
	ssh, rogue := "cn=ssh,"+base, "cn=rogue,"+base
	mod := goldap.NewModifyRequest(ssh, nil)
	mod.Delete("uniqueMember", []string{"uid=bob,ou=People," + srv.Suffix})
	if err := conn.Modify(mod); err != nil {
		t.Fatal(err)
	}
	add := goldap.NewAddRequest(rogue, nil)
	add.Attribute("objectClass", []string{"groupOfUniqueNames"})
	add.Attribute("cn", []string{"rogue"})
	add.Attribute("uniqueMember", []string{"uid=carol,ou=People," + srv.Suffix})
	if err := conn.Add(add); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Second)

	// drift: a fresh registry (nothing cached from the apply), the providers reading for real.
	ctx := context.Background()
	t.Chdir(dir)
	fresh := ldapprov.NewRegistry(ldapprov.Options{})
	defer fresh.Close()
	repo, err := calc.Load(ctx, "config.yaml", ldapcalc.Options(fresh, calc.Options{Types: backends.Types(), Now: now}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last, err := cache.LoadPredictive(state)
	if err != nil {
		t.Fatal(err)
	}
	f := func(ou *config.OU) (providers.Provider, error) { return fresh.Provider(ou) }
	rep, err := drift.Detect(ctx, repo, res, drift.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of"), LastApplied: last})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rep.Targets) != 1 || rep.Targets[0].Status != drift.Drifted || len(rep.Targets[0].Groups) != 2 {
		t.Fatalf("report: %+v", rep.Targets[0])
	}
	for _, g := range rep.Targets[0].Groups {
		var want string
		switch {
		case dn.Equal(g.DN, ssh):
			want = "changed + -bob"
		case dn.Equal(g.DN, rogue):
			want = "created +carol -"
		}
		if got := g.Kind.String() + " +" + strings.Join(g.Added, ",") + " -" + strings.Join(g.Removed, ","); got != want {
			t.Errorf("%s: %s, want %s", g.DN, got, want)
		}
		if !dn.Equal(g.Modified.By, intruder) {
			t.Errorf("%s: modified by %q, want the intruder %s", g.DN, g.Modified.By, intruder)
		}
		if at := g.Modified.At; at.Before(before) || at.After(after) || at.Location() != time.UTC {
			t.Errorf("%s: modified at %v, not between %v and %v (UTC)", g.DN, at, before, after)
		}
	}
	// The definitions, apart: bob back in ssh, the rogue group deleted.
	var pending []string
	for _, c := range rep.Plan.Targets[0].Changes {
		pending = append(pending, c.Kind.String()+" "+strings.Join(c.Add, ",")+strings.Join(c.Remove, ","))
	}
	slices.Sort(pending)
	if want := []string{"delete carol", "update bob"}; !slices.Equal(pending, want) {
		t.Errorf("pending changes %q, want %q", pending, want)
	}
}

// LastModified leaves out a group that does not exist and reads nothing for no group.
func TestLastModifiedMissingGroup(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{LDIF: "dn: cn=g,ou=Groups,dc=example,dc=net\nobjectClass: groupOfUniqueNames\ncn: g\nuniqueMember: cn=g,ou=Groups,dc=example,dc=net\n"})
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	cfg, err := config.ParseValue("ldap_uri: " + srv.URL + "\nldap_binddn: " + srv.BindDN + "\nldap_bindpw: " + srv.Password + "\n")
	if err != nil {
		t.Fatal(err)
	}
	p, err := reg.Provider(&config.OU{Key: "g", Type: "ldap", Base: "ou=Groups,dc=example,dc=net", Settings: cfg})
	if err != nil {
		t.Fatal(err)
	}
	mods, err := p.LastModified(t.Context(), nil, []string{"cn=g,ou=Groups,dc=example,dc=net", "cn=gone,ou=Groups,dc=example,dc=net"})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := mods[providers.Key("cn=g,ou=Groups,dc=example,dc=net")]
	if len(mods) != 1 || !ok || !dn.Equal(m.By, srv.BindDN) || m.At.IsZero() {
		t.Errorf("LastModified = %+v", mods)
	}
}
