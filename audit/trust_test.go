package audit

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
)

// The audit checkout is written by whoever can push to the audit repo: the tests below
// push as such a person would (clone, change, push), then run the auditor.

// pushed clones remote, lets change alter the clone, and pushes the result.
func pushed(t *testing.T, remote string, change func(dir string)) {
	t.Helper()
	other := filepath.Join(t.TempDir(), "other")
	run(t, t.TempDir(), "clone", "--quiet", remote, other)
	change(other)
	run(t, other, "add", "-A")
	run(t, other, "commit", "--quiet", "-m", "pushed by someone")
	run(t, other, "push", "--quiet", "origin", "HEAD:master")
}

// A tracked symbolic link in the audit tree fails the commit, naming it, before anything is
// written: the file it points to is untouched and no commit is made.
func TestGitRepoRefusesLinks(t *testing.T) {
	needGit(t)
	for _, tc := range []struct {
		name, named string
		link        func(dir, victim string)
	}{
		{"group file linked to a file outside", pTeam, func(dir, victim string) {
			os.Remove(filepath.Join(dir, filepath.FromSlash(pTeam)))
			os.Symlink(victim, filepath.Join(dir, filepath.FromSlash(pTeam)))
		}},
		{"group file linked inside the tree", pTeam, func(dir, _ string) {
			os.Remove(filepath.Join(dir, filepath.FromSlash(pTeam)))
			os.Symlink("cn=empty", filepath.Join(dir, filepath.FromSlash(pTeam)))
		}},
		{"directory linked outside", "dc=com/dc=example/ou=Teams", func(dir, victim string) {
			os.RemoveAll(filepath.Join(dir, "dc=com/dc=example/ou=Teams"))
			os.Symlink(filepath.Dir(victim), filepath.Join(dir, "dc=com/dc=example/ou=Teams"))
		}},
		{"stray link", "dc=com/cn=stray", func(dir, victim string) {
			os.Symlink(victim, filepath.Join(dir, "dc=com/cn=stray"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := bare(t)
			checkout := filepath.Join(t.TempDir(), "c")
			commitRun(t, newAuditor(t, remote, checkout, ""), &Run{Groups: []*Group{
				{DN: dnTeam, Members: []string{"alice"}}, {DN: dnEmpty, Members: []string{"bob"}}}})
			outside := t.TempDir()
			victim := filepath.Join(outside, "cn=team")
			os.WriteFile(victim, []byte("precious\n"), 0o644)
			pushed(t, remote, func(dir string) { tc.link(dir, victim) })
			before := messages(t, remote)

			a := newAuditor(t, remote, checkout, "")
			if err := a.Setup(context.Background()); err != nil {
				t.Fatal(err)
			}
			rec, err := a.Commit(context.Background(), &Run{Groups: []*Group{
				{DN: dnTeam, Members: []string{"mallory"}}, {DN: dnEmpty, Members: []string{"bob"}}},
				Actions: map[string]*Action{key(dnTeam): {Kind: providers.UpdateGroup, DN: dnTeam, Existing: []string{"alice"}, Succeeded: true}}})
			want := filepath.Join(checkout, filepath.FromSlash(tc.named)) + ": not a regular file (a symbolic link)"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("commit: %v, want an error with %q", err, want)
			}
			if len(rec.Commits) != 0 {
				t.Errorf("commits recorded: %q", rec.Commits)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the linked file was written: %q", b)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("files written outside: %v", ents)
			}
			if got := messages(t, remote); len(got) != len(before) {
				t.Errorf("commits after the refusal: %q", got)
			}
			if out := run(t, checkout, "status", "--porcelain"); out != "" {
				t.Errorf("files written in the checkout:\n%s", out)
			}
		})
	}
}

// An LDAP entry whose RDN holds `/..` under a managed base is stored at an encoded path
// inside the checkout: the sync commit that records it and the valid commit that deletes
// it never reach the file its raw path names.
func TestGitRepoDNCannotLeaveCheckout(t *testing.T) {
	needGit(t)
	remote := bare(t)
	tmp := t.TempDir()
	checkout := filepath.Join(tmp, "c")
	victim := filepath.Join(tmp, "precious.txt")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	// dc=com/dc=example/ou=Teams/cn=x plus five ".." is the checkout's parent.
	evil := "cn=x/../../../../../precious.txt,ou=Teams,dc=example,dc=com"
	rec := commitRun(t, newAuditor(t, remote, checkout, ""), &Run{
		Groups:  []*Group{{DN: dnTeam, Members: []string{"alice"}}},
		Actions: map[string]*Action{key(evil): {Kind: providers.DeleteGroup, DN: evil, Existing: []string{"eve"}, Succeeded: true}}})
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious\n" {
		t.Fatalf("the file outside the checkout was changed: %q %v", b, err)
	}
	if len(rec.Commits) != 2 {
		t.Fatalf("commits %q, want a sync and a valid one", rec.Commits)
	}
	// The sync commit recorded the entry at its encoded path, the valid commit removed it.
	const encoded = "dc=com/dc=example/ou=Teams/%cn=x%2F..%2F..%2F..%2F..%2F..%2Fprecious.txt"
	if b, err := exec.Command("git", "--git-dir", remote, "show", "master~1:"+encoded).Output(); err != nil || string(b) != "eve\n" {
		t.Errorf("sync commit: %q %v", b, err)
	}
	if got, want := tree(t, remote), map[string]string{pTeam: "alice\n"}; !maps.Equal(got, want) {
		t.Errorf("tree %q, want %q", got, want)
	}
}

// A reused checkout whose .git/config names programs runs none of them: those -c can
// switch off are switched off, the others refuse the checkout (naming the setting) before
// git runs anything else.
func TestGitRepoHostileCheckoutConfig(t *testing.T) {
	needGit(t)
	for _, tc := range []struct {
		name     string
		settings [][2]string
		err      string
	}{
		{"switched off", [][2]string{
			{"core.fsmonitor", "SCRIPT"},
			{"core.hooksPath", "HOOKS"},
			{"credential.helper", "!SCRIPT"},
			{"core.pager", "SCRIPT"},
			{"core.sshCommand", "SCRIPT"},
		}, ""},
		{"upload-pack of the local remote", [][2]string{{"remote.origin.uploadpack", "SCRIPT"}}, "sets remote.origin.uploadpack"},
		{"filter driver", [][2]string{{"filter.x.smudge", "SCRIPT"}, {"filter.x.clean", "SCRIPT"}}, "sets filter.x."},
		{"url rewrite to ext::", [][2]string{{"url.ext::SCRIPT %S .insteadOf", "REMOTE"}}, "sets url.ext::"},
		{"work tree elsewhere", [][2]string{{"core.worktree", "ELSEWHERE"}}, "sets core.worktree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := bare(t)
			tmp := t.TempDir()
			checkout := filepath.Join(tmp, "c")
			commitRun(t, newAuditor(t, remote, checkout, ""), &Run{Groups: []*Group{{DN: dnTeam, Members: []string{"alice"}}}})
			// A repository whose .gitattributes names the filter, as a push could add.
			pushed(t, remote, func(dir string) { os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* filter=x\n"), 0o644) })

			marker := filepath.Join(tmp, "ran")
			script := filepath.Join(tmp, "evil.sh")
			os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\nexit 1\n"), 0o755)
			hooks := filepath.Join(tmp, "hooks")
			os.Mkdir(hooks, 0o755)
			for _, h := range []string{"pre-commit", "post-checkout", "reference-transaction", "pre-push", "post-commit"} {
				os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho hook >> "+marker+"\n"), 0o755)
			}
			elsewhere := filepath.Join(tmp, "elsewhere")
			os.Mkdir(elsewhere, 0o755)
			r := strings.NewReplacer("SCRIPT", script, "HOOKS", hooks, "REMOTE", remote, "ELSEWHERE", elsewhere)
			for _, kv := range tc.settings {
				run(t, checkout, "config", r.Replace(kv[0]), r.Replace(kv[1]))
			}

			a := newAuditor(t, remote, checkout, "")
			err := a.Setup(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), filepath.Join(checkout, ".git", "config")) {
					t.Fatalf("setup: %v, want %q", err, tc.err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := a.Commit(context.Background(), &Run{Groups: []*Group{{DN: dnTeam, Members: []string{"bob"}}}}); err != nil {
					t.Fatal(err)
				}
				if got := tree(t, remote)[pTeam]; got != "bob\n" {
					t.Errorf("not committed: %q", got)
				}
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("the checkout's config ran a program:\n%s", b)
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
				t.Errorf("files written to core.worktree: %v", ents)
			}
		})
	}
}

// A token in repo_url never reaches a message: not the description, not a setup error, not
// a log line.
func TestGitRepoURLTokenRedacted(t *testing.T) {
	needGit(t)
	const token = "ghs_SECRETTOKEN123"
	url := "https://x-access-token:" + token + "@127.0.0.1:1/o/log.git"
	var logs bytes.Buffer
	n := node(t, "auditor_class: GitRepo\ncheckout_directory: "+filepath.Join(t.TempDir(), "c")+
		"\ncommit_message: m\ngit_name: n\ngit_email: e\nrepo_url: "+url+"\n")
	set, err := New([]config.Value{n}, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if d := set[0].Description(); d != "GitRepo https://***@127.0.0.1:1/o/log.git" {
		t.Errorf("description %q", d)
	}
	err = set.Setup(context.Background())
	if err == nil {
		t.Fatal("setup against a closed port succeeded")
	}
	for what, s := range map[string]string{"error": err.Error(), "logs": logs.String()} {
		if strings.Contains(s, token) || strings.Contains(s, "x-access-token") {
			t.Errorf("the %s shows the token: %s", what, s)
		}
	}
}
