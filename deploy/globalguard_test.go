package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/guard"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// sixTargets: six small LDAP targets, each with one group that has 9 members today; the
// calculation (people data that lost everyone but alice) keeps only alice in the first.
func sixTargets(t *testing.T) (*calc.Result, *config.Config, *fake.Provider) {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("configuration_path: ./defs\nbackends:\n  l:\n    type: ldap\n    ldap_uri: ldap://127.0.0.1:1\n    ldap_binddn: cn=admin\n    ldap_bindpw: x\n    person_dn_format: uid=%KEY%,ou=People\ngroups:\n")
	files := map[string]string{"people.yaml": "alice: {cn: A}\n"}
	fp := fake.New()
	for i := range 6 {
		ou := fmt.Sprintf("t%d", i)
		fmt.Fprintf(&cfg, "  %s:\n    backend: l\n    base: ou=%s\n", ou, ou)
		files["defs/"+ou+"/g.txt"] = "username = nobody\n"
		var members []string
		for j := range 9 {
			members = append(members, fmt.Sprintf("u%d", j))
		}
		fp.Seed(ou, &providers.Group{DN: "cn=g,ou=" + ou, CN: "g", Members: members})
	}
	files["defs/t0/g.txt"] = "username = alice\n"
	cfg.WriteString("people:\n  y:\n    type: yaml\n    config: {filename: people.yaml}\npeople_data_source: y\n")
	files["config.yaml"] = cfg.String()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := calc.Load(context.Background(), filepath.Join(dir, "config.yaml"),
		calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Calculate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, r.Config(), fp
}

// Issue 10 item 7: every target stays under the per-target minimum, the run as a whole
// removes everyone: the global guard refuses it, and nothing is written.
func TestGlobalGuard(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		guard   func(*guard.Guard)
		force   bool
		refused bool
	}{
		{name: "default refuses", refused: true},
		{name: "total limit follows the per-target share", guard: func(g *guard.Guard) { g.MaxRemovalShare = 1 }},
		{name: "total limit off", guard: func(g *guard.Guard) { g.MaxTotalRemovalShare = -1 }},
		{name: "total limit lifted", guard: func(g *guard.Guard) { g.MaxTotalRemovalShare = 1 }},
		{name: "minimum above the total", guard: func(g *guard.Guard) { g.MinRemovals = 100 }},
		{name: "force", force: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, cfg, fp := sixTargets(t)
			g := guard.Default()
			if c.guard != nil {
				c.guard(&g)
			}
			opt := deploy.Options{Backends: backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil }, "ldap"),
				Guard: &g, Force: c.force}
			plan, err := deploy.Build(ctx, res, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, tp := range plan.Targets {
				var ge *guard.Error
				if errors.As(tp.Err, &ge) {
					refused++
					if ge.Limit != guard.LimitTotal || ge.Removed != 54 || ge.Total != 54 {
						t.Errorf("%s: %+v", tp.OU, ge)
					}
					if len(tp.Changes) == 0 {
						t.Errorf("%s: a refused target keeps its planned changes", tp.OU)
					}
				} else if tp.Err != nil {
					t.Errorf("%s: %v", tp.OU, tp.Err)
				}
			}
			if c.refused != (refused == 6) || !c.refused && refused != 0 {
				t.Fatalf("%d targets refused; want refused=%v", refused, c.refused)
			}
			rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
			writes := 0
			for _, call := range fp.Calls() {
				if call.Op == "apply" {
					writes++
				}
			}
			if c.refused && writes != 0 {
				t.Errorf("refused run wrote %d times", writes)
			}
			if !c.refused && (writes == 0 || rep.Err() != nil) {
				t.Errorf("allowed run: %d writes, %v", writes, rep.Err())
			}
		})
	}
}

// Issue 10 item 7: the people data lost a quarter of the people who hold memberships, but
// they hold few of them: only the people-loss limit refuses the run.
func TestPeopleLossGuard(t *testing.T) {
	dir := t.TempDir()
	name := func(p string, i int) string { return fmt.Sprintf("%s%02d", p, i) }
	var peopleYAML, g1 strings.Builder
	files := map[string]string{}
	fp := fake.New()
	var p60, q20 []string
	for i := range 60 {
		p60 = append(p60, name("p", i))
		if i < 39 {
			fmt.Fprintf(&peopleYAML, "%s: {cn: P}\n", name("p", i))
			fmt.Fprintf(&g1, "username = %s\n", name("p", i))
		}
	}
	var q strings.Builder
	for i := range 20 {
		q20 = append(q20, name("q", i))
		fmt.Fprintf(&peopleYAML, "%s: {cn: Q}\n", name("q", i))
		fmt.Fprintf(&q, "username = %s\n", name("q", i))
	}
	files["defs/t0/g1.txt"] = g1.String()
	fp.Seed("t0", &providers.Group{DN: "cn=g1,ou=t0", CN: "g1", Members: p60})
	for i := 2; i <= 21; i++ {
		cn := fmt.Sprintf("g%d", i)
		files["defs/t0/"+cn+".txt"] = q.String()
		fp.Seed("t0", &providers.Group{DN: "cn=" + cn + ",ou=t0", CN: cn, Members: q20})
	}
	files["people.yaml"] = peopleYAML.String()
	files["config.yaml"] = "configuration_path: ./defs\ngroups:\n  t0:\n    type: ldap\n    base: ou=t0\n    ldap_uri: ldap://127.0.0.1:1\n    ldap_binddn: cn=a\n    ldap_bindpw: x\n    person_dn_format: uid=%KEY%\npeople:\n  y:\n    type: yaml\n    config: {filename: people.yaml}\npeople_data_source: y\n"
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := calc.Load(context.Background(), filepath.Join(dir, "config.yaml"), calc.Options{Types: backends.Types(), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Calculate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		guard   func(*guard.Guard)
		refused bool
	}{
		{name: "default", refused: true},
		{name: "limit raised", guard: func(g *guard.Guard) { g.MaxPeopleLossShare = 0.3 }},
		{name: "limit off", guard: func(g *guard.Guard) { g.MaxPeopleLossShare = -1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := guard.Default()
			if c.guard != nil {
				c.guard(&g)
			}
			plan, err := deploy.Build(context.Background(), res, r.Config(), deploy.Options{Guard: &g,
				Backends: backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil }, "ldap")})
			if err != nil {
				t.Fatal(err)
			}
			var ge *guard.Error
			refused := errors.As(plan.Err(), &ge)
			if refused != c.refused {
				t.Fatalf("plan error %v; want refused=%v", plan.Err(), c.refused)
			}
			if refused && (ge.Limit != guard.LimitPeople || ge.Removed != 21 || ge.Total != 80 || !strings.Contains(ge.Error(), "p39")) {
				t.Errorf("%+v: %v", ge, ge)
			}
		})
	}
}
