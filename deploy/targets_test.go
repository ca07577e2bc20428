package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// Issue 20 item 4: a saved plan whose targets are not exactly the config's is refused whole,
// naming the targets; every target of the fresh plan carries the refusal, so that a caller
// ignoring Restrict's result still applies nothing.
func TestRestrictRefusesOtherTargets(t *testing.T) {
	res, cfg := repo(t, map[string]string{"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": "username = bob\n"})
	ctx := context.Background()
	fp := fake.New()
	opt := options(fp)
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	in := deploy.Inputs{Config: "c", People: "p"}
	save := func() *deploy.SavedPlan {
		var buf bytes.Buffer
		if _, err := plan.Save(in).WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		s, err := deploy.ReadPlan(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		edit func(s *deploy.SavedPlan)
		want string // "" = accepted
	}{
		{"same targets", func(*deploy.SavedPlan) {}, ""},
		{"same targets in another order", func(s *deploy.SavedPlan) {
			s.Targets[0], s.Targets[1] = s.Targets[1], s.Targets[0]
		}, ""},
		{"one removed", func(s *deploy.SavedPlan) { s.Targets = s.Targets[1:] }, "missing from the plan file: apps"},
		{"all removed", func(s *deploy.SavedPlan) { s.Targets = nil }, "missing from the plan file: apps, shell, teams"},
		{"one added", func(s *deploy.SavedPlan) {
			s.Targets = append(s.Targets, deploy.SavedTarget{OU: "zz", Type: "ldap"}, deploy.SavedTarget{OU: "aa", Type: "ldap"})
		}, "not in the config: aa, zz"},
		{"one twice", func(s *deploy.SavedPlan) { s.Targets = append(s.Targets, s.Targets[0]) }, "twice in the plan file: apps"},
		{"another type", func(s *deploy.SavedPlan) { s.Targets[0].Type = "aad" }, "apps is aad in the plan file but ldap in the config"},
		{"swapped for another", func(s *deploy.SavedPlan) { s.Targets[0].OU = "zz" }, "missing from the plan file: apps; not in the config: zz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := save()
			tc.edit(saved)
			fresh, err := deploy.Build(ctx, res, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			err = fresh.Restrict(saved, in)
			if tc.want == "" {
				if err != nil || fresh.Err() != nil {
					t.Fatalf("refused: %v %v", err, fresh.Err())
				}
				return
			}
			var te *deploy.TargetsError
			if !errors.As(err, &te) || !errors.Is(err, deploy.ErrDrift) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Restrict = %v, want a TargetsError with %q", err, tc.want)
			}
			if len(fresh.Targets) != 3 {
				t.Errorf("%d targets left, want all 3 (none dropped)", len(fresh.Targets))
			}
			for _, tp := range fresh.Targets {
				if !errors.Is(tp.Err, err) {
					t.Errorf("%s: %v, want the refusal", tp.OU, tp.Err)
				}
			}
			rep, _ := deploy.Apply(ctx, fresh, deploy.ApplyOptions{})
			for _, tr := range rep.Targets {
				if len(tr.Outcomes) > 0 {
					t.Errorf("%s written: %v", tr.OU, tr.Outcomes)
				}
			}
			for _, c := range fp.Calls() {
				if c.Op != "read" {
					t.Errorf("write call %+v", c)
				}
			}
		})
	}
}
