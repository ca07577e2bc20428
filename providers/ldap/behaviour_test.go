package ldap_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// Black-box tests of the LDAP provider written from mutation testing (issue 15): they go
// through the public API (Registry, Provider, deploy) against a real slapd and check what the
// server holds, so they survive rewrites of the connection pool and the DN handling.

const bSuffix = "dc=example,dc=net"

// bConfig is a config with three OUs on srv: groupOfUniqueNames, PosixGroup and
// GroupOfNames, each created when missing. extra is appended to the backend (auth overrides).
func bConfig(uri, binddn, bindpw, teamsBase string) string {
	return fmt.Sprintf(`configuration_path: ./defs
backends:
  l:
    type: ldap
    ldap_uri: %s
    ldap_binddn: %s
    ldap_bindpw: %s
    person_dn_format: uid=%%KEY%%,ou=People,%s
groups:
  teams:
    backend: l
    base: %s
    create_if_missing: true
  posix:
    backend: l
    base: ou=Posix,ou=Groups,%[4]s
    create_if_missing: true
    plugin:
      file: posix_group.rb
      class: PosixGroup
  names:
    backend: l
    base: ou=Names,ou=Groups,%[4]s
    create_if_missing: true
    plugin:
      file: group_of_names.rb
      class: GroupOfNames
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`, uri, binddn, bindpw, bSuffix, teamsBase)
}

// bRepo writes a config repo and returns its directory.
func bRepo(t *testing.T, cfg string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"teams", "posix", "names"} {
		if err := os.MkdirAll(filepath.Join(dir, "defs", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	all := map[string]string{"config.yaml": cfg, "people.yaml": "alice: {cn: A}\nbob: {cn: B}\ncarol: {cn: C}\n"}
	for k, v := range files {
		all[k] = v
	}
	for p, c := range all {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func bCalc(t *testing.T, dir string) (*calc.Result, *config.Config) {
	t.Helper()
	r, err := calc.Load(context.Background(), filepath.Join(dir, "config.yaml"), calc.Options{Types: backends.Types(), Now: now, BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Calculate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, r.Config()
}

func bOptions(reg *ldapprov.Registry) deploy.Options {
	f := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
	return deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of")}
}

func bTarget(t *testing.T, plan *deploy.Plan, ou string) *deploy.TargetPlan {
	t.Helper()
	for _, tp := range plan.Targets {
		if tp.OU == ou {
			return tp
		}
	}
	t.Fatalf("no target %s", ou)
	return nil
}

var bDefs = map[string]string{
	"defs/teams/sre.txt":    "username = alice\nusername = bob\n",
	"defs/teams/none.txt":   "username = nobody_at_all\n",
	"defs/posix/ops.yaml":   "rules:\n  username: carol\nmetadata:\n  gid_number: 1234\n",
	"defs/posix/empty.yaml": "rules:\n  username: nobody_at_all\nmetadata:\n  gid_number: 1235\n",
	"defs/names/wiki.txt":   "username = carol\n",
}

func startB(t *testing.T) *testldap.Server {
	t.Helper()
	return testldap.Start(t, testldap.Options{Suffix: bSuffix})
}

// A write through the registry invalidates what it read: plan, apply, plan again with the same
// Registry (one long-running embedder) plans nothing.
func TestPlanApplyPlanSameRegistry(t *testing.T) {
	srv := startB(t)
	dir := bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), bDefs)
	res, cfg := bCalc(t, dir)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	opt := bOptions(reg)
	ctx := context.Background()
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	if tot := plan.Totals(); tot[providers.CreateContainer] != 3 || tot[providers.CreateGroup] != 5 {
		t.Fatalf("first plan: %v", tot)
	}
	if _, err := deploy.Apply(ctx, plan, opt.ApplyOptions()); err != nil {
		t.Fatal(err)
	}
	again, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil || again.Err() != nil {
		t.Fatal(err, again.Err())
	}
	if tot := again.Totals(); len(tot) != 0 {
		for _, tp := range again.Targets {
			for _, c := range tp.Changes {
				t.Logf("%s: %s", tp.OU, c.Describe())
			}
		}
		t.Fatalf("second plan with the same registry: %v", tot)
	}

	// Again with the containers in place (no Prepare): the group writes alone must invalidate
	// the base reads of this registry.
	changed := maps.Clone(bDefs)
	changed["defs/teams/sre.txt"] = "username = alice\nusername = bob\nusername = carol\n"
	res2, cfg2 := bCalc(t, bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), changed))
	plan2, err := deploy.Build(ctx, res2, cfg2, opt)
	if err != nil || plan2.Err() != nil {
		t.Fatal(err, plan2.Err())
	}
	if tot := plan2.Totals(); tot[providers.UpdateGroup] != 1 || len(tot) != 1 {
		t.Fatalf("plan after a change of sre: %v", tot)
	}
	if _, err := deploy.Apply(ctx, plan2, opt.ApplyOptions()); err != nil {
		t.Fatal(err)
	}
	if again, _ := deploy.Build(ctx, res2, cfg2, opt); len(again.Totals()) != 0 || again.Err() != nil {
		t.Fatalf("plan after applying the change of sre, same registry: %v %v", again.Totals(), again.Err())
	}

	// A change made by another writer after a run is seen by the next plan of a new registry.
	conn := srv.Dial(t)
	mod := goldap.NewModifyRequest("cn=sre,ou=Teams,ou=Groups,"+bSuffix, nil)
	mod.Replace("uniqueMember", []string{"uid=mallory,ou=People," + bSuffix})
	if err := conn.Modify(mod); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	reg2 := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg2.Close()
	third, err := deploy.Build(ctx, res2, cfg2, bOptions(reg2))
	if err != nil || third.Err() != nil {
		t.Fatal(err, third.Err())
	}
	teams := bTarget(t, third, "teams")
	if len(teams.Changes) != 1 || !slices.Equal(teams.Changes[0].Remove, []string{"mallory"}) {
		t.Fatalf("drift not planned: %+v", teams.Changes)
	}
}

// An empty posixGroup holds no memberUid (the schema allows it, and the group's own DN is not
// a uid); an empty groupOfUniqueNames / groupOfNames holds its own DN, which reads back as no
// member.
func TestEmptyGroupsOnTheServer(t *testing.T) {
	srv := startB(t)
	dir := bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), bDefs)
	res, cfg := bCalc(t, dir)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	opt := bOptions(reg)
	ctx := context.Background()
	plan, _ := deploy.Build(ctx, res, cfg, opt)
	if _, err := deploy.Apply(ctx, plan, opt.ApplyOptions()); err != nil {
		t.Fatal(err)
	}
	e := srv.Entry(t, "cn=empty,ou=Posix,ou=Groups,"+bSuffix)
	if e == nil {
		t.Fatal("empty posixGroup not created")
	}
	if v := e.GetAttributeValues("memberUid"); len(v) != 0 {
		t.Errorf("empty posixGroup holds memberUid %v", v)
	}
	if g := e.GetAttributeValue("gidNumber"); g != "1235" {
		t.Errorf("gidNumber %q", g)
	}
	if v := e.GetAttributeValues("owner"); len(v) != 0 {
		t.Errorf("posixGroup has an owner: %v", v)
	}
	none := srv.Entry(t, "cn=none,ou=Teams,ou=Groups,"+bSuffix)
	if v := none.GetAttributeValues("uniqueMember"); len(v) != 1 || !strings.EqualFold(v[0], none.DN) {
		t.Errorf("empty groupOfUniqueNames holds %v, want its own DN", v)
	}
	if o := none.GetAttributeValue("owner"); o != srv.BindDN {
		t.Errorf("owner %q, want the bind DN", o)
	}
	ops := srv.Entry(t, "cn=ops,ou=Posix,ou=Groups,"+bSuffix)
	if v := ops.GetAttributeValues("memberUid"); len(v) != 1 || !strings.HasPrefix(strings.ToLower(v[0]), "uid=carol,") {
		t.Errorf("posixGroup memberUid %v", v)
	}
	if v := srv.Entry(t, "cn=wiki,ou=Names,ou=Groups,"+bSuffix).GetAttributeValues("member"); len(v) != 1 ||
		!strings.HasPrefix(strings.ToLower(v[0]), "uid=carol,") {
		t.Errorf("groupOfNames member %v", v)
	}

	// Emptying a posixGroup removes every memberUid; emptying a groupOfUniqueNames leaves its DN.
	dir2 := bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), map[string]string{
		"defs/teams/sre.txt":    "username = nobody_at_all\n",
		"defs/teams/none.txt":   "username = nobody_at_all\n",
		"defs/posix/ops.yaml":   "rules:\n  username: nobody_at_all\nmetadata:\n  gid_number: 1234\n",
		"defs/posix/empty.yaml": "rules:\n  username: nobody_at_all\nmetadata:\n  gid_number: 1235\n",
		"defs/names/wiki.txt":   "username = carol\n",
	})
	res2, cfg2 := bCalc(t, dir2)
	opt.Force = true
	plan2, _ := deploy.Build(ctx, res2, cfg2, opt)
	if err := plan2.Err(); err != nil {
		t.Fatal(err)
	}
	if tot := plan2.Totals(); tot[providers.UpdateGroup] != 2 || len(tot) != 1 {
		t.Errorf("plan: %v", tot)
	}
	before := reg.Counters()["modifies"]
	if _, err := deploy.Apply(ctx, plan2, opt.ApplyOptions()); err != nil {
		t.Fatal(err)
	}
	if n := reg.Counters()["modifies"] - before; n != 2 {
		t.Errorf("%d modifies, want 2 (the empty groups are not written)", n)
	}
	if v := srv.Entry(t, "cn=ops,ou=Posix,ou=Groups,"+bSuffix).GetAttributeValues("memberUid"); len(v) != 0 {
		t.Errorf("emptied posixGroup holds %v", v)
	}
	sre := srv.Entry(t, "cn=sre,ou=Teams,ou=Groups,"+bSuffix)
	if v := sre.GetAttributeValues("uniqueMember"); len(v) != 1 || !strings.EqualFold(v[0], sre.DN) {
		t.Errorf("emptied groupOfUniqueNames holds %v", v)
	}
	third, _ := deploy.Build(ctx, res2, cfg2, opt)
	if tot := third.Totals(); len(tot) != 0 {
		t.Errorf("not converged: %v", tot)
	}
}

// A base search that fails for any reason other than "no such object" fails the read, with
// create_if_missing too: taking it for a missing container would plan every group as new and
// overwrite their members without the guard seeing a removal.
func TestFailedBaseSearchIsNotAMissingContainer(t *testing.T) {
	srv := startB(t)
	srv.Add(t, "dn: ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Teams\n\n"+
		"dn: cn=sre,ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: groupOfUniqueNames\ncn: sre\nuniqueMember: uid=dave,ou=People,"+bSuffix+"\n")
	for _, tc := range []struct {
		name                  string
		uri, binddn, pw, base string
	}{
		{name: "invalid DN syntax", uri: srv.URL, binddn: srv.BindDN, pw: srv.Password, base: "ou=Teams,,ou=Groups," + bSuffix},
		{name: "wrong password", uri: srv.URL, binddn: srv.BindDN, pw: "wrong", base: "ou=Teams,ou=Groups," + bSuffix},
		{name: "server down", uri: "ldap://127.0.0.1:1", binddn: srv.BindDN, pw: srv.Password, base: "ou=Teams,ou=Groups," + bSuffix},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := bRepo(t, bConfig(tc.uri, tc.binddn, tc.pw, tc.base), map[string]string{"defs/teams/sre.txt": "username = alice\n"})
			res, cfg := bCalc(t, dir)
			reg := ldapprov.NewRegistry(ldapprov.Options{})
			defer reg.Close()
			opt := bOptions(reg)
			plan, err := deploy.Build(context.Background(), res, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			teams := bTarget(t, plan, "teams")
			if teams.Err == nil {
				t.Fatalf("read succeeded; changes %v", teams.Changes)
			}
			for _, c := range teams.Changes {
				if c.Kind == providers.CreateContainer {
					t.Errorf("a failed read was taken for a missing container: %v", teams.Err)
				}
			}
			deploy.Apply(context.Background(), plan, opt.ApplyOptions())
			e := srv.Entry(t, "cn=sre,ou=Teams,ou=Groups,"+bSuffix)
			if v := e.GetAttributeValues("uniqueMember"); len(v) != 1 || !strings.HasPrefix(v[0], "uid=dave,") {
				t.Errorf("members overwritten: %v", v)
			}
		})
	}
	// The control: a base that does not exist is a missing container (created on apply).
	dir := bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=New,ou=Groups,"+bSuffix), map[string]string{"defs/teams/sre.txt": "username = alice\n"})
	res, cfg := bCalc(t, dir)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	plan, err := deploy.Build(context.Background(), res, cfg, bOptions(reg))
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	if c := bTarget(t, plan, "teams").Changes; len(c) != 2 || c[0].Kind != providers.CreateContainer {
		t.Errorf("missing base: %v", c)
	}
}

// Issue 23: a plugin block that cannot be used (here: no file) does not stop the calculation,
// as in the reference, which reads it only to write the OU's groups; the OU's plan fails,
// naming the problem, and the other OUs are planned.
func TestUnusablePluginFailsOnlyItsOU(t *testing.T) {
	srv := startB(t)
	cfg := strings.Replace(bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix),
		"      file: group_of_names.rb\n", "", 1)
	dir := bRepo(t, cfg, bDefs)
	res, c := bCalc(t, dir)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	plan, err := deploy.Build(context.Background(), res, c, bOptions(reg))
	if err != nil {
		t.Fatal(err)
	}
	if tp := bTarget(t, plan, "names"); tp.Err == nil || !strings.Contains(tp.Err.Error(), "OU names: plugin configuration hash must contain 'file' key") {
		t.Errorf("names: %v %v", tp.Err, tp.Changes)
	}
	for _, ou := range []string{"teams", "posix"} {
		if tp := bTarget(t, plan, ou); tp.Err != nil || len(tp.Changes) == 0 {
			t.Errorf("%s: %v %v", ou, tp.Err, tp.Changes)
		}
	}
}

// Without create_if_missing, a missing base fails the read.
func TestMissingBaseWithoutCreate(t *testing.T) {
	srv := startB(t)
	cfg := strings.Replace(bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix),
		"    create_if_missing: true\n", "", 1)
	dir := bRepo(t, cfg, map[string]string{"defs/teams/sre.txt": "username = alice\n"})
	res, c := bCalc(t, dir)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	plan, err := deploy.Build(context.Background(), res, c, bOptions(reg))
	if err != nil {
		t.Fatal(err)
	}
	if tp := bTarget(t, plan, "teams"); tp.Err == nil || !strings.Contains(tp.Err.Error(), "create_if_missing") {
		t.Errorf("teams: %v %v", tp.Err, tp.Changes)
	}
}

func TestGIDNumberRange(t *testing.T) {
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	dir := bRepo(t, bConfig("ldap://127.0.0.1:1", "cn=admin", "x", "ou=Teams,"+bSuffix), nil)
	c, _, err := config.Load(filepath.Join(dir, "config.yaml"), config.Options{Types: backends.Types(), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	p, err := reg.Provider(c.OU("posix"))
	if err != nil {
		t.Fatal(err)
	}
	target := &providers.Target{OU: c.OU("posix")}
	for _, tc := range []struct {
		gid  any
		want string // "" = refused
	}{
		{0, ""}, {1, "1"}, {65535, "65535"}, {65536, ""}, {-1, ""}, {"42", "42"}, {" 7 ", "7"}, {"x", ""}, {1.5, ""},
	} {
		g := &providers.Group{DN: "cn=g,ou=Posix", CN: "g", Metadata: map[string]any{"gid_number": tc.gid}}
		err := p.Desire(target, g)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "out of 1-65535 range") {
				t.Errorf("gid_number %v: %v, want refused", tc.gid, err)
			}
			continue
		}
		if err != nil || !slices.Equal(g.Attrs["gidnumber"], []string{tc.want}) || !slices.Equal(g.Attrs["objectclass"], []string{"posixGroup"}) {
			t.Errorf("gid_number %v: %v %v", tc.gid, err, g.Attrs)
		}
	}
	if err := p.Desire(target, &providers.Group{DN: "cn=g,ou=Posix"}); err == nil || !strings.Contains(err.Error(), "no metadata setting for gid_number") {
		t.Errorf("missing gid_number: %v", err)
	}
	// The other classes need no gid_number.
	for ou, class := range map[string]string{"teams": "groupOfUniqueNames", "names": "groupOfNames"} {
		p, _ := reg.Provider(c.OU(ou))
		g := &providers.Group{DN: "cn=g"}
		if err := p.Desire(&providers.Target{OU: c.OU(ou)}, g); err != nil || !slices.Equal(g.Attrs["objectclass"], []string{class}) || len(g.Attrs) != 1 {
			t.Errorf("%s: %v %v", ou, err, g.Attrs)
		}
	}
}

// Person DNs escape the DN specials of a uid (`,` `+` `=` ...) and read back as the same uid.
func TestPersonDNEscapingRoundTrips(t *testing.T) {
	srv := startB(t)
	srv.Add(t, "dn: ou=Teams,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Teams\n")
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	dir := bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), nil)
	c, _, err := config.Load(filepath.Join(dir, "config.yaml"), config.Options{Types: backends.Types(), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ou := c.OU("teams")
	p, err := reg.Provider(ou)
	if err != nil {
		t.Fatal(err)
	}
	target := &providers.Target{OU: ou}
	uids := []string{"o,brien", "x+y", "a=b", "semi;colon", `back\slash`, `quo"te`, "<angle>", "#hash", " lead", "plain"}
	g := &providers.Group{DN: "cn=odd,ou=Teams,ou=Groups," + bSuffix, CN: "odd", Description: "odd", Members: uids}
	if err := p.Desire(target, g); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := p.Read(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	changes := providers.Diff("teams", []*providers.Group{g}, st, providers.DiffOptions{DeleteGroups: true})
	for _, o := range p.Apply(ctx, target, changes) {
		if o.Status != providers.Applied {
			t.Fatalf("%s: %s %v", o.Change, o.Status, o.Err)
		}
	}
	// On the server: each value is a DN of four RDNs whose first is uid=<the uid>.
	e := srv.Entry(t, g.DN)
	var got []string
	for _, v := range e.GetAttributeValues("uniqueMember") {
		d, err := goldap.ParseDN(v)
		if err != nil {
			t.Errorf("member %q is not a DN: %v", v, err)
			continue
		}
		if len(d.RDNs) != 4 || len(d.RDNs[0].Attributes) != 1 || !strings.EqualFold(d.RDNs[0].Attributes[0].Type, "uid") {
			t.Errorf("member %q: RDNs %d", v, len(d.RDNs))
			continue
		}
		got = append(got, d.RDNs[0].Attributes[0].Value)
	}
	want := slices.Clone(uids)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("uids on the server %q, want %q", got, want)
	}
	// Read back: the same uids, so a second plan is empty.
	reg2 := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg2.Close()
	p2, _ := reg2.Provider(ou)
	st2, err := p2.Read(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if rg := st2.Groups[providers.Key(g.DN)]; rg == nil || !slices.Equal(rg.Members, want) {
		t.Fatalf("read back %+v, want members %q", rg, want)
	}
	if ch := providers.Diff("teams", []*providers.Group{g}, st2, providers.DiffOptions{DeleteGroups: true}); len(ch) != 0 {
		t.Errorf("second diff: %v", ch)
	}
}

// A group created by someone else between the read and the write: the add collides, and the
// provider makes the existing entry right (members, description, gidNumber), not half right.
func TestCreateCollisionMakesTheEntryRight(t *testing.T) {
	srv := startB(t)
	srv.Add(t, "dn: ou=Posix,ou=Groups,"+bSuffix+"\nobjectClass: organizationalUnit\nou: Posix\n\n"+
		"dn: cn=ops,ou=Posix,ou=Groups,"+bSuffix+"\nobjectClass: posixGroup\ncn: ops\ngidNumber: 1\ndescription: old\nmemberUid: uid=dave,ou=People,"+bSuffix+"\n")
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	dir := bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), nil)
	c, _, err := config.Load(filepath.Join(dir, "config.yaml"), config.Options{Types: backends.Types(), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ou := c.OU("posix")
	p, err := reg.Provider(ou)
	if err != nil {
		t.Fatal(err)
	}
	target := &providers.Target{OU: ou}
	g := &providers.Group{DN: "cn=ops,ou=Posix,ou=Groups," + bSuffix, CN: "ops", Description: "new", Members: []string{"alice"},
		Metadata: map[string]any{"gid_number": 1234}}
	if err := p.Desire(target, g); err != nil {
		t.Fatal(err)
	}
	out := p.Apply(context.Background(), target, []*providers.Change{{Kind: providers.CreateGroup, OU: "posix", DN: g.DN, Desired: g, Add: g.Members}})
	if out[0].Status != providers.Applied {
		t.Fatalf("%s %v", out[0].Status, out[0].Err)
	}
	e := srv.Entry(t, g.DN)
	if v := e.GetAttributeValues("memberUid"); len(v) != 1 || !strings.HasPrefix(strings.ToLower(v[0]), "uid=alice,") {
		t.Errorf("memberUid %v", v)
	}
	if d, n := e.GetAttributeValue("description"), e.GetAttributeValue("gidNumber"); d != "new" || n != "1234" {
		t.Errorf("description %q gidNumber %q", d, n)
	}
}

// Entries of a managed OU that are no group of the classes it reads (an AD group, a role)
// used to fail the whole OU ("Do not know how to handle objectClass"). Each is reported once
// and left alone: not read, not deleted, and a group defined at its DN is not written over it.
func TestForeignEntriesLeftAlone(t *testing.T) {
	srv := startB(t)
	srv.Add(t, `dn: ou=Teams,ou=Groups,dc=example,dc=net
objectClass: organizationalUnit
ou: Teams

dn: cn=reception,ou=Teams,ou=Groups,dc=example,dc=net
objectClass: organizationalRole
cn: reception
description: front desk

dn: cn=printers,ou=Teams,ou=Groups,dc=example,dc=net
objectClass: organizationalRole
cn: printers
`)
	dir := bRepo(t, bConfig(srv.URL, srv.BindDN, srv.Password, "ou=Teams,ou=Groups,"+bSuffix), map[string]string{
		"defs/teams/sre.txt":       "username = alice\n",
		"defs/teams/reception.txt": "username = bob\n",
	})
	res, cfg := bCalc(t, dir)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	var teams *ldapprov.Provider
	opt := deploy.Options{Backends: backends.Spec().WithFactory(func(ou *config.OU) (providers.Provider, error) {
		p, err := reg.Provider(ou)
		if ou.Key == "teams" {
			teams = p
		}
		return p, err
	}, "ldap", "member_of")}
	ctx := context.Background()
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	tp := bTarget(t, plan, "teams")
	if tp.Err != nil {
		t.Fatalf("teams: %v", tp.Err)
	}
	var kinds []string
	for _, c := range tp.Changes {
		kinds = append(kinds, c.Kind.String()+" "+c.DN)
	}
	if want := []string{"create cn=reception,ou=Teams,ou=Groups,dc=example,dc=net", "create cn=sre,ou=Teams,ou=Groups,dc=example,dc=net"}; !slices.Equal(kinds, want) {
		t.Errorf("teams plans %q, want %q (no delete of the foreign entries)", kinds, want)
	}
	rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
	var failed []string
	for _, tr := range rep.Targets {
		for _, o := range tr.Outcomes {
			if o.Err != nil {
				failed = append(failed, o.Err.Error())
			}
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "cn=reception,ou=Teams,ou=Groups,dc=example,dc=net is an entry this OU does not manage (objectClass: organizationalRole); left alone") {
		t.Errorf("apply failures %q", failed)
	}
	if e := srv.Entry(t, "cn=reception,ou=Teams,ou=Groups,"+bSuffix); e == nil || e.GetAttributeValue("description") != "front desk" || len(e.GetAttributeValues("uniqueMember")) != 0 {
		t.Errorf("the foreign entry was written: %v", e)
	}
	warnings := teams.Warnings()
	want := []string{
		"cn=printers,ou=Teams,ou=Groups,dc=example,dc=net is not a groupOfUniqueNames (objectClass: organizationalRole); left alone",
		"cn=reception,ou=Teams,ou=Groups,dc=example,dc=net is not a groupOfUniqueNames (objectClass: organizationalRole); left alone",
	}
	slices.Sort(warnings)
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings %q, want %q", warnings, want)
	}
}
