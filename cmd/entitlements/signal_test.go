//go:build unix

package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM (a CI cancellation) during apply unwinds like Ctrl-C: the auditor's temporary key
// directory is removed and git's ssh does not outlive the run. The CLI runs as a
// subprocess (the test binary, see TestMain) with a fake ssh that hangs, so the signal
// arrives while the audit log's clone is under way, holding the key.
func TestCLISIGTERMCleansUp(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	os.Mkdir(bin, 0o755)
	pidFile := filepath.Join(tmp, "ssh.pid")
	fakeSSH := "#!/bin/sh\necho $$ > " + pidFile + ".tmp\nmv " + pidFile + ".tmp " + pidFile + "\nexec sleep 60\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fakeSSH), 0o755); err != nil {
		t.Fatal(err)
	}
	keyTmp := filepath.Join(tmp, "tmpdir")
	os.Mkdir(keyTmp, 0o755)

	cfgDir := filepath.Join(tmp, "config")
	if err := os.CopyFS(cfgDir, os.DirFS("../../examples/config")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "entitlements.yaml")
	b, _ := os.ReadFile(cfg)
	b = append(b, []byte("auditors:\n  - auditor_class: GitRepo\n    checkout_directory: "+filepath.Join(tmp, "audit")+
		"\n    commit_message: m\n    git_name: n\n    git_email: e@example.net\n    repo_url: ssh://git@127.0.0.1:1/log.git"+
		"\n    skip_host_key_check: true\n    sshkey: "+base64.StdEncoding.EncodeToString([]byte("not a real key\n"))+"\n")...)
	os.WriteFile(cfg, b, 0o644)

	// Not --state: a simulated run never sets the auditors up.
	cmd := exec.Command(os.Args[0], "apply", "--config", cfg, "--now", "2026-01-01", "--yes")
	cmd.Env = append(os.Environ(), asCLI+"="+asCLIFakeTargets, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+keyTmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var sshPid int
	for deadline := time.Now().Add(30 * time.Second); sshPid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			sshPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			continue
		}
		select {
		case err := <-done:
			t.Fatalf("the CLI ended before git ran ssh: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("git never ran ssh:\n%s", stderr.String())
		}
	}
	t.Cleanup(func() { syscall.Kill(sshPid, syscall.SIGKILL) })
	if ents, _ := filepath.Glob(filepath.Join(keyTmp, "entitlements-audit-*", "key")); len(ents) != 1 {
		t.Fatalf("no key on disk while the clone runs: %v", ents)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the CLI did not end after SIGTERM")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Exited() || ee.ExitCode() != exitError {
		t.Errorf("exit after SIGTERM: %v (want exit status %d, not death by the signal)\n%s", err, exitError, stderr.String())
	}
	if !strings.Contains(stderr.String(), "nothing was applied") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(keyTmp, "entitlements-audit-*")); len(left) > 0 {
		t.Errorf("the key directory was left behind: %v", left)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(sshPid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("ssh outlived the run")
		}
	}
}
