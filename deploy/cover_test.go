package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// coverer is a fake provider whose removals make the same removals in every other target (as
// a GitHub org removal does in the org's teams).
type coverer struct{ *fake.Provider }

func (cv coverer) Cover(_ *providers.Target, mine []*providers.Change, _ *providers.Target, _ providers.Provider, theirs []*providers.Change) []*providers.Change {
	gone := map[string]*providers.Change{}
	for _, c := range mine {
		for _, u := range c.Remove {
			gone[u] = c
		}
	}
	out := make([]*providers.Change, 0, len(theirs))
	for _, c := range theirs {
		cp := *c
		for _, u := range c.Remove {
			if by := gone[u]; by != nil {
				cp.Covered = append(cp.Covered, providers.Cover{Member: u, By: by})
			}
		}
		out = append(out, &cp)
	}
	return out
}

// coverPlan: bob leaves teams/sre (the covering target, "teams", which the plan lists after
// "apps") and apps/ssh, whose removal of bob teams covers; extra are more ssh members.
func coverPlan(t *testing.T, fp *fake.Provider, ssh string) (*deploy.Plan, deploy.Options) {
	t.Helper()
	res, cfg := repo(t, map[string]string{"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": ssh})
	fp.Seed("teams", &providers.Group{DN: "cn=sre,ou=Teams", CN: "sre", Description: "sre", Members: []string{"alice", "bob"}})
	fp.Seed("apps", &providers.Group{DN: "cn=ssh,ou=Apps", CN: "ssh", Description: "ssh", Members: []string{"alice", "bob"}})
	f := func(ou *config.OU) (providers.Provider, error) {
		if ou.Key == "teams" {
			return coverer{fp}, nil
		}
		return fp, nil
	}
	opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of"), Force: true}
	plan, err := deploy.Build(context.Background(), res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	return plan, opt
}

func applyCalls(fp *fake.Provider) (ous []string, byDN map[string]*providers.Change) {
	byDN = map[string]*providers.Change{}
	for _, c := range fp.Calls() {
		if c.Op == "apply" {
			ous = append(ous, c.OU)
			byDN[c.Change.DN] = c.Change
		}
	}
	return ous, byDN
}

// A change that only removes what another target's change removes is shown covered, counted
// apart, applied after the covering target and not sent once that change succeeded.
func TestCoveredChangeIsNotSent(t *testing.T) {
	fp := fake.New()
	plan, opt := coverPlan(t, fp, "username = alice\n")
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	ssh := targetPlan(t, plan, "apps").Changes[0]
	if !ssh.OnlyCovered() || ssh.CoveredBy("bob") != targetPlan(t, plan, "teams").Changes[0] {
		t.Fatalf("ssh change %+v", ssh)
	}
	if tot := plan.Totals(); tot[providers.UpdateGroup] != 1 || plan.Covered() != 1 {
		t.Errorf("totals %v, covered %d", tot, plan.Covered())
	}
	if sc := deploy.SaveChange(ssh); len(sc.Covered) != 1 || sc.Covered[0] != (deploy.SavedCover{Member: "bob", OU: "teams", DN: "cn=sre,ou=Teams"}) {
		t.Errorf("saved %+v", sc.Covered)
	}
	rep, err := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	if err != nil {
		t.Fatal(err)
	}
	if ous, byDN := applyCalls(fp); !slices.Equal(ous, []string{"teams"}) || byDN["cn=ssh,ou=Apps"] != nil {
		t.Errorf("applied %v", ous)
	}
	var got []string
	for _, tr := range rep.Targets {
		got = append(got, tr.OU)
	}
	if !slices.Equal(got, []string{"apps", "teams", "shell"}) {
		t.Errorf("report in order %v, want the plan's", got)
	}
	if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Change != ssh || o[0].Status != providers.Covered || !o[0].Status.OK() {
		t.Errorf("apps outcomes %+v", o)
	}
}

// When the covering change fails, the covered removal is sent after all.
func TestCoveredRemovalIsSentWhenTheCoveringChangeFails(t *testing.T) {
	fp := fake.New()
	plan, opt := coverPlan(t, fp, "username = alice\n")
	fp.FailApply(func(c *providers.Change) error {
		if c.DN == "cn=sre,ou=Teams" {
			return errors.New("boom")
		}
		return nil
	})
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	ous, byDN := applyCalls(fp)
	if !slices.Equal(ous, []string{"teams", "apps"}) || byDN["cn=ssh,ou=Apps"] == nil ||
		!slices.Equal(byDN["cn=ssh,ou=Apps"].Remove, []string{"bob"}) {
		t.Fatalf("applied %v %v", ous, byDN)
	}
	if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Status != providers.Applied {
		t.Errorf("apps outcomes %+v", o)
	}
}

// A change with more to do than its covered removals is sent without them; its outcome names
// the plan's change.
func TestPartlyCoveredChangeIsSentWithoutTheCoveredRemovals(t *testing.T) {
	fp := fake.New()
	plan, opt := coverPlan(t, fp, "username = alice\nusername = carol\n")
	ssh := targetPlan(t, plan, "apps").Changes[0]
	if ssh.OnlyCovered() || len(ssh.Covered) != 1 || plan.Covered() != 0 {
		t.Fatalf("ssh %+v", ssh)
	}
	rep, err := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	if err != nil {
		t.Fatal(err)
	}
	_, byDN := applyCalls(fp)
	if sent := byDN["cn=ssh,ou=Apps"]; sent == nil || len(sent.Remove) != 0 || !slices.Equal(sent.Add, []string{"carol"}) {
		t.Fatalf("sent %+v", sent)
	}
	if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Change != ssh || o[0].Status != providers.Applied {
		t.Errorf("apps outcomes %+v", o)
	}
}

// A target that will not be applied covers nothing.
func TestRefusedTargetCoversNothing(t *testing.T) {
	fp := fake.New()
	fp.FailRead("teams", errors.New("down"))
	plan, _ := coverPlan(t, fp, "username = alice\n")
	if targetPlan(t, plan, "teams").Err == nil {
		t.Fatal("teams planned")
	}
	if ssh := targetPlan(t, plan, "apps").Changes[0]; len(ssh.Covered) != 0 {
		t.Fatalf("covered by a target that failed: %+v", ssh.Covered)
	}
}

// A saved plan keeps the covers: the same plan built again is not drift.
func TestSavedPlanWithCovers(t *testing.T) {
	fp := fake.New()
	plan, _ := coverPlan(t, fp, "username = alice\n")
	var buf bytes.Buffer
	if _, err := plan.Save(deploy.Inputs{}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	saved, err := deploy.ReadPlan(&buf)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := coverPlan(t, fake.New(), "username = alice\n")
	again.Restrict(saved, deploy.Inputs{})
	if err := again.Err(); err != nil {
		t.Fatal(err)
	}
}
