package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
	remote := filepath.Join(t.TempDir(), "log.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", remote).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	cfg, checkout := auditRepo(t, remote)
	state := "../../examples/state.json"

	code, stdout, stderr := runCLI(t, "plan", "--config", cfg, "--now", "2026-01-01", "--state", state)
	if code != exitOK {
		t.Fatalf("plan: %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(checkout); err == nil {
		t.Fatal("plan touched the audit repository")
	}
	code, stdout, stderr = runCLI(t, "apply", "--config", cfg, "--now", "2026-01-01", "--state", state, "--yes")
	if code != exitOK {
		t.Fatalf("apply: %d\n%s\n%s", code, stdout, stderr)
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
	code, stdout, stderr := runCLI(t, "apply", "--config", cfg, "--now", "2026-01-01", "--state", "../../examples/state.json", "--yes")
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
