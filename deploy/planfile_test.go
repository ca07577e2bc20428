package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// TestSavedPlanRestrict: a saved plan applies only to targets whose state and inputs are
// what it was made from; a drifted target is refused with a DriftError and not written.
func TestSavedPlanRestrict(t *testing.T) {
	files := map[string]string{"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": "username = bob\n"}
	res, cfg := repo(t, files)
	ctx := context.Background()
	fp := fake.New()
	fp.Seed("teams", &providers.Group{DN: "cn=sre,ou=Teams", Members: []string{"carol"}})
	opt := options(fp)
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	in := deploy.Inputs{Config: "c1", People: "p1"}
	var buf bytes.Buffer
	if _, err := plan.Save(in).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	saved, err := deploy.ReadPlan(&buf)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name    string
		drift   func()
		inputs  deploy.Inputs
		refused []string
	}{
		{"unchanged", func() {}, in, nil},
		{"state of one target drifted", func() {
			fp.Seed("teams", &providers.Group{DN: "cn=sre,ou=Teams", Members: []string{"carol", "bob"}})
		}, in, []string{"teams"}},
		{"people changed", func() {}, deploy.Inputs{Config: "c1", People: "p2"}, []string{"apps", "teams", "shell"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.drift()
			fresh, err := deploy.Build(ctx, res, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			fresh.Restrict(saved, tc.inputs)
			var refused []string
			for _, tp := range fresh.Targets {
				if tp.Err != nil {
					if !errors.Is(tp.Err, deploy.ErrDrift) {
						t.Errorf("%s: %v is not a drift error", tp.OU, tp.Err)
					}
					refused = append(refused, tp.OU)
				}
			}
			for _, want := range tc.refused {
				if !strings.Contains(strings.Join(refused, ","), want) {
					t.Errorf("%s not refused (refused: %v)", want, refused)
				}
			}
			if len(tc.refused) == 0 && len(refused) > 0 {
				t.Errorf("refused %v", refused)
			}
		})
	}
}

func TestReadPlanRejects(t *testing.T) {
	for _, in := range []string{`{"version": 2, "inputs": {}, "targets": []}`, `{"version": 1, "bogus": 1}`, `not json`} {
		if _, err := deploy.ReadPlan(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
}

// TestApplyReturnsError: Apply's error is nil only when every change is in place.
func TestApplyReturnsError(t *testing.T) {
	res, cfg := repo(t, defs)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		fail    bool
		cancel  bool
		wantErr bool
	}{
		{"all applied", false, false, false},
		{"a change fails", true, false, true},
		{"cancelled", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := fake.New()
			if tc.fail {
				fp.FailApply(func(c *providers.Change) error {
					if strings.Contains(c.DN, "wiki") {
						return errors.New("boom")
					}
					return nil
				})
			}
			plan, err := deploy.Build(ctx, res, cfg, options(fp))
			if err != nil {
				t.Fatal(err)
			}
			actx, cancel := context.WithCancel(ctx)
			if tc.cancel {
				cancel()
			}
			defer cancel()
			rep, err := deploy.Apply(actx, plan, deploy.ApplyOptions{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if rep == nil {
				t.Fatal("no report")
			}
			if tc.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("err %v is not context.Canceled", err)
			}
		})
	}
}
