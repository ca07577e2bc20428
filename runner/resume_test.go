package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/journal"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
	"github.com/entitlements-go/entitlements/runner"
)

// bigRepo writes a config repo whose OUs are given by groupsYAML, with people p0..p(n-1), one
// group file per entry of defs (path under defs/ → members), and a GitRepo auditor on a local
// bare repository (returned).
func bigRepo(t *testing.T, groupsYAML string, people int, defs map[string][]string) (repo *calc.Repo, res *calc.Result, remote, dir string) {
	t.Helper()
	dir = t.TempDir()
	remote = filepath.Join(t.TempDir(), "audit.git")
	git(t, dir, "init", "--quiet", "--bare", remote)
	var ppl strings.Builder
	for i := range people {
		fmt.Fprintf(&ppl, "p%d: {}\n", i)
	}
	files := map[string]string{
		"config.yaml": "configuration_path: ./defs\ngroups:\n" + groupsYAML + `people:
  y: {type: yaml, config: {filename: people.yaml}}
people_data_source: y
auditors:
  - auditor_class: GitRepo
    checkout_directory: ` + filepath.Join(dir, "checkout") + `
    commit_message: deploy
    git_name: tester
    git_email: tester@example.invalid
    repo_url: ` + remote + "\n",
		"people.yaml": ppl.String(),
	}
	for p, ms := range defs {
		var b strings.Builder
		for _, m := range ms {
			fmt.Fprintf(&b, "username = %s\n", m)
		}
		files["defs/"+p] = b.String()
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := calc.Load(t.Context(), filepath.Join(dir, "config.yaml"), calc.Options{Types: backends.Types(),
		Now: fixedNow, BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res, err = repo.Calculate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return repo, res, remote, dir
}

var fixedNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func members(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("p%d", from+i)
	}
	return out
}

// fakeBig is 2,000 member changes against the fake provider: 100 groups of "teams" that exist
// with 5 of their 10 members and one member too many (+5 -1 each), 140 groups of "apps" to
// create with 10 members, and a group of "teams" to delete. It returns the repo and a fake
// whose applied changes (not those refused because the run was cancelled) are counted.
func fakeBig(t *testing.T) (*calc.Repo, *calc.Result, string, *fake.Provider, *backend.Registry) {
	ldapOU := func(key, base string) string {
		return "  " + key + `: {type: ldap, base: "` + base + `", ldap_uri: "ldap://127.0.0.1:1", ldap_binddn: cn=admin, ldap_bindpw: x, person_dn_format: "uid=%KEY%,ou=People"}` + "\n"
	}
	defs := map[string][]string{}
	fp := fake.New()
	for i := range 100 {
		defs[fmt.Sprintf("teams/t%03d.txt", i)] = members(i, 10)
		fp.Seed("teams", &providers.Group{DN: fmt.Sprintf("cn=t%03d,ou=Teams", i), CN: fmt.Sprintf("t%03d", i),
			Members: append(members(i, 5), "p999")})
	}
	for i := range 140 {
		defs[fmt.Sprintf("apps/a%03d.txt", i)] = members(2*i, 10)
	}
	fp.Seed("teams", &providers.Group{DN: "cn=old,ou=Teams", CN: "old", Members: []string{"p1"}})
	repo, res, remote, _ := bigRepo(t, ldapOU("teams", "ou=Teams")+ldapOU("apps", "ou=Apps"), 1000, defs)
	reg := backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil })
	return repo, res, remote, fp, reg
}

// stopAfter makes the fake cancel the run once n changes were applied in it, and counts the
// applied creations by DN in created.
func stopAfter(fp *fake.Provider, n int, cancel context.CancelFunc, created map[string]int) {
	var mu sync.Mutex
	applied := 0
	fp.FailApply(func(c *providers.Change) error {
		mu.Lock()
		defer mu.Unlock()
		if c.Kind == providers.CreateGroup {
			created[c.DN]++
		}
		applied++
		if applied == n {
			cancel()
		}
		return nil
	})
}

func memberOps(p *deploy.Plan) int {
	n := 0
	for _, t := range p.Targets {
		for _, c := range t.Changes {
			n += len(c.Add) + len(c.Remove)
		}
	}
	return n
}

// An apply stopped (its context cancelled) at one or several points and resumed from its
// journal ends exactly converged, creates nothing twice, and each run's audit record is made.
func TestStoppedApplyResumes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stops []int // changes applied by each run before it is stopped
	}{
		{"early", []int{1}},
		{"between targets", []int{141}},
		{"three stops", []int{30, 120, 60}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, res, remote, fp, reg := fakeBig(t)
			opt := runner.Options{Backends: reg}
			first, err := runner.Plan(t.Context(), repo, res, opt)
			if err != nil {
				t.Fatal(err)
			}
			if n := memberOps(first); n != 2001 {
				t.Fatalf("the plan has %d member changes, want 2,001", n)
			}
			saved := first.Save(deploy.InputsOf(repo))
			total := len(first.Targets[0].Changes) + len(first.Targets[1].Changes)
			opt.Saved, opt.Journal = saved, filepath.Join(t.TempDir(), "plan.json.journal")
			created := map[string]int{}
			made := 0
			for i, stop := range append(tc.stops, 0) {
				ctx, cancel := context.WithCancel(t.Context())
				stopAfter(fp, stop, cancel, created)
				opt.Resume = i > 0
				plan, err := runner.Plan(ctx, repo, res, opt)
				if err != nil || plan.Err() != nil {
					t.Fatalf("run %d: plan: %v %v", i+1, err, plan.Err())
				}
				out, err := runner.Apply(ctx, repo, res, plan, opt)
				cancel()
				if out.Run != i+1 {
					t.Errorf("run %d: journal run %d", i+1, out.Run)
				}
				if len(out.Audit) != 1 || len(out.Audit[0].Commits) == 0 {
					t.Errorf("run %d: audit %+v: want the run's commits", i+1, out.Audit)
				}
				if stop == 0 {
					if err != nil || out.Status != runner.Done || out.Summary() != "done" || out.Made != total {
						t.Fatalf("last run: %v, %s, made %d of %d", err, out.Summary(), out.Made, out.Planned)
					}
					break
				}
				made += stop
				want := fmt.Sprintf("stopped (resumable: %d of %d done)", made, total)
				if !errors.Is(err, context.Canceled) || out.Status != runner.Stopped || out.Summary() != want || out.EarlierMade != made-stop {
					t.Fatalf("run %d: %v, %q (earlier %d), want %q", i+1, err, out.Summary(), out.EarlierMade, want)
				}
			}
			final, err := runner.Plan(t.Context(), repo, res, runner.Options{Backends: reg})
			if err != nil || final.Err() != nil {
				t.Fatal(err, final.Err())
			}
			if got := final.Totals(); len(got) != 0 {
				t.Errorf("after the last run the plan has changes %v", got)
			}
			if len(created) != 140 {
				t.Errorf("%d groups created, want 140", len(created))
			}
			for dn, n := range created {
				if n != 1 {
					t.Errorf("%s created %d times", dn, n)
				}
			}
			if got := len(strings.Split(git(t, remote, "log", "--all", "--format=%s"), "\n")); got < len(tc.stops)+1 {
				t.Errorf("the audit log has %d commits for %d runs", got, len(tc.stops)+1)
			}
		})
	}
}

// A resume refuses a target that somebody else changed since the plan was made (other than by
// the journal's writes), and fails. A resume is the apply of a saved plan: whole or not at
// all, so by default that refusal stops every target; with AllowPartial the others resume.
func TestResumeRefusesForeignChanges(t *testing.T) {
	for _, partial := range []bool{false, true} {
		t.Run(fmt.Sprintf("AllowPartial=%v", partial), func(t *testing.T) {
			repo, res, _, fp, reg := fakeBig(t)
			opt := runner.Options{Backends: reg, AllowPartial: partial}
			first, err := runner.Plan(t.Context(), repo, res, opt)
			if err != nil {
				t.Fatal(err)
			}
			opt.Saved, opt.Journal = first.Save(deploy.InputsOf(repo)), filepath.Join(t.TempDir(), "j")
			ctx, cancel := context.WithCancel(t.Context())
			stopAfter(fp, 10, cancel, map[string]int{})
			plan, err := runner.Plan(ctx, repo, res, opt)
			if err != nil {
				t.Fatal(err)
			}
			if out, _ := runner.Apply(ctx, repo, res, plan, opt); out.Status != runner.Stopped {
				t.Fatalf("first run: %s", out.Summary())
			}
			cancel()
			fp.FailApply(nil)
			// Somebody adds a member to a group the plan creates (apps, not reached yet).
			fp.Seed("apps", &providers.Group{DN: "cn=a139,ou=Apps", CN: "a139", Members: []string{"p1"}})
			plan, out, err := runner.Resume(t.Context(), repo, res, opt.Saved, opt.Journal, opt)
			var de *deploy.DriftError
			if !errors.As(plan.Targets[0].Err, &de) || plan.Targets[0].OU != "apps" {
				t.Fatalf("apps: %v, want a drift refusal", plan.Targets[0].Err)
			}
			if partial {
				if err != nil || plan.Targets[1].Err != nil {
					t.Fatalf("resume error %v, teams %v: want teams resumed", err, plan.Targets[1].Err)
				}
			} else if !errors.Is(err, runner.ErrNotWhole) || plan.Targets[1].Err == nil {
				t.Fatalf("resume error %v, teams %v: want ErrNotWhole and teams not applied", err, plan.Targets[1].Err)
			}
			if out.Status != runner.Failed || !strings.HasPrefix(out.Summary(), "failed") {
				t.Errorf("outcome %s, want failed", out.Summary())
			}
		})
	}
}

// A journal is never used with another plan, and a new apply does not overwrite one.
func TestJournalBelongsToItsPlan(t *testing.T) {
	repo, res, _, _, reg := fakeBig(t)
	opt := runner.Options{Backends: reg}
	first, err := runner.Plan(t.Context(), repo, res, opt)
	if err != nil {
		t.Fatal(err)
	}
	saved := first.Save(deploy.InputsOf(repo))
	path := filepath.Join(t.TempDir(), "j")
	w, err := journal.Create(path, "another-plan")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, _, err = runner.Resume(t.Context(), repo, res, saved, path, opt)
	var pe *journal.PlanError
	if !errors.As(err, &pe) {
		t.Errorf("resume with another plan's journal: %v, want a *journal.PlanError", err)
	}
	opt.Saved, opt.Journal = saved, path
	plan, err := runner.Plan(t.Context(), repo, res, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Apply(t.Context(), repo, res, plan, opt); !errors.Is(err, journal.ErrExists) {
		t.Errorf("apply over an existing journal: %v, want journal.ErrExists", err)
	}
	opt.Saved = nil
	if _, err := runner.Plan(t.Context(), repo, res, opt); !errors.Is(err, runner.ErrJournalNeedsPlan) {
		t.Errorf("journal without a plan: %v", err)
	}
}
