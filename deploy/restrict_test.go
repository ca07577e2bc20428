package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// Written from mutation testing (issue 15): each reason a saved plan is refused for, and the
// error of a cancelled Apply.

func TestRestrictReasons(t *testing.T) {
	files := map[string]string{"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": "username = bob\n"}
	res, cfg := repo(t, files)
	ctx := context.Background()
	in := deploy.Inputs{Config: "c1", People: "p1"}
	save := func(p *deploy.Plan) *deploy.SavedPlan {
		t.Helper()
		var buf bytes.Buffer
		if _, err := p.Save(in).WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		saved, err := deploy.ReadPlan(&buf)
		if err != nil {
			t.Fatal(err)
		}
		return saved
	}
	build := func(fp *fake.Provider) *deploy.Plan {
		t.Helper()
		p, err := deploy.Build(ctx, res, cfg, options(fp))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	seedTeams := func(fp *fake.Provider, members ...string) {
		fp.Seed("teams", &providers.Group{DN: "cn=sre,ou=Teams", CN: "sre", Description: "sre", Members: members})
	}
	fp := fake.New()
	seedTeams(fp, "carol")
	saved := save(build(fp))
	var teamsFP string
	for _, st := range saved.Targets {
		if st.OU == "teams" {
			teamsFP = st.Fingerprint
		}
	}
	if len(teamsFP) <= 12 {
		t.Fatalf("fingerprint %q", teamsFP)
	}

	reason := func(p *deploy.Plan, ou string) string {
		t.Helper()
		for _, tp := range p.Targets {
			if tp.OU != ou {
				continue
			}
			var de *deploy.DriftError
			if errors.As(tp.Err, &de) {
				return de.Reason
			}
			if tp.Err != nil {
				return "error: " + tp.Err.Error()
			}
			return ""
		}
		return "missing"
	}
	for _, tc := range []struct {
		name   string
		fresh  func() *deploy.Plan
		inputs deploy.Inputs
		want   map[string]string // OU -> part of the reason ("" = not refused)
	}{
		{"unchanged", func() *deploy.Plan { return build(fp) }, in, map[string]string{"teams": "", "apps": ""}},
		{"config changed", func() *deploy.Plan { return build(fp) }, deploy.Inputs{Config: "c2", People: "p1"},
			map[string]string{"teams": "the config repo", "apps": "the config repo"}},
		{"people changed", func() *deploy.Plan { return build(fp) }, deploy.Inputs{Config: "c1", People: "p2"},
			map[string]string{"teams": "the people data", "apps": "the people data"}},
		{"state drifted", func() *deploy.Plan {
			f := fake.New()
			seedTeams(f, "carol", "dave")
			return build(f)
		}, in, map[string]string{"teams": "the current state of teams changed (fingerprint ", "apps": ""}},
	} {
		fresh := tc.fresh()
		fresh.Restrict(saved, tc.inputs)
		for ou, want := range tc.want {
			got := reason(fresh, ou)
			if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
				t.Errorf("%s: %s refused for %q, want %q", tc.name, ou, got, want)
			}
		}
		if tc.name == "state drifted" {
			got := reason(fresh, "teams")
			if !strings.Contains(got, "planned from "+teamsFP[:12]+")") || strings.Contains(got, teamsFP) {
				t.Errorf("drift reason %q: want the fingerprints cut to 12 characters", got)
			}
		}
	}

	// The changes differ while the state is the same: a saved plan made before a change of
	// the desired groups, checked with the same inputs digest (a caller that does not hash).
	fp2 := fake.New()
	seedTeams(fp2, "carol")
	res2, cfg2 := repo(t, map[string]string{"defs/teams/sre.txt": "username = bob\n", "defs/apps/ssh.txt": "username = bob\n"})
	fresh, err := deploy.Build(ctx, res2, cfg2, options(fp2))
	if err != nil {
		t.Fatal(err)
	}
	fresh.Restrict(saved, in)
	if got := reason(fresh, "teams"); !strings.Contains(got, "the changes for teams differ") {
		t.Errorf("changed changes: %q", got)
	}

	// A target the saved plan could not plan is not applied now either; one that cannot be
	// planned now keeps its own error.
	bad := fake.New()
	seedTeams(bad, "carol")
	bad.FailRead("apps", errors.New("apps is down"))
	savedBad := save(build(bad))
	fresh = build(fp)
	fresh.Restrict(savedBad, in)
	if got := reason(fresh, "apps"); !strings.Contains(got, "the saved plan has an error for this target: ") || !strings.Contains(got, "apps is down") {
		t.Errorf("saved error: %q", got)
	}
	fresh = build(bad)
	fresh.Restrict(saved, in)
	if got := reason(fresh, "apps"); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "apps is down") {
		t.Errorf("error now: %q", got)
	}
}

// cancelling cancels the run while it applies the changes of the target teams (the last one
// with changes), all of which succeed.
type cancelling struct {
	*fake.Provider
	cancel context.CancelFunc
}

func (c cancelling) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	out := c.Provider.Apply(ctx, t, changes)
	if t.OU.Key == "teams" {
		c.cancel()
	}
	return out
}

// A run cancelled during its last write returns the context's error, even though every
// change it made was applied.
func TestApplyCancelledAtTheEnd(t *testing.T) {
	res, cfg := repo(t, map[string]string{"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": "username = bob\n"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := cancelling{fake.New(), cancel}
	opt := options(fake.New())
	opt.Backends = opt.Backends.WithFactory(func(*config.OU) (providers.Provider, error) { return p, nil }, "ldap")
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	rep, err := deploy.Apply(ctx, plan, opt.ApplyOptions())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Apply = %v, want context.Canceled", err)
	}
	if rep == nil || rep.Err() != nil {
		t.Errorf("report %v: every change was applied", rep.Err())
	}
}
