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
		calc.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), BaseDir: dir})
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
		guard   func(*providers.Guard)
		force   bool
		refused bool
	}{
		{name: "default refuses", refused: true},
		{name: "total limit follows the per-target share", guard: func(g *providers.Guard) { g.MaxRemovalShare = 1 }},
		{name: "total limit off", guard: func(g *providers.Guard) { g.MaxTotalRemovalShare = -1 }},
		{name: "total limit lifted", guard: func(g *providers.Guard) { g.MaxTotalRemovalShare = 1 }},
		{name: "minimum above the total", guard: func(g *providers.Guard) { g.MinRemovals = 100 }},
		{name: "force", force: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, cfg, fp := sixTargets(t)
			g := providers.DefaultGuard()
			if c.guard != nil {
				c.guard(&g)
			}
			opt := deploy.Options{Providers: map[string]deploy.Factory{"ldap": func(*config.OU) (providers.Provider, error) { return fp, nil }},
				Guard: &g, Force: c.force}
			plan, err := deploy.Build(ctx, res, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, tp := range plan.Targets {
				var ge *providers.GuardError
				if errors.As(tp.Err, &ge) {
					refused++
					if ge.Limit != providers.LimitTotal || ge.Removed != 54 || ge.Total != 54 {
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
			rep := deploy.Apply(ctx, plan, opt)
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
