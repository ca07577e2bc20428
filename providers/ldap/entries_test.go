package ldap_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// Cases written from the mutation run of providers/ldap (issue 15, see MUTANTS.md): each one
// fails under a small deliberate bug that the other tests let through.

// bProvider loads cfg (a bConfig, possibly edited) and returns the provider and target of ou.
func bProvider(t *testing.T, reg *ldapprov.Registry, cfg, ou string) (*ldapprov.Provider, *providers.Target) {
	t.Helper()
	dir := bRepo(t, cfg, nil)
	c, _, err := config.Load(filepath.Join(dir, "config.yaml"), config.Options{Types: backends.Types(), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p, err := reg.Provider(c.OU(ou))
	if err != nil {
		t.Fatal(err)
	}
	return p, &providers.Target{OU: c.OU(ou)}
}

// A person_dn_format whose first RDN is multi-valued with %KEY% second: members read back as
// the value of the %KEY% attribute, not the first value of the RDN, so a written group reads
// back unchanged.
func TestMultiValuedPersonRDN(t *testing.T) {
	srv := startB(t)
	srv.Add(t, "dn: ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Teams\n")
	cfg := strings.Replace(bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix),
		"person_dn_format: uid=%KEY%,", "person_dn_format: cn=Staff+uid=%KEY%,", 1)
	if !strings.Contains(cfg, "cn=Staff+uid=%KEY%,ou=People") {
		t.Fatal("format not replaced")
	}
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	p, target := bProvider(t, reg, cfg, "teams")
	g := &providers.Group{DN: "cn=sre,ou=Teams,ou=Groups," + bSuffix, CN: "sre", Description: "sre", Members: []string{"alice", "bob"}}
	if err := p.Desire(target, g); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out := p.Apply(ctx, target, []*providers.Change{{Kind: providers.CreateGroup, OU: "teams", DN: g.DN, Desired: g, Add: g.Members}})
	if out[0].Status != providers.Applied {
		t.Fatalf("%s %v", out[0].Status, out[0].Err)
	}
	if v := srv.Entry(t, g.DN).GetAttributeValues("uniqueMember"); len(v) != 2 || !strings.HasPrefix(v[0], "cn=Staff+uid=") {
		t.Fatalf("uniqueMember on the server: %q", v)
	}
	reg2 := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg2.Close()
	p2, _ := bProvider(t, reg2, cfg, "teams")
	st, err := p2.Read(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	rg := st.Groups[providers.Key(g.DN)]
	if rg == nil || !slices.Equal(rg.Members, []string{"alice", "bob"}) {
		t.Fatalf("read back %+v, want members alice, bob", rg)
	}
	if ch := providers.Diff("teams", []*providers.Group{g}, st, providers.DiffOptions{}); len(ch) != 0 {
		t.Errorf("second diff: %v", ch)
	}
}

// Read reports the attributes an entry has: a group without gidNumber has no "gidnumber" in
// its Attrs (the state fingerprint of a saved plan hashes the attribute names).
func TestReadAttrsAreTheEntrys(t *testing.T) {
	srv := startB(t)
	srv.Add(t, "dn: ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Teams\n\n"+
		"dn: cn=sre,ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: groupOfUniqueNames\ncn: sre\nuniqueMember: uid=dave,ou=People,"+bSuffix+"\n\n"+
		"dn: ou=Posix,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Posix\n\n"+
		"dn: cn=ops,ou=Posix,ou=Groups,"+bSuffix+"\nobjectClass: posixGroup\ncn: ops\ngidNumber: 77\n")
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	cfg := bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix)
	for _, tc := range []struct {
		ou, dn string
		want   map[string][]string
	}{
		{"teams", "cn=sre,ou=Teams,ou=Groups," + bSuffix, map[string][]string{"objectclass": {"groupOfUniqueNames"}}},
		{"posix", "cn=ops,ou=Posix,ou=Groups," + bSuffix, map[string][]string{"objectclass": {"posixGroup"}, "gidnumber": {"77"}}},
	} {
		p, target := bProvider(t, reg, cfg, tc.ou)
		st, err := p.Read(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		g := st.Groups[providers.Key(tc.dn)]
		if g == nil {
			t.Fatalf("%s: %s not read", tc.ou, tc.dn)
		}
		if len(g.Attrs) != len(tc.want) {
			t.Errorf("%s: Attrs %v, want %v", tc.ou, g.Attrs, tc.want)
		}
		for k, v := range tc.want {
			if got, ok := g.Attrs[k]; !ok || !slices.Equal(got, v) {
				t.Errorf("%s: Attrs[%s] = %v, want %v", tc.ou, k, got, v)
			}
		}
	}
}

// A missing base whose parent is the (missing) entry of a naming context: the parent OUs
// Prepare creates stop below the top of the tree, which is not ours to invent (nor is a
// missing dc= or o= ancestor).
func TestPrepareDoesNotCreateATopLevelEntry(t *testing.T) {
	const suffix = "ou=Corp"
	srv := testldap.Start(t, testldap.Options{Suffix: suffix})
	conn := srv.Dial(t)
	entries := srv.Search(t, suffix, "(objectClass=*)", "1.1")
	// Children before parents: the longer DN first.
	slices.SortFunc(entries, func(a, b *goldap.Entry) int { return len(b.DN) - len(a.DN) })
	for _, e := range entries {
		if err := conn.Del(goldap.NewDelRequest(e.DN, nil)); err != nil {
			t.Fatalf("deleting %s: %v", e.DN, err)
		}
	}
	conn.Close()
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	cfg := strings.ReplaceAll(bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,"+suffix), ","+bSuffix, ","+suffix)
	p, target := bProvider(t, reg, cfg, "teams")
	err := p.Prepare(context.Background(), target)
	if err == nil || !strings.Contains(err.Error(), "creating ou=Teams,ou=Corp") {
		t.Errorf("Prepare under a missing top-level entry: %v, want the base refused", err)
	}
	if e := srv.Entry(t, suffix); e != nil {
		t.Errorf("the top-level entry %s was created", e.DN)
	}
}

// The provider remembers which bases exist (to create each once); deleting an entry makes it
// forget that one. Here a group of one OU is the base of another: after the group is deleted,
// the other OU's Prepare creates its base again instead of trusting the memo.
func TestDeletedEntryIsForgotten(t *testing.T) {
	srv := startB(t)
	inner := "ou=Inner,ou=Teams,ou=Groups," + bSuffix
	srv.Add(t, "dn: ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Teams\n\n"+
		"dn: "+inner+"\nobjectClass: groupOfUniqueNames\nobjectClass: extensibleObject\nou: Inner\ncn: Inner\nuniqueMember: "+inner+"\n")
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	ctx := context.Background()
	outer, outerT := bProvider(t, reg, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), "teams")
	in, inT := bProvider(t, reg, bConfig(srv.URL, srv.BindDN, srv.Password, inner), "teams")
	if st, err := in.Read(ctx, inT); err != nil || st.ContainerMissing {
		t.Fatalf("inner base: %v %+v", err, st)
	}
	out := outer.Apply(ctx, outerT, []*providers.Change{{Kind: providers.DeleteGroup, OU: "teams", DN: inner}})
	if out[0].Status != providers.Applied {
		t.Fatalf("delete: %s %v", out[0].Status, out[0].Err)
	}
	if srv.Entry(t, inner) != nil {
		t.Fatal("not deleted")
	}
	if err := in.Prepare(ctx, inT); err != nil {
		t.Fatal(err)
	}
	if srv.Entry(t, inner) == nil {
		t.Error("Prepare trusted the memo of a deleted entry: the base was not created")
	}
}

// A create that collides with an existing entry makes it right, for an empty posixGroup too:
// the memberUid values it holds are removed. Attributes the OU does not manage (gidNumber
// of a groupOfUniqueNames) are left as they are.
func TestCreateCollisionEdges(t *testing.T) {
	srv := startB(t)
	srv.Add(t, "dn: ou=Posix,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Posix\n\n"+
		"dn: cn=ops,ou=Posix,ou=Groups,"+bSuffix+"\nobjectClass: posixGroup\ncn: ops\ngidNumber: 1234\ndescription: ops\nmemberUid: uid=dave,ou=People,"+bSuffix+"\n\n"+
		"dn: ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Teams\n\n"+
		"dn: cn=sre,ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: groupOfUniqueNames\nobjectClass: extensibleObject\ncn: sre\ngidNumber: 500\ndescription: old\nuniqueMember: uid=dave,ou=People,"+bSuffix+"\n")
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	cfg := bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix)
	ctx := context.Background()
	create := func(ou string, g *providers.Group) {
		t.Helper()
		p, target := bProvider(t, reg, cfg, ou)
		if err := p.Desire(target, g); err != nil {
			t.Fatal(err)
		}
		out := p.Apply(ctx, target, []*providers.Change{{Kind: providers.CreateGroup, OU: ou, DN: g.DN, Desired: g, Add: g.Members}})
		if out[0].Status != providers.Applied {
			t.Fatalf("%s: %s %v", g.DN, out[0].Status, out[0].Err)
		}
	}
	ops := &providers.Group{DN: "cn=ops,ou=Posix,ou=Groups," + bSuffix, CN: "ops", Description: "ops", Metadata: map[string]any{"gid_number": 1234}}
	create("posix", ops)
	if v := srv.Entry(t, ops.DN).GetAttributeValues("memberUid"); len(v) != 0 {
		t.Errorf("empty posixGroup after the collision holds %v", v)
	}
	sre := &providers.Group{DN: "cn=sre,ou=Teams,ou=Groups," + bSuffix, CN: "sre", Description: "new", Members: []string{"alice"}}
	create("teams", sre)
	e := srv.Entry(t, sre.DN)
	if v := e.GetAttributeValues("uniqueMember"); len(v) != 1 || !strings.HasPrefix(v[0], "uid=alice,") {
		t.Errorf("uniqueMember %v", v)
	}
	if d, n := e.GetAttributeValue("description"), e.GetAttributeValue("gidNumber"); d != "new" || n != "500" {
		t.Errorf("description %q gidNumber %q, want new and the unmanaged 500 kept", d, n)
	}
}

// member_of: a person left with no value loses the attribute; one who holds none already is
// AlreadyInState; new values replace the old ones.
func TestWritePeople(t *testing.T) {
	srv := startB(t)
	g1, g2 := "cn=a,ou=Groups,"+bSuffix, "cn=b,ou=Groups,"+bSuffix
	person := func(uid, extra string) string {
		return "dn: uid=" + uid + ",ou=People," + bSuffix + "\nobjectClass: inetOrgPerson\nobjectClass: entitlementsPerson\nuid: " + uid +
			"\ncn: " + uid + "\nsn: " + uid + "\n" + extra
	}
	srv.Add(t, person("alice", "shellentitlements: "+g1+"\n")+"\n"+person("bob", "")+"\n"+person("carol", "shellentitlements: "+g1+"\n"))
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	p, target := bProvider(t, reg, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), "teams")
	ch := func(uid string, vals ...string) *providers.Change {
		return &providers.Change{Kind: providers.UpdatePerson, OU: "teams", Person: uid, Attribute: "shellentitlements", Values: vals}
	}
	out := p.WritePeople(context.Background(), target, []*providers.Change{ch("alice"), ch("bob"), ch("carol", g2)})
	want := []providers.Status{providers.Applied, providers.AlreadyInState, providers.Applied}
	for i, o := range out {
		if o.Status != want[i] || o.Err != nil {
			t.Errorf("%s: %s %v, want %s", o.Change.Person, o.Status, o.Err, want[i])
		}
	}
	for uid, want := range map[string][]string{"alice": nil, "bob": nil, "carol": {g2}} {
		if v := srv.Entry(t, "uid="+uid+",ou=People,"+bSuffix).GetAttributeValues("shellentitlements"); !slices.Equal(v, want) {
			t.Errorf("%s holds %v, want %v", uid, v, want)
		}
	}
}

// uid_attribute chooses the attribute of the people search and the RDN whose value is the
// uid: people named by cn (and without a uid attribute) are read as their cn.
func TestPeopleUIDAttribute(t *testing.T) {
	srv := startB(t)
	var ldif strings.Builder
	for _, cn := range []string{"carl", "dora"} {
		ldif.WriteString("dn: cn=" + cn + ",ou=People," + bSuffix + "\nobjectClass: person\ncn: " + cn + "\nsn: " + cn + "\n\n")
	}
	ldif.WriteString("dn: uid=erin,ou=People," + bSuffix + "\nobjectClass: inetOrgPerson\nuid: erin\ncn: Erin\nsn: E\n")
	srv.Add(t, ldif.String())
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	for _, tc := range []struct {
		attr string
		want []string
	}{
		// erin's RDN is not a cn: the uid is then the RDN's value.
		{"      uid_attribute: cn\n", []string{"carl", "dora", "erin"}},
		{"", []string{"erin"}},
	} {
		cfg := strings.Replace(bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix),
			"people:\n  y:\n    type: yaml\n    config: {filename: people.yaml}\npeople_data_source: y\n",
			"people:\n  l:\n    type: ldap\n    config:\n      base: ou=People,"+bSuffix+"\n      ldap_uri: "+srv.URL+"\n      ldap_binddn: "+srv.BindDN+
				"\n      ldap_bindpw: "+srv.Password+"\n"+tc.attr+"people_data_source: l\n", 1)
		dir := bRepo(t, cfg, nil)
		c, _, err := config.Load(filepath.Join(dir, "config.yaml"), config.Options{Types: backends.Types(), BaseDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		ppl, err := reg.PeopleLoader()(context.Background(), c.People["l"])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ppl {
			got = append(got, p.UID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("uid_attribute %q: people %q, want %q", tc.attr, got, tc.want)
		}
	}
}

// The group reader answers a group under a base this registry has read from that read (the
// state before this run's changes, as in the reference), and reads other groups from the
// server.
func TestGroupReaderUsesTheBaseRead(t *testing.T) {
	srv := startB(t)
	sre, staff := "cn=sre,ou=Teams,ou=Groups,"+bSuffix, "cn=staff,ou=Groups,"+bSuffix
	srv.Add(t, "dn: ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Teams\n\n"+
		"dn: "+sre+"\nobjectClass: groupOfUniqueNames\ncn: sre\nuniqueMember: uid=dave,ou=People,"+bSuffix+"\n\n"+
		"dn: "+staff+"\nobjectClass: groupOfUniqueNames\ncn: staff\nuniqueMember: uid=dave,ou=People,"+bSuffix+"\n")
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	cfg := bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix)
	p, target := bProvider(t, reg, cfg, "teams")
	ctx := context.Background()
	if _, err := p.Read(ctx, target); err != nil {
		t.Fatal(err)
	}
	conn := srv.Dial(t)
	for _, d := range []string{sre, staff} {
		mod := goldap.NewModifyRequest(d, nil)
		mod.Add("uniqueMember", []string{"uid=alice,ou=People," + bSuffix})
		if err := conn.Modify(mod); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	got, err := reg.GroupReader(target.OU.Settings).ReadGroups(ctx, []string{sre, staff, "cn=nope,ou=Teams,ou=Groups," + bSuffix})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("groups %v, want sre and staff", got)
	}
	if m := got[sre]["uniquemember"]; len(m) != 1 {
		t.Errorf("sre (under a base read before the change): members %v, want dave only", m)
	}
	if m := got[staff]["uniquemember"]; len(m) != 2 {
		t.Errorf("staff (read from the server): members %v, want dave and alice", m)
	}
}

// The TLS-verification flag of the config, in both spellings, turns certificate checks
// off; without it, a server whose CA is not trusted is refused.
func TestDisableSSLVerificationFlag(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{Suffix: bSuffix, TLS: true})
	noEnv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		flag string
		ok   bool
	}{
		{"", false},
		{"    disable_ssl_verification: true\n", true},
		{"    ldap_disable_ssl_verification: true\n", true},
		{"    ldap_disable_ssl_verification: false\n", false},
	} {
		cfg := strings.Replace(bConfig(srv.TLSURL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix),
			"    person_dn_format:", tc.flag+"    person_dn_format:", 1)
		reg := ldapprov.NewRegistry(ldapprov.Options{Getenv: noEnv})
		p, target := bProvider(t, reg, cfg, "teams")
		_, err := p.Read(context.Background(), target)
		reg.Close()
		if tc.ok && err != nil {
			t.Errorf("%q: %v", tc.flag, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "certificate")) {
			t.Errorf("%q: %v, want a certificate error", tc.flag, err)
		}
	}
}
