package ldap_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
	"github.com/entitlements-go/entitlements/providers/ldap/ldapcalc"
)

// writeFiles writes a config repo (path → content) into a new temp dir.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ldapBackend is the backend block of a config pointing at srv.
func ldapBackend(srv *testldap.Server) string {
	return fmt.Sprintf(`backends:
  test-ldap:
    type: ldap
    ldap_uri: %s
    ldap_binddn: %s
    ldap_bindpw: %s
    person_dn_format: uid=%%KEY%%,ou=People,%s
`, srv.URL, srv.BindDN, srv.Password, srv.Suffix)
}

// wideRepo is a repo of ous LDAP OUs (created on demand) of n one-member groups each, with
// people from a YAML file.
func wideRepo(t testing.TB, srv *testldap.Server, ous, n int) string {
	t.Helper()
	files := map[string]string{}
	var cfg, ppl strings.Builder
	cfg.WriteString("configuration_path: ./defs\n" + ldapBackend(srv) + "groups:\n")
	ppl.WriteString("---\n")
	for i := range n {
		fmt.Fprintf(&ppl, "u%04d:\n  cn: u%04d\n", i, i)
	}
	for o := range ous {
		fmt.Fprintf(&cfg, "  ou%d:\n    backend: test-ldap\n    base: ou=OU%d,ou=Groups,%s\n    create_if_missing: true\n", o, o, srv.Suffix)
		for i := range n {
			files[fmt.Sprintf("defs/ou%d/g%04d.txt", o, i)] = fmt.Sprintf("username = u%04d\n", (i+o)%n)
		}
	}
	cfg.WriteString("people:\n  yaml:\n    type: yaml\n    config:\n      filename: people.yaml\npeople_data_source: yaml\n")
	files["config.yaml"] = cfg.String()
	files["people.yaml"] = ppl.String()
	return writeFiles(t, files)
}

// deployWith calculates the repo in dir and plans (and applies, when apply) against LDAP
// with reg (the caller decides whether runs share a registry), through opt.Providers when
// set.
func deployWith(t testing.TB, reg *ldapprov.Registry, dir string, apply bool, opt deploy.Options) run {
	t.Helper()
	t.Chdir(dir)
	ctx := context.Background()
	before := reg.Counters()
	repo, err := calc.Load(ctx, "config.yaml", ldapcalc.Options(reg, calc.Options{Types: backends.Types(), Now: now}))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Backends == nil {
		f := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
		opt.Backends = backends.Spec().WithFactory(f, "ldap", "member_of")
	}
	plan, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil {
		t.Fatal(err)
	}
	r := run{plan: plan, result: res}
	if apply {
		r.report, _ = deploy.Apply(ctx, plan, opt.ApplyOptions())
	}
	r.counters = map[string]int64{}
	for k, v := range reg.Counters() {
		r.counters[k] = v - before[k]
	}
	return r
}

// TestOUsLargerThanOnePage is the reproduction: OUs of more than one page of groups,
// read concurrently (deploy reads up to four targets at once over the provider's pool), then
// planned twice. OpenLDAP keeps one paged-results state per connection, so two paged
// searches sharing a connection invalidate each other's cookie.
func TestOUsLargerThanOnePage(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{})
	const ous, n = 3, 1200
	dir := wideRepo(t, srv, ous, n)
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	first := deployWith(t, reg, dir, true, deploy.Options{})
	mustApply(t, first)
	if got := first.plan.Totals()[providers.CreateGroup]; got != ous*n {
		t.Fatalf("first run creates %d groups, want %d", got, ous*n)
	}
	for i := range 2 {
		// A fresh registry each time, as a new CLI run has.
		r2 := ldapprov.NewRegistry(ldapprov.Options{})
		again := deployWith(t, r2, dir, false, deploy.Options{})
		r2.Close()
		if err := again.plan.Err(); err != nil {
			t.Fatalf("plan %d: %v", i+1, err)
		}
		if tot := again.plan.Totals(); len(tot) != 0 {
			t.Fatalf("plan %d after apply: %v, want no change", i+1, tot)
		}
		t.Logf("plan %d: %v", i+1, again.counters)
	}
}

// TestParentOUsCreatedFirst: a deeper base listed under a shorter key than its parent (so
// applied before it) is created in one run, its missing parent OUs first.
func TestParentOUsCreatedFirst(t *testing.T) {
	srv := testldap.Start(t, testldap.Options{})
	cfg := "configuration_path: ./defs\n" + ldapBackend(srv) + fmt.Sprintf(`groups:
  c:
    backend: test-ldap
    base: ou=Child,ou=Middle,ou=Parent,ou=Groups,%[1]s
    create_if_missing: true
  the-parent:
    backend: test-ldap
    base: ou=Parent,ou=Groups,%[1]s
    create_if_missing: true
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`, srv.Suffix)
	dir := writeFiles(t, map[string]string{
		"config.yaml":            cfg,
		"people.yaml":            "---\nbob:\n  cn: bob\n",
		"defs/c/kid.txt":         "username = bob\n",
		"defs/the-parent/up.txt": "username = bob\n",
	})
	reg := ldapprov.NewRegistry(ldapprov.Options{})
	defer reg.Close()
	r := deployWith(t, reg, dir, true, deploy.Options{})
	mustApply(t, r)
	if r.plan.Targets[0].OU != "c" {
		t.Fatalf("the child is not applied first (order %s, %s): the test does not test anything", r.plan.Targets[0].OU, r.plan.Targets[1].OU)
	}
	for _, d := range []string{"ou=Middle,ou=Parent,ou=Groups,", "cn=kid,ou=Child,ou=Middle,ou=Parent,ou=Groups,", "cn=up,ou=Parent,ou=Groups,"} {
		if srv.Entry(t, d+srv.Suffix) == nil {
			t.Errorf("%s%s was not created in the first run", d, srv.Suffix)
		}
	}
	// The same registry plans nothing more: its base reads followed its writes.
	again := deployWith(t, reg, dir, false, deploy.Options{})
	if err := again.plan.Err(); err != nil || len(again.plan.Totals()) != 0 {
		t.Errorf("plan after apply: %v %v", again.plan.Totals(), err)
	}
}
