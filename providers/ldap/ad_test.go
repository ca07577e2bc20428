package ldap_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// The provider against a real Samba AD DC (internal/testldap.StartSamba): AD groups
// (object_class: group), people mapped by sAMAccountName, foreign entries in managed OUs,
// binds under AD's "strong authentication required". One server for all subtests:
// provisioning takes seconds to tens of seconds.

const (
	adPageSize = 50 // the provider's page: the big OU spans several pages
	adBigOU    = 120
	// AD's groupType values: a global security group and a universal distribution group.
	adGlobalSecurity        = "-2147483646"
	adUniversalDistribution = "8"
)

// adUsers live in two OUs under OU=People, named by display name, as AD users are.
var adUsers = []struct{ cn, ou, sam string }{
	{"Alice Smith", "OU=Staff", "alice"},
	{"Bob Jones, Jr.", "OU=Staff", "bob"},
	{"Carol Díaz", "OU=Contractors,OU=Staff", "carol"},
	{"Dan O'Neil", "OU=Contractors,OU=Staff", "dan"},
}

// adDirectory is what exists before the first run: the people, an OU of AD groups holding a
// contact (foreign) and a native group that the repo defines (adopted), and an OU of
// groupOfUniqueNames holding a native AD group (foreign there).
func adDirectory(t *testing.T, srv *testldap.Server) {
	t.Helper()
	s := srv.Suffix
	var b strings.Builder
	fmt.Fprintf(&b, "dn: OU=Staff,OU=People,%s\nobjectClass: organizationalUnit\n\n", s)
	fmt.Fprintf(&b, "dn: OU=Contractors,OU=Staff,OU=People,%s\nobjectClass: organizationalUnit\n\n", s)
	for _, u := range adUsers {
		fmt.Fprintf(&b, "dn: CN=%s,%s,OU=People,%s\nobjectClass: user\nsAMAccountName: %s\nuserPrincipalName: %s@example.net\n\n",
			dn.EscapeValue(u.cn), u.ou, s, u.sam, u.sam)
	}
	fmt.Fprintf(&b, "dn: OU=Teams,OU=Groups,%s\nobjectClass: organizationalUnit\n\n", s)
	fmt.Fprintf(&b, "dn: CN=Reception,OU=Teams,OU=Groups,%s\nobjectClass: contact\n\n", s)
	fmt.Fprintf(&b, "dn: CN=native,OU=Teams,OU=Groups,%s\nobjectClass: group\nsAMAccountName: native\nmember: CN=Alice Smith,OU=Staff,OU=People,%s\n\n", s, s)
	fmt.Fprintf(&b, "dn: OU=Legacy,OU=Groups,%s\nobjectClass: organizationalUnit\n\n", s)
	fmt.Fprintf(&b, "dn: CN=adgroup,OU=Legacy,OU=Groups,%s\nobjectClass: group\nsAMAccountName: adgroup\n\n", s)
	srv.Add(t, b.String())
}

// adEscapedOU is a missing OU whose name needs escaping.
const adEscapedOU = `OU=R&D\, Lists,OU=Groups,DC=example,DC=net`

// adRepo is the repo of the AD scenario; change gives its second state. uri is the value of
// ldap_uri, and may carry more settings on the lines after it.
func adRepo(t *testing.T, srv *testldap.Server, change bool, uri string) string {
	t.Helper()
	cfg := fmt.Sprintf(`configuration_path: ./defs
backends:
  ad:
    type: ldap
    ldap_uri: %s
    ldap_ca_file: %s
    ldap_binddn: %s
    ldap_bindpw: %s
    object_class: group
    person_attribute: sAMAccountName
    person_base: OU=People,%s
groups:
  teams:
    backend: ad
    base: OU=Teams,OU=Groups,%[5]s
  big:
    backend: ad
    base: OU=Big,OU=Groups,%[5]s
    create_if_missing: true
  lists:
    backend: ad
    base: %s
    create_if_missing: true
    group_scope: universal
    group_category: distribution
  legacy:
    backend: ad
    base: OU=Legacy,OU=Groups,%[5]s
    object_class: groupOfUniqueNames
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`, uri, srv.CAFile, srv.BindDN, srv.Password, srv.Suffix, yamlQuote(adEscapedOU))
	files := map[string]string{
		"config.yaml":              cfg,
		"people.yaml":              "alice: {}\nbob: {}\ncarol: {}\ndan: {}\nghost: {}\n",
		"defs/teams/native.txt":    "username = alice\nusername = carol\n",
		"defs/teams/ops.txt":       "username = bob\nusername = dan\n",
		"defs/teams/empty.txt":     "username = nobody_at_all\n",
		"defs/teams/ghosts.txt":    "username = ghost\nusername = alice\n",
		"defs/lists/all-hands.txt": "username = alice\nusername = bob\nusername = carol\nusername = dan\n",
		"defs/legacy/wiki.txt":     "username = carol\n",
	}
	users := []string{"alice", "bob", "carol", "dan"}
	for i := range adBigOU {
		files[fmt.Sprintf("defs/big/g%03d.txt", i)] = "username = " + users[i%4] + "\n"
	}
	if change {
		files["defs/teams/native.txt"] = "username = dan\n"
		files["defs/teams/empty.txt"] = "username = bob\n"
		files["defs/teams/ops.txt"] = "username = nobody_at_all\n"
		delete(files, "defs/big/g000.txt")
		files[fmt.Sprintf("defs/big/g%03d.txt", adBigOU)] = "username = carol\n"
	}
	return writeFiles(t, files)
}

// adRun deploys with a fresh registry, collecting the providers' warnings.
func adRun(t *testing.T, dir string, apply bool) (run, []string) {
	t.Helper()
	reg := ldapprov.NewRegistry(ldapprov.Options{PageSize: adPageSize})
	defer reg.Close()
	var mu sync.Mutex
	var made []*ldapprov.Provider
	f := func(ou *config.OU) (providers.Provider, error) {
		p, err := reg.Provider(ou)
		if err == nil {
			mu.Lock()
			made = append(made, p)
			mu.Unlock()
		}
		return p, err
	}
	r := deployWith(t, reg, dir, apply, deploy.Options{Guard: scenarioGuard(), Backends: backends.Spec().WithFactory(f, "ldap")})
	var warnings []string
	for _, p := range made {
		warnings = append(warnings, p.Warnings()...)
	}
	slices.Sort(warnings)
	return r, warnings
}

func adEntry(t *testing.T, srv *testldap.Server, d string) *goldap.Entry {
	t.Helper()
	e := srv.Entry(t, d)
	if e == nil {
		t.Fatalf("%s is missing", d)
	}
	return e
}

// adMembers returns the sAMAccountNames of a group's members (a member that is not one of
// adUsers by its DN).
func adMembers(t *testing.T, srv *testldap.Server, d string) []string {
	t.Helper()
	var out []string
	for _, m := range adEntry(t, srv, d).GetAttributeValues("member") {
		name := m
		for _, u := range adUsers {
			if dn.Equal(m, "CN="+dn.EscapeValue(u.cn)+","+u.ou+",OU=People,"+srv.Suffix) {
				name = u.sam
			}
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func TestActiveDirectory(t *testing.T) {
	srv := testldap.StartSamba(t, testldap.SambaOptions{})
	adDirectory(t, srv)
	teams := "OU=Teams,OU=Groups," + srv.Suffix

	t.Run("Scenario", func(t *testing.T) {
		dir := adRepo(t, srv, false, srv.TLSURL)
		first, warnings := adRun(t, dir, true)
		mustApply(t, first)
		tot := first.plan.Totals()
		if tot[providers.CreateContainer] != 2 || tot[providers.CreateGroup] != adBigOU+5 || tot[providers.UpdateGroup] != 1 {
			t.Errorf("first run: %v, want 2 containers, %d creates, 1 update (the adopted native group)", tot, adBigOU+5)
		}
		// The contact of an AD OU and the AD group of a groupOfUniqueNames OU are reported
		// and left alone; so is a person with no AD account.
		wantWarn := []string{
			"CN=Reception," + teams + " is not a group (objectClass: top, person, organizationalPerson, contact); left alone",
			"CN=adgroup,OU=Legacy,OU=Groups," + srv.Suffix + " is not a groupOfUniqueNames (objectClass: top, group); left alone",
			"cn=ghosts," + teams + ": ghost has no entry with sAMAccountName=ghost under OU=People," + srv.Suffix + " (or more than one); not added",
		}
		for _, w := range wantWarn {
			if !slices.Contains(warnings, w) {
				t.Errorf("warnings %q lack %q", warnings, w)
			}
		}
		if srv.Entry(t, "CN=Reception,"+teams) == nil || srv.Entry(t, "CN=adgroup,OU=Legacy,OU=Groups,"+srv.Suffix) == nil {
			t.Error("a foreign entry was deleted")
		}

		ops := adEntry(t, srv, "CN=ops,"+teams)
		if got := ops.GetAttributeValue("sAMAccountName"); got != "ops" {
			t.Errorf("ops: sAMAccountName %q", got)
		}
		if got := ops.GetAttributeValue("groupType"); got != adGlobalSecurity {
			t.Errorf("ops: groupType %s, want %s (global security)", got, adGlobalSecurity)
		}
		if got := ops.GetAttributeValue("managedBy"); !dn.Equal(got, srv.BindDN) {
			t.Errorf("ops: managedBy %q, want %q", got, srv.BindDN)
		}
		if got := adMembers(t, srv, "CN=ops,"+teams); !slices.Equal(got, []string{"bob", "dan"}) {
			t.Errorf("ops: members %q", got)
		}
		if got := adMembers(t, srv, "CN=native,"+teams); !slices.Equal(got, []string{"alice", "carol"}) {
			t.Errorf("adopted native group: members %q", got)
		}
		if e := adEntry(t, srv, "CN=empty,"+teams); len(e.GetAttributeValues("member")) != 0 {
			t.Errorf("an empty AD group holds %q", e.GetAttributeValues("member"))
		}
		all := adEntry(t, srv, "CN=all-hands,"+adEscapedOU)
		if got := all.GetAttributeValue("groupType"); got != adUniversalDistribution {
			t.Errorf("all-hands: groupType %s, want %s (universal distribution)", got, adUniversalDistribution)
		}
		if e := adEntry(t, srv, adEscapedOU); e.GetAttributeValue("ou") != "R&D, Lists" {
			t.Errorf("escaped OU: ou=%q", e.GetAttributeValue("ou"))
		}
		if e := adEntry(t, srv, "CN=wiki,OU=Legacy,OU=Groups,"+srv.Suffix); !slices.Contains(e.GetAttributeValues("objectClass"), "groupOfUniqueNames") {
			t.Errorf("legacy OU: %v", e.GetAttributeValues("objectClass"))
		}

		again, _ := adRun(t, dir, false)
		if c := planChanges(t, again); len(c) != 0 {
			t.Fatalf("plan after apply: %q", c)
		}
		if w := writes(again.counters); w != 0 {
			t.Errorf("no-op plan wrote %d times", w)
		}

		// A member added by hand that is no person (a group) shows by its DN and goes.
		nested := goldap.NewModifyRequest("CN=native,"+teams, nil)
		nested.Add("member", []string{"CN=ops," + teams})
		if err := srv.Dial(t).Modify(nested); err != nil {
			t.Fatal(err)
		}
		// A groupType changed by hand (security to distribution) is put back.
		kind := goldap.NewModifyRequest("CN=all-hands,"+adEscapedOU, nil)
		kind.Replace("groupType", []string{"-2147483640"}) // universal security
		if err := srv.Dial(t).Modify(kind); err != nil {
			t.Fatal(err)
		}
		changed := adRepo(t, srv, true, srv.TLSURL)
		second, warnings := adRun(t, changed, true)
		mustApply(t, second)
		tot = second.plan.Totals()
		if tot[providers.CreateGroup] != 1 || tot[providers.DeleteGroup] != 1 || tot[providers.UpdateGroup] != 4 {
			t.Errorf("change set: %v, want 1 create, 1 delete, 4 updates", tot)
		}
		if got := adEntry(t, srv, "CN=all-hands,"+adEscapedOU).GetAttributeValue("groupType"); got != adUniversalDistribution {
			t.Errorf("all-hands: groupType %s after the change set, want %s", got, adUniversalDistribution)
		}
		var native *providers.Change
		for _, tp := range second.plan.Targets {
			for _, c := range tp.Changes {
				if dn.Equal(c.DN, "CN=native,"+teams) {
					native = c
				}
			}
		}
		if native == nil || !slices.ContainsFunc(native.Remove, func(m string) bool { return dn.Equal(m, "CN=ops,"+teams) }) {
			t.Errorf("the plan does not remove the nested group by its DN: %+v", native)
		}
		if !slices.ContainsFunc(warnings, func(w string) bool {
			return strings.Contains(w, "member CN=ops,"+teams+" is no entry with sAMAccountName")
		}) {
			t.Errorf("the unmapped member is not reported: %q", warnings)
		}
		if got := adMembers(t, srv, "CN=native,"+teams); !slices.Equal(got, []string{"dan"}) {
			t.Errorf("native after the change set: %q", got)
		}
		if e := adEntry(t, srv, "CN=ops,"+teams); len(e.GetAttributeValues("member")) != 0 {
			t.Errorf("emptied AD group holds %q", e.GetAttributeValues("member"))
		}
		if srv.Entry(t, "CN=g000,OU=Big,OU=Groups,"+srv.Suffix) != nil {
			t.Error("g000 was not deleted")
		}
		final, _ := adRun(t, changed, false)
		if c := planChanges(t, final); len(c) != 0 {
			t.Errorf("re-plan after the change set: %q", c)
		}
	})

	// AD returns the members of a large group in ranges ("member;range=0-1499"); Samba never
	// splits a test's groups on its own, so the first range is made here, as AD would send
	// it, and the rest is read from the server.
	t.Run("RangedMembers", func(t *testing.T) {
		dir := adRepo(t, srv, false, srv.TLSURL)
		c, _, err := config.Load(filepath.Join(dir, "config.yaml"), config.Options{Types: backends.Types(), BaseDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		reg := ldapprov.NewRegistry(ldapprov.Options{})
		defer reg.Close()
		p, err := reg.Provider(c.OU("lists"))
		if err != nil {
			t.Fatal(err)
		}
		d := "CN=all-hands," + adEscapedOU
		all := adEntry(t, srv, d).GetAttributeValues("member")
		if len(all) != 4 {
			t.Fatalf("all-hands holds %d members, want 4", len(all))
		}
		for _, first := range []int{1, 2, 3} {
			e := goldap.NewEntry(d, map[string][]string{"cn": {"all-hands"}, fmt.Sprintf("member;range=0-%d", first): all[:first+1]})
			if err := p.CompleteRanges(context.Background(), e); err != nil {
				t.Fatal(err)
			}
			got := e.GetAttributeValues("member")
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(all))) {
				t.Errorf("first range 0-%d: members %q, want %q", first, got, all)
			}
		}
	})

	t.Run("SAMAccountNameCollisions", func(t *testing.T) {
		cfg := fmt.Sprintf(`configuration_path: ./defs
groups:
  clash:
    type: ldap
    ldap_uri: %s
    ldap_ca_file: %s
    ldap_binddn: %s
    ldap_bindpw: %s
    object_class: group
    person_attribute: sAMAccountName
    person_base: OU=People,%s
    base: OU=Clash,OU=Groups,%[5]s
    create_if_missing: true
  clash2:
    type: ldap
    ldap_uri: %[1]s
    ldap_ca_file: %[2]s
    ldap_binddn: %[3]s
    ldap_bindpw: %[4]s
    object_class: group
    person_attribute: sAMAccountName
    person_base: OU=People,%[5]s
    base: OU=Clash2,OU=Groups,%[5]s
    create_if_missing: true
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`, srv.TLSURL, srv.CAFile, srv.BindDN, srv.Password, srv.Suffix)
		for _, tc := range []struct {
			name  string
			files map[string]string
			want  string
		}{
			// Group names of LDAP OUs are [A-Za-z0-9_-], so two groups derive one name only
			// in two OUs of the domain.
			{"one name in two OUs", map[string]string{"defs/clash/dup.txt": "username = alice\n", "defs/clash2/dup.txt": "username = bob\n"},
				`derives sAMAccountName "dup", as cn=dup,ou=clash`},
			{"the name of an existing user", map[string]string{"defs/clash/alice.txt": "username = alice\n"},
				`would take sAMAccountName "alice" of CN=Alice Smith,OU=Staff,OU=People,` + srv.Suffix},
		} {
			t.Run(tc.name, func(t *testing.T) {
				files := map[string]string{"config.yaml": cfg, "people.yaml": "alice: {}\nbob: {}\n",
					"defs/clash/x.txt": "username = bob\n", "defs/clash2/y.txt": "username = bob\n"}
				for k, v := range tc.files {
					files[k] = v
				}
				r, _ := adRun(t, writeFiles(t, files), false)
				if err := r.plan.Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("plan error %v, want one containing %q", err, tc.want)
				}
			})
		}
	})

	t.Run("Binds", func(t *testing.T) {
		for _, tc := range []struct {
			name, uri string
			want      string // "" for success
		}{
			{"ldaps with the CA", srv.TLSURL, ""},
			{"starttls with the CA", srv.URL + "\n    ldap_starttls: true", ""},
			{"plain", srv.URL, `"Strong Auth Required": BindSimple: Transport encryption required. (the server wants TLS: use an ldaps:// URI or ldap_starttls: true)`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r, _ := adRun(t, adRepo(t, srv, true, tc.uri), false)
				err := r.plan.Err()
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("plan: %v", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Fatalf("plan error %v, want one containing %q", err, tc.want)
				}
			})
		}
	})
}
