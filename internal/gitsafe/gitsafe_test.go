package gitsafe

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// plain runs git the way a user's shell would (the test's own setup).
func plain(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
}

func TestUnsafe(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"core.repositoryformatversion", false},
		{"core.bare", false},
		{"remote.origin.url", false},
		{"remote.origin.fetch", false},
		{"branch.master.remote", false},
		{"user.name", false},
		{"extensions.objectformat", false},
		{"core.fsmonitor", false}, // Args switches it off
		{"credential.https://h.example.helper", false},
		{"remote.origin.uploadpack", true},
		{"include.path", true},
		{"includeIf.gitdir:/x/.path", true},
		{"core.worktree", true},
		{"CORE.WorkTree", true},
		{"core.gitproxy", true},
		{"core.alternaterefscommand", true},
		{"extensions.worktreeconfig", true},
		{"filter.lfs.smudge", true},
		{"filter.My Drv.clean", true},
		{"filter.x.process", true},
		{"filter.x.required", false},
		{"diff.yaml.textconv", true},
		{"diff.x.command", true},
		{"diff.external", false}, // Args empties it
		{"merge.ours.driver", true},
		{"url.ext::sh -c touch% /tmp/x.insteadof", true},
		{"url.https://a.example/.pushinsteadof", true},
		{"remote.origin.vcs", true},
		{"remote.origin.pushurl", true},
		{"remote.other.uploadpack", true},
		{"remote.other.receivepack", true},
		{"submodule.m.update", true},
		{"nodot", false},
	} {
		if got := Unsafe(tc.key); got != tc.want {
			t.Errorf("Unsafe(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestEnv(t *testing.T) {
	got := Env([]string{"PATH=/bin", "GIT_DIR=/elsewhere", "GIT_SSH_COMMAND=evil", "GIT_CONFIG_PARAMETERS='core.fsmonitor=x'", "LC_ALL=de_DE", "HOME=/h"})
	want := append([]string{"PATH=/bin", "HOME=/h"}, neutralEnv...)
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

func TestArgs(t *testing.T) {
	a := Args()
	if a[0] != "--no-pager" || len(a) != 1+2*len(overrides) {
		t.Fatalf("Args = %q", a)
	}
	a[1] = "changed"
	if Args()[1] != "-c" {
		t.Error("Args shares its slice between calls")
	}
}

// A hostile .git/config (what a reused checkout restored from a cache may hold) and a hostile
// environment run none of their programs through Command, and CheckConfig refuses what
// Command cannot switch off.
func TestHostileConfigRunsNothing(t *testing.T) {
	needGit(t)
	tmp := t.TempDir()
	marker := filepath.Join(tmp, "marker")
	script := filepath.Join(tmp, "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\nexec git-upload-pack \"$@\" 2>/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(tmp, "remote")
	plain(t, tmp, "init", "--quiet", remote)
	os.WriteFile(filepath.Join(remote, "f"), []byte("one\n"), 0o644)
	plain(t, remote, "add", "f")
	plain(t, remote, "commit", "--quiet", "-m", "one")
	work := filepath.Join(tmp, "work")
	plain(t, tmp, "clone", "--quiet", remote, work)
	for _, kv := range [][2]string{
		{"core.fsmonitor", script},
		{"core.sshCommand", script},
		{"credential.helper", "!" + script},
		{"core.pager", script},
		{"gc.auto", "1"},
	} {
		plain(t, work, "config", kv[0], kv[1])
	}
	os.Remove(marker)
	// The environment may be hostile as well (a hook's GIT_DIR, a job's GIT_CONFIG_*).
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", script)
	t.Setenv("GIT_DIR", filepath.Join(tmp, "remote", ".git"))

	ctx := context.Background()
	if err := CheckConfig(ctx, "", filepath.Join(work, ".git")); err != nil {
		t.Fatalf("settings Args switches off are not refused: %v", err)
	}
	os.WriteFile(filepath.Join(work, "f"), []byte("two\n"), 0o644)
	for _, args := range [][]string{
		{"status"},
		{"add", "--all"},
		{"diff", "--cached", "--quiet"},
		{"fetch", "--quiet", "origin"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "two"},
		{"log", "-1"},
		{"push", "--quiet", "origin", "HEAD:refs/heads/other"},
	} {
		cmd := Command(ctx, "", work, args...)
		if out, err := cmd.CombinedOutput(); err != nil && args[0] != "diff" {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	// An https remote asking for credentials: no helper runs, no prompt waits.
	cred := Command(ctx, "", work, "credential", "fill")
	cred.Stdin = strings.NewReader("protocol=https\nhost=example.com\n\n")
	if out, err := cred.CombinedOutput(); err == nil {
		t.Errorf("credential fill found credentials: %s", out)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the hostile config ran a program:\n%s", b)
	}
}

// CheckConfig refuses, naming it, what the -c overrides cannot switch off.
func TestCheckConfigRefuses(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	script := "/nonexistent/evil.sh"
	for _, kv := range [][2]string{
		{"filter.x.smudge", script},
		{"remote.origin.uploadpack", script},
		{"url.ext::" + script + " %S .insteadOf", "/srv/log.git"},
		{"include.path", "/nonexistent/more"},
		{"core.worktree", "/etc"},
	} {
		bad := t.TempDir()
		plain(t, bad, "init", "--quiet")
		plain(t, bad, "config", kv[0], kv[1])
		err := CheckConfig(ctx, "", filepath.Join(bad, ".git"))
		var ue *UnsafeConfigError
		if !errors.As(err, &ue) || !strings.EqualFold(ue.Key, kv[0]) || !strings.Contains(err.Error(), filepath.Join(bad, ".git", "config")) {
			t.Errorf("%s: CheckConfig = %v", kv[0], err)
		}
	}
	work := t.TempDir()
	plain(t, work, "init", "--quiet")
	if err := CheckConfig(ctx, "", filepath.Join(work, ".git")); err != nil {
		t.Errorf("a fresh repository is refused: %v", err)
	}
	os.WriteFile(filepath.Join(work, ".git", "commondir"), []byte("../elsewhere\n"), 0o644)
	if err := CheckConfig(ctx, "", filepath.Join(work, ".git")); err == nil || !strings.Contains(err.Error(), "commondir") {
		t.Errorf("commondir: %v", err)
	}
}

// Cancelling the context ends git's children too (an ssh it started).
func TestCommandCancelEndsGroup(t *testing.T) {
	tmp := t.TempDir()
	pidFile := filepath.Join(tmp, "pid")
	fake := filepath.Join(tmp, "git")
	// The fake git starts a child (as git starts ssh) and waits for it.
	os.WriteFile(fake, []byte("#!/bin/sh\nsleep 60 &\necho $! > "+pidFile+".tmp\nmv "+pidFile+".tmp "+pidFile+"\nwait\n"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := Command(ctx, fake, tmp, "fetch")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, err := os.ReadFile(pidFile)
		if err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake git did not start its child")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("git's child outlived the cancelled command")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
