package ldap_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/guard"

	"github.com/entitlements-go/entitlements/backends"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/corpus"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
	"github.com/entitlements-go/entitlements/providers/ldap/ldapcalc"
)

// These tests run the LDAP provider against a real slapd (internal/testldap), using the
// acceptance scenarios of the conformance corpus as fixtures: acc_initial_run applied to an
// empty directory, then acc_modify_and_delete applied on top of it.

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func casesDir(t *testing.T) string {
	t.Helper()
	return corpus.Dir(t)
}

// startKittens starts a server with the acceptance directory layout: the OUs that exist
// before the first run, and every person of people.yaml (with the auxiliary class that
// carries the member_of attribute).
func startKittens(t *testing.T, tls bool) *testldap.Server {
	t.Helper()
	srv := testldap.Start(t, testldap.Options{Suffix: "dc=kittens,dc=net", TLS: tls})
	srv.Add(t, `dn: ou=Entitlements,ou=Groups,dc=kittens,dc=net
objectClass: organizationalUnit
ou: Entitlements

dn: ou=Pizza_Teams,ou=Groups,dc=kittens,dc=net
objectClass: organizationalUnit
ou: Pizza_Teams
`)
	persons, err := people.LoadYAML(filepath.Join(casesDir(t), "acc_initial_run", "people.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range persons {
		fmt.Fprintf(&b, "dn: uid=%s,ou=People,dc=kittens,dc=net\nobjectClass: inetOrgPerson\nobjectClass: entitlementsPerson\nuid: %s\ncn: %s\nsn: %s\n\n", p.UID, p.UID, p.UID, p.UID)
	}
	srv.Add(t, b.String())
	return srv
}

var (
	reURI    = regexp.MustCompile(`(?m)^(\s*)ldap_uri: .*$`)
	reBindDN = regexp.MustCompile(`(?m)^(\s*)ldap_binddn: .*$`)
	reBindPW = regexp.MustCompile(`(?m)^(\s*)ldap_bindpw: .*$`)
	rePeople = regexp.MustCompile(`(?s)\npeople:.*`)
)

// copyCase copies a conformance case and points its config at srv. People are read from the
// directory (as in the original acceptance suite), so member_of sees the stored attribute.
func copyCase(t *testing.T, name string, srv *testldap.Server, uri string, extra string) string {
	t.Helper()
	src := filepath.Join(casesDir(t), name)
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dst, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	s = reURI.ReplaceAllString(s, "${1}ldap_uri: "+uri+extra)
	s = reBindDN.ReplaceAllString(s, "${1}ldap_binddn: "+srv.BindDN)
	s = reBindPW.ReplaceAllString(s, "${1}ldap_bindpw: "+srv.Password)
	s = rePeople.ReplaceAllString(s, fmt.Sprintf(`
people:
  ldap:
    type: ldap
    config:
      base: ou=People,dc=kittens,dc=net
      ldap_uri: %s
      ldap_binddn: %s
      ldap_bindpw: %s
      person_dn_format: uid=%%KEY%%,ou=People,dc=kittens,dc=net
      additional_attributes: [cn, shellentitlements]
people_data_source: ldap
`, srv.URL, srv.BindDN, srv.Password))
	if err := os.WriteFile(filepath.Join(dst, "config.yaml"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

type run struct {
	plan     *deploy.Plan
	report   *deploy.Report
	counters map[string]int64
	result   *calc.Result
}

// deployCase calculates the repo in dir and plans (and applies, when apply) against LDAP
// with a fresh registry, so counters cover exactly this run.
func deployCase(t *testing.T, dir string, apply bool, opt deploy.Options) run {
	t.Helper()
	if opt.Guard == nil {
		opt.Guard = scenarioGuard()
	}
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	return deployWith(t, reg, dir, apply, opt)
}

func writes(c map[string]int64) int64 { return c["adds"] + c["modifies"] + c["deletes"] }

// expectState checks that every LDAP group of a case's expected.json is on the server with
// the expected members and description, and that member_of attributes match.
func expectState(t *testing.T, srv *testldap.Server, caseName string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(casesDir(t), caseName, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Groups map[string]struct {
			DN          *string  `json:"dn"`
			Description string   `json:"description"`
			Members     []string `json:"members"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	memberOf := map[string][]string{}
	for key, g := range exp.Groups {
		if g.DN == nil {
			continue
		}
		e := srv.Entry(t, *g.DN)
		if e == nil {
			t.Errorf("%s: %s is missing on the server", key, *g.DN)
			continue
		}
		got := members(e)
		want := slices.Clone(g.Members)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: members %v, want %v", key, got, want)
		}
		if d := e.GetAttributeValue("description"); d != g.Description {
			t.Errorf("%s: description %q, want %q", key, d, g.Description)
		}
		if strings.HasPrefix(key, "entitlements/groupofnames/") {
			for _, m := range g.Members {
				memberOf[strings.ToLower(m)] = append(memberOf[strings.ToLower(m)], dn.Normalize(*g.DN))
			}
		}
	}
	for _, p := range srv.Search(t, "ou=People,dc=kittens,dc=net", "(uid=*)", "uid", "shellentitlements") {
		var got []string
		for _, v := range p.GetAttributeValues("shellentitlements") {
			got = append(got, dn.Normalize(v))
		}
		slices.Sort(got)
		want := memberOf[strings.ToLower(p.GetAttributeValue("uid"))]
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("member_of of %s: %v, want %v", p.DN, got, want)
		}
	}
}

func members(e *goldap.Entry) []string {
	var vals []string
	for _, oc := range e.GetAttributeValues("objectClass") {
		switch strings.ToLower(oc) {
		case "groupofuniquenames":
			vals = e.GetAttributeValues("uniqueMember")
		case "groupofnames":
			vals = e.GetAttributeValues("member")
		case "posixgroup":
			vals = e.GetAttributeValues("memberUid")
		}
	}
	out := []string{}
	self := dn.Normalize(e.DN)
	for _, v := range vals {
		d, err := dn.Parse(v)
		if err != nil {
			out = append(out, v)
			continue
		}
		if first, ok := d.FirstValue(""); ok && d.Key() != self {
			out = append(out, first)
		}
	}
	slices.Sort(out)
	return out
}

func mustApply(t *testing.T, r run) {
	t.Helper()
	if err := r.plan.Err(); err != nil {
		t.Fatalf("plan: %v", err)
	}
	if err := r.report.Err(); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

func TestAcceptanceScenario(t *testing.T) {
	srv := startKittens(t, false)
	first := copyCase(t, "acc_initial_run", srv, srv.URL, "")

	r := deployCase(t, first, true, deploy.Options{})
	mustApply(t, r)
	tot := r.plan.Totals()
	if tot[providers.CreateContainer] != 3 { // foo-bar-app, GroupOfNames, Mirror
		t.Errorf("containers created: %d, want 3", tot[providers.CreateContainer])
	}
	expectState(t, srv, "acc_initial_run")
	for _, ou := range []string{"ou=foo-bar-app", "ou=GroupOfNames", "ou=Mirror"} {
		if srv.Entry(t, ou+",ou=Entitlements,ou=Groups,dc=kittens,dc=net") == nil {
			t.Errorf("%s was not created", ou)
		}
	}
	// An empty groupOfUniqueNames holds its own DN; an empty posixGroup holds nothing.
	if e := srv.Entry(t, "cn=expired-entitlement,ou=Entitlements,ou=Groups,dc=kittens,dc=net"); e == nil ||
		dn.Normalize(e.GetAttributeValue("uniqueMember")) != "cn=expired-entitlement,ou=entitlements,ou=groups,dc=kittens,dc=net" {
		t.Errorf("empty group does not reference itself: %v", e)
	}
	if e := srv.Entry(t, "cn=baz,ou=Mirror,ou=Entitlements,ou=Groups,dc=kittens,dc=net"); e == nil || e.GetAttributeValue("gidNumber") != "12345" {
		t.Errorf("posix mirror group: %v", e)
	}

	// Second run: nothing to do, no write, and exactly one search per managed base (5) plus
	// the people search.
	again := deployCase(t, first, true, deploy.Options{})
	mustApply(t, again)
	if n := len(again.plan.Totals()); n != 0 {
		t.Errorf("second run plans %v", again.plan.Totals())
	}
	if w := writes(again.counters); w != 0 {
		t.Errorf("second run wrote %d times", w)
	}
	if s := again.counters["searches"]; s != 6 {
		t.Errorf("second run searched %d times, want 6 (5 bases + people)", s)
	}
	if c := again.counters["connections"]; c > 2 {
		t.Errorf("second run opened %d connections, want ≤ pool size 2", c)
	}

	// Real directories carry extra classes on groups (extensibleObject, ...): they must not
	// block updates. Add one to every group of ou=Entitlements before the second state.
	conn := srv.Dial(t)
	for _, e := range srv.Search(t, "ou=Entitlements,ou=Groups,dc=kittens,dc=net", "(objectClass=groupOfUniqueNames)", "cn") {
		req := goldap.NewModifyRequest(e.DN, nil)
		req.Add("objectClass", []string{"extensibleObject"})
		if err := conn.Modify(req); err != nil {
			t.Fatalf("adding extensibleObject to %s: %v", e.DN, err)
		}
	}

	// Modify and delete: the second state of the scenario.
	second := copyCase(t, "acc_modify_and_delete", srv, srv.URL, "")
	r2 := deployCase(t, second, true, deploy.Options{})
	mustApply(t, r2)
	expectState(t, srv, "acc_modify_and_delete")
	if srv.Entry(t, "cn=sparkles,ou=GroupOfNames,ou=Entitlements,ou=Groups,dc=kittens,dc=net") != nil {
		t.Error("a group that is no longer defined was not deleted")
	}
	if tot := r2.plan.Totals(); tot[providers.DeleteGroup] == 0 || tot[providers.UpdateGroup] == 0 {
		t.Errorf("modify_and_delete plan: %v", tot)
	}
	final := deployCase(t, second, false, deploy.Options{})
	if n := len(final.plan.Totals()); n != 0 {
		t.Errorf("after modify_and_delete, plan again: %v", final.plan.Totals())
	}
}

func TestRemovalGuard(t *testing.T) {
	srv := startKittens(t, false)
	mustApply(t, deployCase(t, copyCase(t, "acc_initial_run", srv, srv.URL, ""), true, deploy.Options{}))
	second := copyCase(t, "acc_modify_and_delete", srv, srv.URL, "")
	strict := guard.Guard{MaxRemovalShare: 0.01, MinRemovals: 1, MaxDeletedGroups: 0}
	r := deployCase(t, second, true, deploy.Options{Guard: &strict})
	var ge *guard.Error
	if !errors.As(r.plan.Err(), &ge) {
		t.Fatalf("plan error %v; want a GuardError", r.plan.Err())
	}
	if len(ge.Worst) == 0 {
		t.Error("the refusal does not name the worst groups")
	}
	if w := r.counters["deletes"]; w != 0 {
		t.Errorf("a refused plan deleted %d groups", w)
	}
	// The guarded targets are untouched.
	if srv.Entry(t, "cn=sparkles,ou=GroupOfNames,ou=Entitlements,ou=Groups,dc=kittens,dc=net") == nil {
		t.Error("refused plan still deleted a group")
	}
}

func TestServerKilledMidRun(t *testing.T) {
	srv := startKittens(t, false)
	mustApply(t, deployCase(t, copyCase(t, "acc_initial_run", srv, srv.URL, ""), true, deploy.Options{}))
	second := copyCase(t, "acc_modify_and_delete", srv, srv.URL, "")

	// A read that fails is never taken for "empty": every target errors, nothing is planned.
	srv.Kill()
	ctx := context.Background()
	t.Chdir(second)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	_, err := calc.Load(ctx, "config.yaml", calc.Options{Types: backends.Types(), Now: now, People: reg.PeopleLoader()})
	if err == nil {
		t.Fatal("loading people from a dead server succeeded")
	}
	reg.Close()
	srv.Restart(t)

	// Plan while the server is up, kill it before applying: every write fails, the report
	// says so, and nothing was deleted.
	ctx2 := context.Background()
	reg2 := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg2.Close()
	repo, err := calc.Load(ctx2, "config.yaml", calc.Options{Types: backends.Types(), Now: now, People: reg2.PeopleLoader()})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := repo.Calculate(ctx2)
	f := func(ou *config.OU) (providers.Provider, error) { return reg2.Provider(ou) }
	opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of"), Guard: scenarioGuard()}
	plan, err := deploy.Build(ctx2, res, repo.Config(), opt)
	if err != nil || plan.Err() != nil {
		t.Fatalf("plan: %v %v", err, plan.Err())
	}
	srv.Kill()
	rep, _ := deploy.Apply(ctx2, plan, opt.ApplyOptions())
	if rep.Err() == nil {
		t.Fatal("apply against a dead server reported success")
	}
	srv.Restart(t)
	if srv.Entry(t, "cn=sparkles,ou=GroupOfNames,ou=Entitlements,ou=Groups,dc=kittens,dc=net") == nil {
		t.Error("a group was deleted although apply failed")
	}
	// A re-run converges.
	mustApply(t, deployCase(t, second, true, deploy.Options{}))
	expectState(t, srv, "acc_modify_and_delete")
}

func TestTLS(t *testing.T) {
	srv := startKittens(t, true)
	for _, tc := range []struct {
		name, uri, extra string
		ok               bool
	}{
		{"ldaps with pinned CA", srv.TLSURL, "\n    ldap_ca_file: " + srv.CAFile, true},
		{"starttls with pinned CA", srv.URL, "\n    ldap_ca_file: " + srv.CAFile + "\n    ldap_starttls: true", true},
		{"ldaps without the CA", srv.TLSURL, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LDAP_CACERT", "")
			dir := copyCase(t, "acc_initial_run", srv, tc.uri, tc.extra)
			r := deployCase(t, dir, false, deploy.Options{})
			err := r.plan.Err()
			if tc.ok && err != nil {
				t.Fatalf("plan over TLS: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("plan succeeded without trusting the server's CA")
			}
		})
	}
}

func TestLDAPGroupRulesAndFilters(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{Suffix: "dc=example,dc=net"})
	srv.Add(t, `dn: uid=Alice,ou=People,dc=example,dc=net
objectClass: inetOrgPerson
uid: Alice
cn: Alice
sn: A

dn: uid=bob,ou=People,dc=example,dc=net
objectClass: inetOrgPerson
uid: bob
cn: bob
sn: B

dn: uid=carol,ou=People,dc=example,dc=net
objectClass: inetOrgPerson
uid: carol
cn: carol
sn: C

dn: cn=staff,ou=Groups,dc=example,dc=net
objectClass: groupOfNames
cn: staff
member: uid=ALICE,ou=People,dc=example,dc=net
member: uid=bob,ou=People,dc=example,dc=net

dn: cn=lockout,ou=Groups,dc=example,dc=net
objectClass: groupOfUniqueNames
cn: lockout
uniqueMember: uid=bob,ou=People,dc=example,dc=net
`)
	dir := t.TempDir()
	conn := fmt.Sprintf("ldap_uri: %s\n    ldap_binddn: %s\n    ldap_bindpw: %s\n    person_dn_format: uid=%%KEY%%,ou=People,dc=example,dc=net",
		srv.URL, srv.BindDN, srv.Password)
	files := map[string]string{
		"config.yaml": `configuration_path: ./defs
extras:
  ldap_group:
    ` + conn + `
filters:
  lockout:
    class: Entitlements::Extras::LDAPGroup::Filters::MemberOfLDAPGroup
    config:
      ldap_group: cn=lockout,ou=Groups,dc=example,dc=net
groups:
  apps:
    type: dummy
people:
  ldap:
    type: ldap
    config:
      base: ou=People,dc=example,dc=net
      ` + strings.ReplaceAll(conn, "\n    ", "\n      ") + `
people_data_source: ldap
`,
		"defs/apps/staff-copy.txt": "ldap_group = cn=staff,ou=Groups,dc=example,dc=net\n",
		"defs/apps/locked.txt":     "ldap_group = cn=staff,ou=Groups,dc=example,dc=net\nlockout = all\n",
		"defs/apps/missing.txt":    "ldap_group = cn=nope,ou=Groups,dc=example,dc=net\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	ctx := context.Background()
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	opt := ldapcalc.Options(reg, calc.Options{Types: backends.Types(), Now: now, Strict: true})
	// The missing group is an error at its line.
	_, err := calc.Load(ctx, "config.yaml", opt)
	if err == nil || !strings.Contains(err.Error(), "missing.txt:1") {
		t.Fatalf("missing LDAP group: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "defs/apps/missing.txt")); err != nil {
		t.Fatal(err)
	}
	repo, err := calc.Load(ctx, "config.yaml", opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Member DNs match people case-insensitively; lockout removes bob unless opted out.
	if got := res.Group("apps/staff-copy").Members; !slices.Equal(got, []string{"Alice"}) {
		t.Errorf("staff-copy = %v, want [Alice]", got)
	}
	if got := res.Group("apps/locked").Members; !slices.Equal(got, []string{"Alice", "bob"}) {
		t.Errorf("locked = %v, want [Alice bob]", got)
	}
}

// scenarioGuard is the default guard without the run-wide limit: the conformance scenarios
// change about 40% of a tiny directory on purpose (17 of 40 memberships), which the global
// guard rightly refuses in production.
func scenarioGuard() *guard.Guard {
	g := guard.Default()
	g.MaxTotalRemovalShare = 1
	return &g
}
