package ldap_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// The provider against a real 389 Directory Server (internal/testldap.StartDS), bound as an
// ordinary service account: 389's limits do not apply to its root DN, and production runs do
// not bind as it.

const (
	dsSizeLimit = 200 // nsslapd-sizelimit of the test server (389's default is 2000)
	dsPageSize  = 100 // the provider's page: at most the size limit, or 389 refuses the page
	dsBigOU     = 250 // groups in one OU: more than the size limit
)

// startDS starts 389 with a service account that may write anywhere under the suffix.
func startDS(t *testing.T) (srv *testldap.Server, bindDN, bindPW string) {
	t.Helper()
	srv = testldap.StartDS(t, testldap.DSOptions{SizeLimit: dsSizeLimit})
	bindDN, bindPW = "uid=entitlements,ou=People,"+srv.Suffix, "entitlements-password"
	srv.Add(t, fmt.Sprintf("dn: %s\nobjectClass: account\nobjectClass: simpleSecurityObject\nuid: entitlements\nuserPassword: %s\n", bindDN, bindPW))
	aci := goldap.NewModifyRequest(srv.Suffix, nil)
	aci.Add("aci", []string{fmt.Sprintf(`(targetattr="*")(version 3.0; acl "entitlements"; allow (all) userdn="ldap:///%s";)`, bindDN)})
	if err := srv.Dial(t).Modify(aci); err != nil {
		t.Fatal(err)
	}
	return srv, bindDN, bindPW
}

// dsEscapedOU needs escaping in a DN (a comma and a plus sign in the value).
const dsEscapedOU = `ou=R&D\, Ops \+ QA,ou=Groups,dc=example,dc=net`

// dsRepo is the scenario's repo: an OU of more groups than the size limit, a nested OU whose
// parent is missing too, a groupOfNames OU whose name needs escaping, all created when
// missing; groups with the special uids and empty groups. change gives the second state.
func dsRepo(t *testing.T, srv *testldap.Server, bindDN, bindPW string, change bool) string {
	t.Helper()
	var cfg, ppl strings.Builder
	fmt.Fprintf(&cfg, `configuration_path: ./defs
backends:
  ds:
    type: ldap
    ldap_uri: %s
    ldap_binddn: %s
    ldap_bindpw: %s
    person_dn_format: uid=%%KEY%%,ou=People,%s
groups:
  big:
    backend: ds
    base: ou=Big,ou=Groups,%[4]s
    create_if_missing: true
  nested:
    backend: ds
    base: ou=Deep,ou=Nested,ou=Groups,%[4]s
    create_if_missing: true
  escaped:
    backend: ds
    base: %s
    create_if_missing: true
    plugin: {file: group_of_names.rb, class: GroupOfNames}
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`, srv.URL, bindDN, bindPW, srv.Suffix, yamlQuote(dsEscapedOU))
	ppl.WriteString("---\n")
	for i := range dsBigOU + 1 {
		fmt.Fprintf(&ppl, "u%03d: {cn: u%03d}\n", i, i)
	}
	for _, u := range specialUIDs {
		fmt.Fprintf(&ppl, "%s: {cn: x}\n", yamlQuote(u))
	}
	files := map[string]string{"config.yaml": cfg.String(), "people.yaml": ppl.String()}
	for i := range dsBigOU {
		files[fmt.Sprintf("defs/big/g%03d.txt", i)] = fmt.Sprintf("username = u%03d\n", i)
	}
	special := slices.Clone(specialUIDs)
	files["defs/nested/empty.txt"] = "username = nobody_at_all\n"
	files["defs/escaped/wiki.txt"] = "username = u001\nusername = u002\n"
	files["defs/escaped/empty.txt"] = "username = nobody_at_all\n"
	if change {
		files["defs/big/g000.txt"] = "username = u250\nusername = u001\n"
		delete(files, "defs/big/g001.txt")
		files[fmt.Sprintf("defs/big/g%03d.txt", dsBigOU)] = "username = u250\n"
		special = special[1:]
		files["defs/nested/empty.txt"] = "username = u003\n"
		files["defs/escaped/wiki.txt"] = "username = nobody_at_all\n"
	}
	var rules strings.Builder
	rules.WriteString("---\ndescription: special\nrules:\n  or:\n")
	for _, u := range special {
		fmt.Fprintf(&rules, "    - username: %s\n", yamlQuote(u))
	}
	files["defs/nested/special.yaml"] = rules.String()
	return writeFiles(t, files)
}

// planChanges lists every change of a plan, failing the test on a plan error.
func planChanges(t *testing.T, r run) []string {
	t.Helper()
	if err := r.plan.Err(); err != nil {
		t.Fatalf("plan: %v", err)
	}
	var out []string
	for _, tp := range r.plan.Targets {
		for _, c := range tp.Changes {
			out = append(out, tp.OU+": "+c.Describe())
		}
	}
	return out
}

// TestDS389 runs apply, a no-op plan, a change set and a re-plan against 389.
func TestDS389(t *testing.T) {
	srv, bindDN, bindPW := startDS(t)
	opt := deploy.Options{Guard: scenarioGuard()}
	newReg := func() *ldapprov.Registry {
		r := ldapprov.NewRegistry(ldapprov.Options{PageSize: dsPageSize})
		t.Cleanup(r.Close)
		return r
	}

	first := deployWith(t, newReg(), dsRepo(t, srv, bindDN, bindPW, false), true, opt)
	mustApply(t, first)
	tot := first.plan.Totals()
	// 389 answers a paged search of a missing base with success and no entries: each missing
	// base must still be found missing, or nothing is created and every add fails.
	if tot[providers.CreateContainer] != 3 || tot[providers.CreateGroup] != dsBigOU+4 {
		t.Fatalf("first run: %v, want 3 containers and %d groups", tot, dsBigOU+4)
	}
	for _, d := range []string{"ou=Big,ou=Groups,", "ou=Nested,ou=Groups,", "ou=Deep,ou=Nested,ou=Groups,"} {
		if srv.Entry(t, d+srv.Suffix) == nil {
			t.Errorf("%s was not created", d+srv.Suffix)
		}
	}
	if e := srv.Entry(t, dsEscapedOU); e == nil || e.GetAttributeValue("ou") != "R&D, Ops + QA" {
		t.Errorf("escaped OU: %v", e)
	}
	checkDSGroup(t, srv, "cn=special,ou=Deep,ou=Nested,ou=Groups,"+srv.Suffix, specialUIDs)
	checkDSGroup(t, srv, "cn=empty,ou=Deep,ou=Nested,ou=Groups,"+srv.Suffix, nil)
	checkDSGroup(t, srv, "cn=empty,"+dsEscapedOU, nil)
	checkDSGroup(t, srv, "cn=g249,ou=Big,ou=Groups,"+srv.Suffix, []string{"u249"})

	// A fresh registry plans nothing, writes nothing, and reads each base once (three pages
	// of the big OU, one of each other): none is empty, so none needs the confirming lookup.
	again := deployWith(t, newReg(), dsRepo(t, srv, bindDN, bindPW, false), false, opt)
	if c := planChanges(t, again); len(c) != 0 {
		t.Fatalf("plan after apply: %q", c)
	}
	if w, s := writes(again.counters), again.counters["searches"]; w != 0 || s != (dsBigOU+dsPageSize-1)/dsPageSize+2 {
		t.Errorf("no-op plan: %d writes and %d searches, want 0 and %d", w, s, (dsBigOU+dsPageSize-1)/dsPageSize+2)
	}

	reg := newReg()
	second := deployWith(t, reg, dsRepo(t, srv, bindDN, bindPW, true), true, opt)
	mustApply(t, second)
	tot = second.plan.Totals()
	if tot[providers.CreateGroup] != 1 || tot[providers.DeleteGroup] != 1 || tot[providers.UpdateGroup] != 4 {
		t.Errorf("change set: %v, want 1 create, 1 delete, 4 updates", tot)
	}
	checkDSGroup(t, srv, "cn=g000,ou=Big,ou=Groups,"+srv.Suffix, []string{"u001", "u250"})
	checkDSGroup(t, srv, "cn=empty,ou=Deep,ou=Nested,ou=Groups,"+srv.Suffix, []string{"u003"})
	checkDSGroup(t, srv, "cn=wiki,"+dsEscapedOU, nil)
	checkDSGroup(t, srv, "cn=special,ou=Deep,ou=Nested,ou=Groups,"+srv.Suffix, specialUIDs[1:])
	if srv.Entry(t, "cn=g001,ou=Big,ou=Groups,"+srv.Suffix) != nil {
		t.Error("g001 was not deleted")
	}
	for _, r := range []*ldapprov.Registry{reg, newReg()} {
		if c := planChanges(t, deployWith(t, r, dsRepo(t, srv, bindDN, bindPW, true), false, opt)); len(c) != 0 {
			t.Errorf("re-plan after the change set: %q", c)
		}
	}
}

// TestDS389EmptyBase: an OU that exists but holds no group is not missing, although 389
// answers its paged read as it answers that of a missing base. The lookup that tells them
// apart is made once per base and registry: a base known to exist (read with entries, or
// created) is not looked up again when a later read finds it empty.
func TestDS389EmptyBase(t *testing.T) {
	srv, bindDN, bindPW := startDS(t)
	srv.Add(t, "dn: ou=Empty,ou=Groups,"+srv.Suffix+"\nobjectClass: organizationalUnit\nou: Empty\n")
	dir := writeFiles(t, map[string]string{
		"config.yaml": fmt.Sprintf(`configuration_path: ./defs
groups:
  empty:
    type: ldap
    ldap_uri: %s
    ldap_binddn: %s
    ldap_bindpw: %s
    person_dn_format: uid=%%KEY%%,ou=People,%s
    base: ou=Empty,ou=Groups,%[4]s
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`, srv.URL, bindDN, bindPW, srv.Suffix),
		"people.yaml":         "alice: {cn: A}\n",
		"defs/empty/solo.txt": "username = alice\n",
	})
	reg := ldapprov.NewRegistry(ldapprov.Options{PageSize: dsPageSize})
	defer reg.Close()
	solo := filepath.Join(dir, "defs", "empty", "solo.txt")
	for _, step := range []struct {
		name     string
		edit     func()
		reg      *ldapprov.Registry
		searches int64
		changes  int
	}{
		{"empty OU: read and confirmed", func() {}, reg, 2, 1},
		{"one group: read", func() { os.Remove(solo) }, reg, 1, 1},
		{"empty again: known to exist", func() {}, reg, 1, 0},
		{"fresh registry: confirmed again", func() {}, nil, 2, 0},
	} {
		step.edit()
		r := step.reg
		if r == nil {
			r = ldapprov.NewRegistry(ldapprov.Options{PageSize: dsPageSize})
			defer r.Close()
		}
		res := deployWith(t, r, dir, true, deploy.Options{})
		mustApply(t, res)
		if c := planChanges(t, res); len(c) != step.changes {
			t.Errorf("%s: changes %q, want %d", step.name, c, step.changes)
		}
		if s := res.counters["searches"]; s != step.searches {
			t.Errorf("%s: %d searches, want %d", step.name, s, step.searches)
		}
	}
}

// checkDSGroup checks a group's members on the server (its own DN, the empty-group
// convention, is not a member).
func checkDSGroup(t *testing.T, srv *testldap.Server, d string, want []string) {
	t.Helper()
	e := srv.Entry(t, d)
	if e == nil {
		t.Errorf("%s is missing", d)
		return
	}
	got := members(e)
	want = slices.Sorted(maps.Keys(setOf(want)))
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s: members %q, want %q", d, got, want)
	}
}

func setOf(s []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}
