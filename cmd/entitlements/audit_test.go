package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// realTargets is an in-memory provider seeded from the example's state, standing in for the
// real systems: a run through it is not simulated, so it sets up and commits the auditors.
func realTargets(t *testing.T) *fake.Provider {
	t.Helper()
	fp, err := fake.LoadState("../../examples/state.json")
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// runReal runs plan or apply the way a run against the real systems goes (audited, never
// simulated), with fp as every target's provider.
func runReal(t *testing.T, fp *fake.Provider, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	ext := &cmdExt{providers: func(*config.OU) (providers.Provider, error) { return fp, nil }}
	code = planOrApplyExt(context.Background(), args[0], args[1:], &out, &errb, ext)
	return code, out.String(), errb.String()
}

// bareRemote is a new local bare repository for the audit log.
func bareRemote(t *testing.T) string {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "log.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", remote).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	return remote
}

// refs lists the refs of a bare repository (none before the first push).
func refs(t *testing.T, remote string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", remote, "for-each-ref").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// A run against --state is a simulation (issue 22.1): it never runs the auditors (their log
// is the predictive state of the next real run, which would trust groups nobody wrote),
// never writes the state file or the audit checkout, and says so first and last: on stdout
// for text, on stderr for json and markdown (stdout stays one parseable document).
func TestCLISimulatedRunNeverAudits(t *testing.T) {
	remote := bareRemote(t)
	cfg, checkout := auditRepo(t, remote)
	state := filepath.Join(t.TempDir(), "s.json")
	orig, err := os.ReadFile("../../examples/state.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		onErr  bool // the note is on stderr
		isJSON bool
	}{
		{"apply text", []string{"apply", "--config", cfg, "--now", "2026-01-01", "--state", state, "--yes"}, false, false},
		{"plan text", []string{"plan", "--config", cfg, "--now", "2026-01-01", "--state", state}, false, false},
		{"plan json", []string{"plan", "--config", cfg, "--now", "2026-01-01", "--state", state, "--format", "json"}, true, true},
		{"apply markdown", []string{"apply", "--config", cfg, "--now", "2026-01-01", "--state", state, "--yes", "--format", "markdown"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			noted, other := stdout, stderr
			if tc.onErr {
				noted, other = stderr, stdout
			}
			lines := strings.Split(strings.TrimSuffix(noted, "\n"), "\n")
			if lines[0] != simulatedNote || lines[len(lines)-1] != simulatedNote || len(lines) < 2 {
				t.Errorf("%q is not the first and last line of:\n%s", simulatedNote, noted)
			}
			if strings.Contains(other, simulatedNote) {
				t.Errorf("the note is also in:\n%s", other)
			}
			if tc.isJSON && !json.Valid([]byte(stdout)) {
				t.Errorf("stdout is not one JSON document:\n%s", stdout)
			}
			if strings.Contains(stderr, "audit log:") {
				t.Errorf("a simulated run reports an audit:\n%s", stderr)
			}
			if got := refs(t, remote); got != "" {
				t.Errorf("the audit remote has new refs:\n%s", got)
			}
			if _, err := os.Stat(checkout); !os.IsNotExist(err) {
				t.Errorf("the audit checkout was written: %v", err)
			}
			if b, _ := os.ReadFile(state); !bytes.Equal(b, orig) {
				t.Error("the state file was written")
			}
		})
	}
}

// auditRepo copies the example config and adds a GitRepo auditor whose remote is a new local
// bare repository.
func auditRepo(t *testing.T, remote string) (cfg, checkout string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/config")); err != nil {
		t.Fatal(err)
	}
	checkout = filepath.Join(t.TempDir(), "audit")
	cfg = filepath.Join(dir, "entitlements.yaml")
	b, _ := os.ReadFile(cfg)
	b = append(b, []byte("auditors:\n  - auditor_class: GitRepo\n    checkout_directory: "+checkout+
		"\n    commit_message: deploy by test\n    git_name: GitRepoUser\n    git_email: gitrepousers@users.noreply\n    repo_url: "+remote+"\n")...)
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, checkout
}

func TestCLIApplyWritesAuditLog(t *testing.T) {
	remote := bareRemote(t)
	cfg, checkout := auditRepo(t, remote)
	fp := realTargets(t)

	code, stdout, stderr := runReal(t, fp, "plan", "--config", cfg, "--now", "2026-01-01")
	if code != exitOK {
		t.Fatalf("plan: %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(checkout); err == nil {
		t.Fatal("plan touched the audit repository")
	}
	code, stdout, stderr = runReal(t, fp, "apply", "--config", cfg, "--now", "2026-01-01", "--yes", "--warnings-as-errors")
	if code != exitOK {
		t.Fatalf("apply: %d\n%s\n%s", code, stdout, stderr)
	}
	if want := "audit log: GitRepo " + remote + ": 2 commit(s) pushed ("; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	log, err := exec.Command("git", "--git-dir", remote, "log", "--format=%s", "master").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(log)); got != "deploy by test\n[sync commit] deploy by test" {
		t.Errorf("commits:\n%s", got)
	}
	files, _ := exec.Command("git", "--git-dir", remote, "ls-tree", "-r", "--name-only", "master").Output()
	for _, want := range []string{"dc=net/dc=example/ou=Groups/ou=Apps/cn=billing-admin", "dc=net/dc=example/ou=Groups/ou=Pizza_Teams/cn=sre"} {
		if !strings.Contains(string(files), want) {
			t.Errorf("tree lacks %s:\n%s", want, files)
		}
	}
	if strings.Contains(string(files), "cn=legacy-vpn") {
		t.Errorf("the deleted group is still in the log:\n%s", files)
	}
}

func TestCLIApplyAuditSetupFailureAppliesNothing(t *testing.T) {
	cfg, _ := auditRepo(t, filepath.Join(t.TempDir(), "missing.git"))
	code, stdout, stderr := runReal(t, realTargets(t), "apply", "--config", cfg, "--now", "2026-01-01", "--yes")
	if code != exitError || !strings.Contains(stderr, "nothing was applied") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "Apply:") || strings.Contains(stderr, "msg=write") {
		t.Errorf("something was applied:\n%s\n%s", stdout, stderr)
	}
}

func TestCLIPredictiveStateTypoFails(t *testing.T) {
	t.Setenv("ENTITLEMENTS_PREDICTIVE_STATE_DIR", filepath.Join(t.TempDir(), "typo"))
	code, stdout, stderr := runCLI(t, "plan", "--config", exampleConfig, "--now", "2026-01-01")
	if code == exitOK || !strings.Contains(stderr, "typo") || strings.Contains(stdout, "Plan:") {
		t.Errorf("a missing state directory must fail the run before anything is read: %d\n%s\n%s", code, stdout, stderr)
	}
}

// A link pushed to the audit repo fails apply's audit step, named, and the CLI does not say
// that anything was committed (it once printed "committed" while writing through the link).
func TestCLIApplyAuditLinkRefused(t *testing.T) {
	remote := bareRemote(t)
	cfg, _ := auditRepo(t, remote)
	fp := realTargets(t)
	if code, stdout, stderr := runReal(t, fp, "apply", "--config", cfg, "--now", "2026-01-01", "--yes"); code != exitOK {
		t.Fatalf("apply: %d\n%s\n%s", code, stdout, stderr)
	}
	// Someone who can push replaces a group's file with a link to a file of the host.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	other := filepath.Join(t.TempDir(), "other")
	gitRun := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	gitRun(t.TempDir(), "clone", "--quiet", remote, other)
	const sre = "dc=net/dc=example/ou=Groups/ou=Pizza_Teams/cn=sre"
	os.Remove(filepath.Join(other, sre))
	os.Symlink(victim, filepath.Join(other, sre))
	gitRun(other, "add", "-A")
	gitRun(other, "commit", "--quiet", "-m", "link")
	gitRun(other, "push", "--quiet", "origin", "HEAD:master")

	// Nothing to change in the targets: the audit step alone would write.
	code, stdout, stderr := runReal(t, fp, "apply", "--config", cfg, "--now", "2026-01-01", "--yes")
	if code != exitError || !strings.Contains(stderr, sre+": not a regular file (a symbolic link)") {
		t.Fatalf("apply: %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stderr, "pushed") || strings.Contains(stderr, "nothing to commit") {
		t.Errorf("the CLI reports a commit:\n%s", stderr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the linked file was written: %q", b)
	}
}
