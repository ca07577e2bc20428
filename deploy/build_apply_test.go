package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/guard"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// Each test pins a behaviour of Build or Apply
// that a deliberate bug in deploy.go left unnoticed.

// failingPrepare is the fake whose container creation fails.
type failingPrepare struct{ *fake.Provider }

func (failingPrepare) Prepare(context.Context, *providers.Target) error {
	return errors.New("insufficient access")
}

// desirer is the fake with a Desire that refuses some groups and sets an attribute on others.
type desirer struct {
	*fake.Provider
	refuse map[string]bool // by CN
}

func (d desirer) Desire(_ *providers.Target, g *providers.Group) error {
	if d.refuse[g.CN] {
		return errors.New("group " + g.CN + " has no gid_number")
	}
	g.Attrs = map[string][]string{"objectclass": {"posixGroup"}}
	return nil
}

func factories(p providers.Provider) *backend.Registry {
	f := func(*config.OU) (providers.Provider, error) { return p, nil }
	return backends.Spec().WithFactory(f, "ldap", "member_of")
}

func targetPlan(t *testing.T, plan *deploy.Plan, ou string) *deploy.TargetPlan {
	t.Helper()
	for _, tp := range plan.Targets {
		if tp.OU == ou {
			return tp
		}
	}
	t.Fatalf("no target %s in the plan", ou)
	return nil
}

func TestDeletePolicyNoMeansNoDeletion(t *testing.T) {
	for _, deletes := range []bool{false, true} {
		res, cfg := repo(t, defs)
		fp := fake.New()
		fp.Seed("apps", &providers.Group{DN: "cn=old,ou=Apps", Members: []string{"alice"}})
		fp.SetDeletes(deletes)
		plan, err := deploy.Build(context.Background(), res, cfg, options(fp))
		if err != nil || plan.Err() != nil {
			t.Fatal(err, plan.Err())
		}
		got := 0
		for _, c := range targetPlan(t, plan, "apps").Changes {
			if c.Kind == providers.DeleteGroup {
				got++
			}
		}
		if want := map[bool]int{false: 0, true: 1}[deletes]; got != want {
			t.Errorf("DeletesGroups=%v: %d deletions planned, want %d", deletes, got, want)
		}
	}
}

func TestFailedPrepareWritesNoGroupOfThatTarget(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.SetContainerMissing("teams")
	p := failingPrepare{fp}
	opt := deploy.Options{Backends: factories(p)}
	plan, err := deploy.Build(context.Background(), res, cfg, opt)
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	for _, c := range fp.Calls() {
		if c.Op == "apply" && c.OU == "teams" {
			t.Errorf("wrote %v to a target whose container could not be created", c.Change)
		}
	}
	var teams *deploy.TargetReport
	for _, tr := range rep.Targets {
		if tr.OU == "teams" {
			teams = tr
		}
	}
	if teams == nil || teams.Err == nil || !strings.Contains(teams.Err.Error(), "insufficient access") ||
		!strings.Contains(teams.Err.Error(), "no group was written") || len(teams.Outcomes) != 0 {
		t.Fatalf("teams report: %+v", teams)
	}
	// The other targets are written all the same.
	if len(fp.Groups("apps")) != 2 {
		t.Errorf("apps not written: %v", fp.Groups("apps"))
	}
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "teams: creating the container") {
		t.Errorf("report error: %v", err)
	}
}

func TestPreparedContainerIsReportedApplied(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.SetContainerMissing("teams")
	opt := options(fp)
	plan, _ := deploy.Build(context.Background(), res, cfg, opt)
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	for _, tr := range rep.Targets {
		if tr.OU != "teams" {
			continue
		}
		if len(tr.Outcomes) != 2 || tr.Outcomes[0].Change.Kind != providers.CreateContainer || tr.Outcomes[0].Status != providers.Applied ||
			tr.Outcomes[1].Change.Kind != providers.CreateGroup {
			t.Fatalf("outcomes %+v", tr.Outcomes)
		}
	}
	for _, c := range fp.Calls() {
		if c.Op == "apply" && c.Change.Kind == providers.CreateContainer {
			t.Errorf("the container change was passed to Apply as well: %v", c.Change)
		}
	}
}

func TestDesireErrorsFailTheTarget(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	p := desirer{Provider: fp, refuse: map[string]bool{"ssh": true, "wiki": true}}
	opt := deploy.Options{Backends: factories(p)}
	plan, err := deploy.Build(context.Background(), res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	apps := targetPlan(t, plan, "apps")
	if apps.Err == nil || !strings.Contains(apps.Err.Error(), "group ssh has no gid_number") ||
		!strings.Contains(apps.Err.Error(), "group wiki has no gid_number") {
		t.Fatalf("apps error: %v", apps.Err)
	}
	for _, c := range fp.Calls() {
		if c.Op == "read" && c.OU == "apps" {
			t.Error("a target with invalid desired groups was read")
		}
	}
	deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	if len(fp.Groups("apps")) != 0 {
		t.Errorf("apps written: %v", fp.Groups("apps"))
	}
	// The target whose groups are fine is planned with the attributes Desire set.
	teams := targetPlan(t, plan, "teams")
	if teams.Err != nil || len(teams.Changes) != 1 || teams.Changes[0].Desired.Attrs["objectclass"][0] != "posixGroup" {
		t.Fatalf("teams: %v %+v", teams.Err, teams.Changes)
	}
	// member_of lists apps, which could not be planned.
	if shell := targetPlan(t, plan, "shell"); shell.Err == nil || len(shell.Changes) != 0 {
		t.Errorf("shell: %v %v", shell.Err, shell.Changes)
	}
	if plan.FailedTargets() != 2 {
		t.Errorf("failed targets %d, want 2", plan.FailedTargets())
	}
	if tot := plan.Totals(); tot[providers.CreateGroup] != 1 || len(tot) != 1 {
		t.Errorf("totals %v count changes of failed targets", tot)
	}
	if err := plan.Err(); err == nil || !strings.HasPrefix(err.Error(), "apps: group ") {
		t.Errorf("plan error %q does not name the target first", err)
	}
}

func TestForceSkipsBothGuards(t *testing.T) {
	// Ten people lose their member_of value; in the other scenario, apps loses a big group.
	people := "alice: {cn: A}\n"
	for i := range 10 {
		people += fmt.Sprintf("p%d: {cn: P, shellentitlements: [\"cn=ssh,ou=Apps\"]}\n", i)
	}
	res, cfg := repo(t, map[string]string{"people.yaml": people, "defs/teams/sre.txt": "username = alice\n",
		"defs/apps/wiki.txt": "username = alice\n"})
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("u%02d", i))
	}
	for _, tc := range []struct {
		ou   string
		seed bool
	}{{"shell", false}, {"apps", true}} {
		for _, force := range []bool{false, true} {
			fp := fake.New()
			if tc.seed {
				fp.Seed("apps", &providers.Group{DN: "cn=ssh,ou=Apps", Members: many})
			}
			opt := options(fp)
			opt.Force = force
			plan, err := deploy.Build(context.Background(), res, cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			var ge *guard.Error
			refused := errors.As(targetPlan(t, plan, tc.ou).Err, &ge)
			if refused == force {
				t.Errorf("force=%v: %s refused=%v (%v)", force, tc.ou, refused, targetPlan(t, plan, tc.ou).Err)
			}
		}
	}
}

func TestGuardOptionIsUsed(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.Seed("apps", &providers.Group{DN: "cn=wiki,ou=Apps", Members: []string{"carol", "dave"}})
	g := guard.Guard{MaxRemovalShare: 0, MinRemovals: 1, MaxDeletedGroups: -1, MaxGroupRemovalShare: -1}
	opt := options(fp)
	opt.Guard = &g
	plan, _ := deploy.Build(context.Background(), res, cfg, opt)
	var ge *guard.Error
	if !errors.As(targetPlan(t, plan, "apps").Err, &ge) || ge.Removed != 1 {
		t.Fatalf("a guard allowing no removal let dave's go: %v", targetPlan(t, plan, "apps").Err)
	}
}

func TestCalcTimeIsTheSumOfThePhases(t *testing.T) {
	res, cfg := repo(t, defs)
	res.Timings.Load, res.Timings.Validate, res.Timings.Calculate = 1, 20, 300
	plan, err := deploy.Build(context.Background(), res, cfg, options(fake.New()))
	if err != nil {
		t.Fatal(err)
	}
	if plan.CalcTime != 321 {
		t.Errorf("CalcTime %d, want 321", plan.CalcTime)
	}
}

func TestBuildIsCancelled(t *testing.T) {
	res, cfg := repo(t, defs)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if plan, err := deploy.Build(ctx, res, cfg, options(fake.New())); !errors.Is(err, context.Canceled) || plan != nil {
		t.Fatalf("plan %v, err %v", plan, err)
	}
}

func TestReportCountsOnlyFailures(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	opt := options(fp)
	plan, _ := deploy.Build(context.Background(), res, cfg, opt)
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	// Mark one outcome skipped: not a failure. Then one unknown: a failure.
	tr := rep.Targets[slices.IndexFunc(rep.Targets, func(tr *deploy.TargetReport) bool { return len(tr.Outcomes) > 0 })]
	tr.Outcomes[0].Status, tr.Outcomes[0].Err = providers.Skipped, errors.New("ignored: not found")
	if err := rep.Err(); err != nil {
		t.Errorf("a skipped change is reported as an error: %v", err)
	}
	tr.Outcomes[0].Status = providers.Unknown
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), tr.OU+": ") || !strings.Contains(err.Error(), ": unknown: ignored") {
		t.Errorf("an unknown outcome: %v", err)
	}
}

// counting is the fake with request counters.
type counting struct {
	*fake.Provider
	n int64
}

func (c *counting) Counters() map[string]int64 {
	c.n++
	return map[string]int64{"requests": c.n}
}

func TestCountersAfterReadAndApply(t *testing.T) {
	res, cfg := repo(t, defs)
	p := &counting{Provider: fake.New()}
	opt := deploy.Options{Backends: factories(p), ReadConcurrency: 1}
	plan, err := deploy.Build(context.Background(), res, cfg, opt)
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	apps := targetPlan(t, plan, "apps")
	if apps.Counters["requests"] == 0 {
		t.Errorf("no counters after the read: %v", apps.Counters)
	}
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	for _, tr := range rep.Targets {
		if len(tr.Outcomes) > 0 && tr.Counters["requests"] == 0 {
			t.Errorf("%s: no counters after apply: %v", tr.OU, tr.Counters)
		}
	}
}

// skipping is the fake that skips (by configuration, like ignore_not_found) writes to wiki.
type skipping struct{ *fake.Provider }

func (s skipping) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	out := s.Provider.Apply(ctx, t, changes)
	for i, o := range out {
		if strings.HasPrefix(o.Change.DN, "cn=wiki") {
			out[i].Status, out[i].Err = providers.Skipped, errors.New("ignored: user not found")
		}
	}
	return out
}

// The write log says how each write went, at a level an operator can filter on.
func TestWriteLogLevels(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.FailApply(func(c *providers.Change) error {
		if strings.HasPrefix(c.DN, "cn=sre") {
			return errors.New("boom")
		}
		return nil
	})
	var buf strings.Builder
	opt := deploy.Options{Backends: factories(skipping{fp}), Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	plan, _ := deploy.Build(context.Background(), res, cfg, opt)
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	if err := rep.Err(); err == nil || strings.Contains(err.Error(), "wiki") {
		t.Errorf("report: %v (a skipped write is no failure)", err)
	}
	want := map[string]string{"cn=sre": "level=ERROR", "cn=wiki": "level=WARN", "cn=ssh": "level=INFO"}
	for _, line := range strings.Split(buf.String(), "\n") {
		for dn, level := range want {
			if strings.Contains(line, "ADD "+dn) {
				if !strings.HasPrefix(line, "time=") || !strings.Contains(line, level) {
					t.Errorf("%s logged as %q, want %s", dn, line, level)
				}
				delete(want, dn)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("not logged: %v\n%s", want, buf.String())
	}
}
