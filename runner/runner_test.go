package runner_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
	"github.com/entitlements-go/entitlements/runner"
)

// fixture is a config repo with two LDAP OUs and a GitRepo auditor whose remote is a local
// bare repository.
type fixture struct {
	repo   *calc.Repo
	res    *calc.Result
	remote string
	fp     *fake.Provider
	opt    runner.Options
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newFixture(t *testing.T, repoURL string) *fixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	remote := filepath.Join(t.TempDir(), "audit.git")
	git(t, dir, "init", "--quiet", "--bare", remote)
	if repoURL == "" {
		repoURL = remote
	}
	files := map[string]string{
		"config.yaml": `configuration_path: ./defs
groups:
  teams: {type: ldap, base: "ou=Teams", ldap_uri: "ldap://127.0.0.1:1", ldap_binddn: cn=admin, ldap_bindpw: x, person_dn_format: "uid=%KEY%,ou=People"}
  apps: {type: ldap, base: "ou=Apps", ldap_uri: "ldap://127.0.0.1:1", ldap_binddn: cn=admin, ldap_bindpw: x, person_dn_format: "uid=%KEY%,ou=People"}
people:
  y: {type: yaml, config: {filename: people.yaml}}
people_data_source: y
auditors:
  - auditor_class: GitRepo
    checkout_directory: ` + filepath.Join(dir, "checkout") + `
    commit_message: deploy
    git_name: tester
    git_email: tester@example.invalid
    repo_url: ` + repoURL + `
`,
		"people.yaml":        "alice: {}\nbob: {}\n",
		"defs/teams/sre.txt": "username = alice\nusername = bob\n",
		"defs/apps/ssh.txt":  "group = teams/sre\n",
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
		Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := repo.Calculate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	fp := fake.New()
	reg := backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil })
	return &fixture{repo: repo, res: res, remote: remote, fp: fp, opt: runner.Options{Backends: reg}}
}

// commits lists the commit messages of the audit remote (none when it has no branch).
func (f *fixture) commits(t *testing.T) []string {
	t.Helper()
	if git(t, f.remote, "for-each-ref") == "" {
		return nil
	}
	return strings.Split(git(t, f.remote, "log", "--all", "--format=%s"), "\n")
}

func (f *fixture) run(t *testing.T, ctx context.Context) (*runner.Outcome, error) {
	t.Helper()
	plan, err := runner.Plan(ctx, f.repo, f.res, f.opt)
	if err != nil {
		t.Fatal(err)
	}
	return runner.Apply(ctx, f.repo, f.res, plan, f.opt)
}

func TestApplyWritesTheAuditLog(t *testing.T) {
	f := newFixture(t, "")
	out, err := f.run(t, t.Context())
	if err != nil || out.Err() != nil {
		t.Fatal(err, out.Err())
	}
	if len(f.fp.Groups("teams")) != 1 || len(f.fp.Groups("apps")) != 1 {
		t.Fatalf("groups written: teams %v apps %v", f.fp.Groups("teams"), f.fp.Groups("apps"))
	}
	if len(out.Audit) != 1 || len(out.Audit[0].Commits) == 0 {
		t.Fatalf("audit records %+v: want the auditor's commits", out.Audit)
	}
	if got := f.commits(t); len(got) == 0 {
		t.Fatal("the audit remote has no commit")
	}
}

// A simulated run (a state file) never touches the audit log: the log is the predictive state
// of the next real run, which would otherwise trust groups nobody wrote.
func TestSimulatedApplyNeverAudits(t *testing.T) {
	f := newFixture(t, "")
	f.opt.Simulated = true
	out, err := f.run(t, t.Context())
	if err != nil || out.Err() != nil {
		t.Fatal(err, out.Err())
	}
	if !out.Simulated || len(out.Audit) != 0 {
		t.Errorf("outcome %+v: a simulated run records no audit", out)
	}
	if got := f.commits(t); len(got) != 0 {
		t.Errorf("the audit remote has commits %q after a simulated run", got)
	}
	if len(f.fp.Groups("teams")) != 1 {
		t.Error("the simulated providers were not written")
	}
}

// An auditor that cannot be set up stops the run before the first write.
func TestAuditorSetupFailureWritesNothing(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "no-such-remote.git"))
	out, err := f.run(t, t.Context())
	if err == nil || !strings.Contains(err.Error(), "nothing was applied") {
		t.Fatalf("error %v, want the setup failure", err)
	}
	if out.Report != nil || hasWrite(f.fp.Calls()) {
		t.Errorf("something was written: report %v calls %v", out.Report, f.fp.Calls())
	}
}

func hasWrite(calls []fake.Call) bool {
	for _, c := range calls {
		if c.Op != "read" {
			return true
		}
	}
	return false
}

// A saved plan whose targets are not the config's refuses the run.
func TestSavedPlanWithOtherTargetsIsRefused(t *testing.T) {
	f := newFixture(t, "")
	plan, err := runner.Plan(t.Context(), f.repo, f.res, f.opt)
	if err != nil {
		t.Fatal(err)
	}
	saved := plan.Save(deploy.InputsOf(f.repo))
	saved.Targets = saved.Targets[:1]
	f.opt.Saved = saved
	_, err = runner.Plan(t.Context(), f.repo, f.res, f.opt)
	var te *deploy.TargetsError
	if !errors.As(err, &te) {
		t.Fatalf("error %v, want a *deploy.TargetsError", err)
	}
}

func TestPlanNeedsBackends(t *testing.T) {
	f := newFixture(t, "")
	if _, err := runner.Plan(t.Context(), f.repo, f.res, runner.Options{}); !errors.Is(err, runner.ErrNoBackends) {
		t.Errorf("error %v, want ErrNoBackends", err)
	}
}

// A saved plan is applied whole or not at all: when one target drifted, Plan refuses the
// others too (ErrNotWhole) before anything is written; AllowPartial applies those that match.
func TestSavedPlanAllOrNothing(t *testing.T) {
	for _, partial := range []bool{false, true} {
		f := newFixture(t, "")
		plan, err := runner.Plan(t.Context(), f.repo, f.res, f.opt)
		if err != nil {
			t.Fatal(err)
		}
		f.opt.Saved = plan.Save(deploy.InputsOf(f.repo))
		f.opt.AllowPartial = partial
		// Someone creates the team by hand since the plan was made.
		f.fp.Seed("teams", &providers.Group{DN: "cn=sre,ou=Teams", Members: []string{"carol"}})
		fresh, err := runner.Plan(t.Context(), f.repo, f.res, f.opt)
		if got := errors.Is(err, runner.ErrNotWhole); got == partial {
			t.Fatalf("partial %v: error %v", partial, err)
		}
		for _, tp := range fresh.Targets {
			drifted := errors.Is(tp.Err, deploy.ErrDrift)
			notWhole := errors.Is(tp.Err, runner.ErrNotWhole)
			switch {
			case tp.OU == "teams" && !drifted:
				t.Errorf("partial %v: teams: error %v, want drift", partial, tp.Err)
			case tp.OU == "apps" && notWhole == partial:
				t.Errorf("partial %v: apps: error %v", partial, tp.Err)
			}
		}
	}
}
