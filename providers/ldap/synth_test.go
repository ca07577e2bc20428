package ldap_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/internal/skipnote"
	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/internal/testldap"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// synthBases are the five OUs of the synthetic repo, all deployed to LDAP. Apps and the
// GitHub teams sit under OUs that do not exist yet (ou=Entitlements, ou=GitHub): their
// parents are created in the same run.
var synthBases = map[string]string{
	synth.OUTeams:  "ou=Pizza_Teams,ou=Groups,dc=example,dc=net",
	synth.OUApps:   "ou=Apps,ou=Entitlements,ou=Groups,dc=example,dc=net",
	"internal":     "ou=Internal,ou=Groups,dc=example,dc=net",
	synth.OUGitHub: "ou=synth-org,ou=GitHub,ou=Groups,dc=example,dc=net",
	synth.OUAAD:    "ou=aad,ou=Groups,dc=example,dc=net",
}

// synthRepo writes the synthetic repo of p people and points every OU at srv.
func synthRepo(tb testing.TB, srv *testldap.Server, p int) string {
	tb.Helper()
	dir := tb.TempDir()
	if _, err := synth.Write(dir, synth.Options{People: p}); err != nil {
		tb.Fatal(err)
	}
	var cfg strings.Builder
	cfg.WriteString("configuration_path: ./ldap-config\n" + ldapBackend(srv) + "groups:\n")
	keys := []string{synth.OUTeams, synth.OUApps, "internal", synth.OUGitHub, synth.OUAAD}
	for _, k := range keys {
		fmt.Fprintf(&cfg, "  %s:\n    backend: test-ldap\n    base: %s\n    create_if_missing: true\n", k, synthBases[k])
		if k == "internal" {
			cfg.WriteString("    dir: ../internal\n")
		}
	}
	cfg.WriteString(`extras:
  orgchart:
    manager_map_file: ./manager-map.yaml
filters:
  contractors:
    class: Entitlements::Data::Groups::Calculated::Filters::MemberOfGroup
    config:
      group: internal/contractors
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// calculate loads and calculates the repo in dir with reg's readers.
func calculate(tb testing.TB, reg *ldapprov.Registry, dir string) (*calc.Result, *config.Config, deploy.Options) {
	tb.Helper()
	tb.Chdir(dir)
	ctx := context.Background()
	repo, err := calc.Load(ctx, "config.yaml", calc.Options{Types: backends.Types(), Now: now, People: reg.PeopleLoader()})
	if err != nil {
		tb.Fatalf("load: %v", err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	f := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
	return res, repo.Config(), deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap")}
}

// checkTree compares the server, entry by entry, with the calculated groups: every managed
// base holds exactly the calculated groups, each with its members and description.
func checkTree(t *testing.T, srv *testldap.Server, res *calc.Result) {
	t.Helper()
	want := map[string]*calc.Group{}
	for _, g := range res.Groups {
		if _, ok := synthBases[g.OU]; ok {
			want[dn.Normalize(g.DN)] = g
		}
	}
	seen := 0
	for ou, base := range synthBases {
		for _, e := range srv.Search(t, base, "(cn=*)") {
			if parent, _ := dn.ParentKey(e.DN); parent != dn.Normalize(base) {
				continue // an entry of a nested OU
			}
			g, ok := want[dn.Normalize(e.DN)]
			if !ok {
				t.Errorf("%s: %s is on the server but not calculated", ou, e.DN)
				continue
			}
			seen++
			wantMembers := slices.Clone(g.Members)
			slices.Sort(wantMembers)
			if got := members(e); !slices.Equal(got, wantMembers) {
				t.Errorf("%s: members %v, want %v", e.DN, got, wantMembers)
			}
			if d := e.GetAttributeValue("description"); d != g.Description {
				t.Errorf("%s: description %q, want %q", e.DN, d, g.Description)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d calculated groups are on the server, want %d", seen, len(want))
	}
}

// TestSynthDeploy deploys the synthetic repo of 2,000 people (five OUs, about 2,700 groups)
// to an empty directory, plans again (no change, bounded searches), applies a small change
// set and plans again, checking the tree entry by entry after each apply.
func TestSynthDeploy(t *testing.T) {
	if testing.Short() {
		skipnote.Skip(t, "TestSynthDeploy deploys ~2,700 groups to slapd; skipped with -short")
	}
	srv := testldap.Start(t, testldap.Options{})
	dir := synthRepo(t, srv, 2000)
	ctx := context.Background()

	reg := ldapprov.NewRegistry(ldapprov.Options{})
	res, cfg, opt := calculate(t, reg, dir)
	start := time.Now()
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
	mustApply(t, run{plan: plan, report: rep})
	t.Logf("initial apply of %d groups: %v, %v", plan.Totals()[providers.CreateGroup], time.Since(start).Round(time.Millisecond), reg.Counters())
	reg.Close()
	if n := plan.Totals()[providers.CreateGroup]; n < 2500 {
		t.Fatalf("initial apply created %d groups, want about 2,700", n)
	}
	checkTree(t, srv, res)

	noop := func(label string) {
		t.Helper()
		reg := ldapprov.NewRegistry(ldapprov.Options{})
		defer reg.Close()
		res, cfg, opt := calculate(t, reg, dir)
		plan, err := deploy.Build(ctx, res, cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := plan.Err(); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		for _, tp := range plan.Targets {
			for _, c := range tp.Changes {
				t.Errorf("%s: %s: %s", label, tp.OU, c.Describe())
			}
		}
		c := reg.Counters()
		// ≤ 2 searches per managed base plus one per 500 entries past a base's first page.
		limit := int64(0)
		for _, base := range synthBases {
			n := int64(0)
			for _, g := range res.Groups {
				if parent, _ := dn.ParentKey(g.DN); parent == dn.Normalize(base) {
					n++
				}
			}
			limit += 2 + max(0, n-1)/500
		}
		if c["searches"] > limit {
			t.Errorf("%s: %d searches, want ≤ %d", label, c["searches"], limit)
		}
		if c["connections"] > 4 {
			t.Errorf("%s: %d connections, want ≤ 4", label, c["connections"])
		}
		if w := writes(c); w != 0 {
			t.Errorf("%s: %d writes", label, w)
		}
		t.Logf("%s: %v", label, c)
	}
	noop("no-op plan after the initial apply")

	// A small change set: new groups, deleted groups, member and description changes.
	ppl, err := people.LoadYAML(filepath.Join(dir, "people.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	teams, _ := filepath.Glob(filepath.Join(dir, "ldap-config", synth.OUGitHub, "*.txt"))
	aad, _ := filepath.Glob(filepath.Join(dir, "ldap-config", synth.OUAAD, "*.txt"))
	slices.Sort(teams)
	slices.Sort(aad)
	for i := range 3 {
		write(t, filepath.Join(dir, "ldap-config", synth.OUAAD, fmt.Sprintf("zz-new-%d.txt", i)),
			fmt.Sprintf("description = new group %d\nusername = %s\n", i, ppl[i].UID))
		appendTo(t, teams[10+i], fmt.Sprintf("username = %s\n", ppl[100+i].UID))
		raw, err := os.ReadFile(aad[10+i])
		if err != nil {
			t.Fatal(err)
		}
		write(t, aad[10+i], strings.Replace(string(raw), "description = ", "description = changed: ", 1))
	}
	for _, f := range teams[:2] {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	reg = ldapprov.NewRegistry(ldapprov.Options{})
	res, cfg, opt = calculate(t, reg, dir)
	plan, err = deploy.Build(ctx, res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ = deploy.Apply(ctx, plan, opt.ApplyOptions())
	mustApply(t, run{plan: plan, report: rep})
	tot := plan.Totals()
	if tot[providers.CreateGroup] != 3 || tot[providers.DeleteGroup] != 2 || tot[providers.UpdateGroup] < 6 {
		t.Errorf("change set planned %v, want 3 creates, 2 deletes, ≥ 6 updates", tot)
	}
	t.Logf("change set %v: %v", tot, reg.Counters())
	reg.Close()
	checkTree(t, srv, res)
	noop("no-op plan after the change set")
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSynthDeployP2000 measures the synthetic repo of 2,000 people (five OUs, 2,667
// groups) deployed to slapd: "apply" is the initial plan and apply into an empty directory
// (a fresh slapd per iteration), "noop-plan" the plan of the deployed tree with a fresh
// Registry (as a new CLI run). The calculation is outside the timer; ns/op is the wall time
// of reading, diffing and writing. Run it with:
//
//	go test -run '^$' -bench SynthDeploy -benchtime 3x ./providers/ldap
func BenchmarkSynthDeployP2000(b *testing.B) {
	ctx := context.Background()
	report := func(b *testing.B, total map[string]int64) {
		for _, k := range []string{"connections", "binds", "searches", "adds", "modifies", "deletes"} {
			b.ReportMetric(float64(total[k])/float64(b.N), k+"/op")
		}
	}
	sum := func(total, c map[string]int64) {
		for k, v := range c {
			total[k] += v
		}
	}
	b.Run("apply", func(b *testing.B) {
		total := map[string]int64{}
		for range b.N {
			b.StopTimer()
			srv := testldap.Start(b, testldap.Options{})
			dir := synthRepo(b, srv, 2000)
			reg := ldapprov.NewRegistry(ldapprov.Options{})
			res, cfg, opt := calculate(b, reg, dir)
			b.StartTimer()
			plan, err := deploy.Build(ctx, res, cfg, opt)
			if err != nil {
				b.Fatal(err)
			}
			rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
			b.StopTimer()
			if err := errors.Join(plan.Err(), rep.Err()); err != nil {
				b.Fatal(err)
			}
			sum(total, reg.Counters())
			reg.Close()
			srv.Stop()
		}
		report(b, total)
	})
	b.Run("noop-plan", func(b *testing.B) {
		b.StopTimer()
		srv := testldap.Start(b, testldap.Options{})
		dir := synthRepo(b, srv, 2000)
		reg := ldapprov.NewRegistry(ldapprov.Options{})
		res, cfg, opt := calculate(b, reg, dir)
		plan, err := deploy.Build(ctx, res, cfg, opt)
		if err != nil {
			b.Fatal(err)
		}
		if err := errors.Join(plan.Err(), applyErr(ctx, plan, opt)); err != nil {
			b.Fatal(err)
		}
		reg.Close()
		total := map[string]int64{}
		for range b.N {
			reg := ldapprov.NewRegistry(ldapprov.Options{})
			res, cfg, opt := calculate(b, reg, dir)
			b.StartTimer()
			plan, err := deploy.Build(ctx, res, cfg, opt)
			b.StopTimer()
			if err != nil || plan.Err() != nil {
				b.Fatal(err, plan.Err())
			}
			if n := len(plan.Totals()); n != 0 {
				b.Fatalf("no-op plan has changes: %v", plan.Totals())
			}
			sum(total, reg.Counters())
			reg.Close()
		}
		report(b, total)
	})
}

func applyErr(ctx context.Context, plan *deploy.Plan, opt deploy.Options) error {
	_, err := deploy.Apply(ctx, plan, opt.ApplyOptions())
	return err
}
