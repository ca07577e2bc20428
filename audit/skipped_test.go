package audit

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

const skippedCfg = `configuration_path: ./defs
backends:
  l:
    type: ldap
    ldap_uri: ldap://127.0.0.1:1
    ldap_binddn: cn=admin
    ldap_bindpw: x
    person_dn_format: uid=%KEY%,ou=People
groups:
  teams:
    backend: l
    base: ou=Teams,dc=example,dc=com
  apps:
    backend: l
    base: ou=Apps,dc=example,dc=com
  notes:
    type: dummy
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`

// Issue 20 item 4: the audit log records only what was applied. A target that the plan does
// not hold (a library caller dropped it) or that could not be planned gets nothing written
// for it: its desired state, recorded as applied, would make the next predictive plan trust
// access that was never changed.
func TestRunRecordsNothingForSkippedTargets(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	fsys := fstest.MapFS{
		"config.yaml":        {Data: []byte(skippedCfg)},
		"people.yaml":        {Data: []byte("alice: {}\nbob: {}\ncarol: {}\n")},
		"defs/teams/sre.txt": {Data: []byte("username = alice\n")},
		"defs/apps/wiki.txt": {Data: []byte("username = bob\n")},
		"defs/notes/all.txt": {Data: []byte("username = carol\n")},
	}
	repo, err := calc.LoadFS(ctx, fsys, "config.yaml", calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const (
		dnSRE  = "cn=sre,ou=Teams,dc=example,dc=com"
		dnWiki = "cn=wiki,ou=Apps,dc=example,dc=com"
		pSRE   = "dc=com/dc=example/ou=Teams/cn=sre"
		pWiki  = "dc=com/dc=example/ou=Apps/cn=wiki"
	)
	for _, tc := range []struct {
		name string
		// before (on the provider) and after (on the plan) make the teams target not applied.
		before func(fp *fake.Provider)
		after  func(p *deploy.Plan)
	}{
		{"target dropped from the plan", nil, func(p *deploy.Plan) {
			var kept []*deploy.TargetPlan
			for _, tp := range p.Targets {
				if tp.OU != "teams" {
					kept = append(kept, tp)
				}
			}
			p.Targets = kept
		}},
		{"target whose read failed", func(fp *fake.Provider) {
			fp.FailRead("teams", errors.New("teams is down"))
		}, nil},
		{"target refused", nil, func(p *deploy.Plan) {
			for _, tp := range p.Targets {
				if tp.OU == "teams" {
					tp.Err = &deploy.DriftError{OU: "teams", Reason: "the current state of teams changed"}
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := bare(t)
			a := newAuditor(t, remote, filepath.Join(t.TempDir(), "checkout"), "")
			// The last audited state: carol in sre, nobody new in wiki.
			commitRun(t, a, &Run{Groups: []*Group{{DN: dnSRE, Members: []string{"carol"}}, {DN: dnWiki, Members: []string{"carol"}}},
				Actions: map[string]*Action{}, Confirmed: map[string]bool{}})

			fp := fake.New()
			fp.Seed("teams", &providers.Group{DN: dnSRE, CN: "sre", Members: []string{"carol"}})
			fp.Seed("apps", &providers.Group{DN: dnWiki, CN: "wiki", Members: []string{"carol"}})
			f := func(*config.OU) (providers.Provider, error) { return fp, nil }
			opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap")}
			if tc.before != nil {
				tc.before(fp)
			}
			plan, err := deploy.Build(ctx, res, repo.Config(), opt)
			if err != nil {
				t.Fatal(err)
			}
			if tc.after != nil {
				tc.after(plan)
			}
			rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
			run := NewRun(res, plan, rep)
			if run.ProviderErr == nil || !strings.Contains(run.ProviderErr.Error(), "teams") {
				t.Errorf("ProviderErr %v: the run must say that teams was not applied", run.ProviderErr)
			}
			if a := run.Actions[key(dnSRE)]; a != nil && a.Succeeded {
				t.Errorf("sre recorded as applied: %+v", a)
			}
			if err := a.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Commit(ctx, run); err != nil {
				t.Fatal(err)
			}
			got := tree(t, remote)
			if got[pSRE] != "carol\n" {
				t.Errorf("sre (not applied) recorded as %q, want the last audited %q", got[pSRE], "carol\n")
			}
			// The apps target was applied: bob replaced carol.
			if got[pWiki] != "bob\n" {
				t.Errorf("wiki (applied) recorded as %q", got[pWiki])
			}
			if gs := fp.Groups("teams"); len(gs) != 1 || strings.Join(gs[0].Members, ",") != "carol" {
				t.Errorf("teams was written to: %+v", gs)
			}
		})
	}
}
