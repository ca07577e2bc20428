package audit

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

// bare makes an empty bare repository, the remote of the tests.
func bare(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	run(t, t.TempDir(), "init", "--quiet", "--bare", dir)
	return dir
}

// messages lists the remote's commit messages, oldest first.
func messages(t *testing.T, remote string) []string {
	t.Helper()
	cmd := exec.Command("git", "--git-dir", remote, "log", "--reverse", "--format=%s", "master")
	out, err := cmd.Output()
	if err != nil {
		return nil // no commit yet
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// revs lists the remote's commit ids, oldest first.
func revs(t *testing.T, remote string) []string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", remote, "rev-list", "--reverse", "master").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// tree is the remote master's files with their content.
func tree(t *testing.T, remote string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ls, err := exec.Command("git", "--git-dir", remote, "ls-tree", "-r", "--name-only", "master").Output()
	if err != nil {
		return out
	}
	for _, p := range strings.Fields(string(ls)) {
		b, err := exec.Command("git", "--git-dir", remote, "show", "master:"+p).Output()
		if err != nil {
			t.Fatal(err)
		}
		out[p] = string(b)
	}
	return out
}

func node(t *testing.T, src string) config.Value {
	t.Helper()
	n, err := config.ParseValue(src)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newAuditor(t *testing.T, remote, checkout string, extra string) *GitRepo {
	t.Helper()
	n := node(t, "auditor_class: GitRepo\ncheckout_directory: "+checkout+"\ncommit_message: deploy of ${GIT_SHA1}\ngit_name: GitRepoUser\ngit_email: gitrepo@users.noreply\nrepo_url: "+remote+"\n"+extra)
	set, err := New([]config.Value{n}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set[0].(*GitRepo)
}

const (
	dnTeam  = "cn=team,ou=Teams,dc=example,dc=com"
	dnEmpty = "cn=empty,ou=Teams,dc=example,dc=com"
	dnNew   = "cn=new,ou=Teams,dc=example,dc=com"
	dnGhost = "cn=ghost,ou=Teams,dc=example,dc=com"
	dnOld   = "cn=old,ou=Teams,dc=example,dc=com"
)

const (
	pTeam  = "dc=com/dc=example/ou=Teams/cn=team"
	pEmpty = "dc=com/dc=example/ou=Teams/cn=empty"
	pNew   = "dc=com/dc=example/ou=Teams/cn=new"
	pGhost = "dc=com/dc=example/ou=Teams/cn=ghost"
	pOld   = "dc=com/dc=example/ou=Teams/cn=old"
)

func key(s string) string { return providers.Key(s) }

func commitRun(t *testing.T, a *GitRepo, r *Run) Record {
	t.Helper()
	ctx := context.Background()
	if err := a.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := a.Commit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestGitRepoLifecycle(t *testing.T) {
	needGit(t)
	remote := bare(t)
	checkout := filepath.Join(t.TempDir(), "checkout")
	a := newAuditor(t, remote, checkout, "")

	// First run: the team is created (ok), the empty group exists (read confirmed it), the
	// ghost group is empty and nobody confirmed it: no file (§2.3 item 6).
	groups := []*Group{
		{DN: dnTeam, Members: []string{"Bob", "alice"}, Metadata: map[string]any{"team_maintainers": "bob", "_filename": "x.txt"}},
		{DN: dnEmpty},
		{DN: dnGhost},
	}
	first := &Run{Groups: groups,
		Actions:   map[string]*Action{key(dnTeam): {Kind: providers.CreateGroup, DN: dnTeam, Succeeded: true}},
		Confirmed: map[string]bool{key(dnEmpty): true, key(dnTeam): true}}
	rec := commitRun(t, a, first)
	if got, want := messages(t, remote), []string{"[sync commit] deploy of ${GIT_SHA1}", "deploy of ${GIT_SHA1}"}; !slices.Equal(got, want) {
		t.Fatalf("commits %q, want %q", got, want)
	}
	if ids := revs(t, remote); !slices.Equal(rec.Commits, ids) {
		t.Errorf("Record.Commits %q, want the pushed commits %q", rec.Commits, ids)
	}
	want := map[string]string{
		pTeam:  "alice\nbob\nmetadata_team_maintainers=bob\n",
		pEmpty: "# No members\n",
	}
	if got := tree(t, remote); !maps.Equal(got, want) {
		t.Fatalf("tree %q, want %q", got, want)
	}

	// A metadata-only change that failed is not recorded (the next run must not trust it).
	groupsMD := []*Group{
		{DN: dnTeam, Members: []string{"Bob", "alice"}, Metadata: map[string]any{"team_maintainers": "alice"}},
		{DN: dnEmpty},
	}
	commitRun(t, newAuditor(t, remote, checkout, ""), &Run{Groups: groupsMD, Actions: map[string]*Action{},
		Unapplied: map[string]bool{key(dnTeam): true}, Confirmed: first.Confirmed})
	if got := messages(t, remote); len(got) != 2 {
		t.Fatalf("a failed metadata change was committed: %q", got)
	}

	// No-op: same groups, no action: no commit at all.
	noop := &Run{Groups: groups, Actions: map[string]*Action{}, Confirmed: first.Confirmed}
	if rec := commitRun(t, newAuditor(t, remote, checkout, ""), noop); len(rec.Commits) != 0 {
		t.Errorf("a no-op records commits %q", rec.Commits)
	}
	if got := messages(t, remote); len(got) != 2 {
		t.Fatalf("a no-op committed: %q", got)
	}

	// Partial failure: the team update failed (file untouched), the new group was created,
	// the old group was never recorded and is deleted. The provider failed: no sync commit.
	groups2 := []*Group{
		{DN: dnTeam, Members: []string{"alice", "bob", "carol"}, Metadata: map[string]any{"team_maintainers": "bob"}},
		{DN: dnEmpty},
		{DN: dnNew, Members: []string{"dave"}},
	}
	partial := &Run{Groups: groups2, ProviderErr: errors.New("boom"),
		Actions: map[string]*Action{
			key(dnTeam): {Kind: providers.UpdateGroup, DN: dnTeam, Existing: []string{"alice", "bob"}},
			key(dnNew):  {Kind: providers.CreateGroup, DN: dnNew, Succeeded: true},
		},
		Confirmed: map[string]bool{key(dnEmpty): true, key(dnTeam): true, key(dnNew): true}}
	commitRun(t, newAuditor(t, remote, checkout, ""), partial)
	if got := messages(t, remote); len(got) != 3 || got[2] != "deploy of ${GIT_SHA1}" {
		t.Fatalf("commits %q", got)
	}
	want[pNew] = "dave\n"
	if got := tree(t, remote); !maps.Equal(got, want) {
		t.Fatalf("tree after partial failure %q, want %q", got, want)
	}

	// The retry succeeds; someone also left a stray file in the repo (removed by a sync
	// commit) and emptied the team's file by hand (synced to what the provider read first).
	other := filepath.Join(t.TempDir(), "other")
	run(t, t.TempDir(), "clone", "--quiet", remote, other)
	os.WriteFile(filepath.Join(other, filepath.FromSlash(pTeam)), []byte("mallory\n"), 0o644)
	os.MkdirAll(filepath.Join(other, "dc=com/dc=example/ou=Stray"), 0o755)
	os.WriteFile(filepath.Join(other, "dc=com/dc=example/ou=Stray/cn=x"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(other, "README.md"), []byte("audit log\n"), 0o644)
	run(t, other, "add", "-A")
	run(t, other, "commit", "--quiet", "-m", "by hand")
	run(t, other, "push", "--quiet", "origin", "HEAD:master")

	retry := &Run{Groups: groups2,
		Actions: map[string]*Action{
			key(dnTeam): {Kind: providers.UpdateGroup, DN: dnTeam, Existing: []string{"alice", "bob"}, Succeeded: true},
			key(dnOld):  {Kind: providers.DeleteGroup, DN: dnOld, Existing: []string{"eve"}, Succeeded: true},
		},
		Confirmed: partial.Confirmed}
	commitRun(t, newAuditor(t, remote, checkout, ""), retry)
	msgs := messages(t, remote)
	if got, want := msgs[4:], []string{"[sync commit] deploy of ${GIT_SHA1}", "deploy of ${GIT_SHA1}"}; !slices.Equal(got, want) {
		t.Fatalf("commits %q", msgs)
	}
	want[pTeam] = "alice\nbob\ncarol\nmetadata_team_maintainers=bob\n"
	want["README.md"] = "audit log\n"
	if got := tree(t, remote); !maps.Equal(got, want) {
		t.Fatalf("tree after retry %q, want %q", got, want)
	}
	// The sync commit recorded what the provider read (before the update), then the update.
	synced, err := exec.Command("git", "--git-dir", remote, "show", "master~1:"+pTeam).Output()
	if err != nil || string(synced) != "alice\nbob\nmetadata_team_maintainers=bob\n" {
		t.Errorf("sync commit content %q (%v)", synced, err)
	}
	// The deleted group had no file: the sync commit records what the provider read, the
	// valid commit removes it.
	if b, err := exec.Command("git", "--git-dir", remote, "show", "master~1:"+pOld).Output(); err != nil || string(b) != "eve\n" {
		t.Errorf("deleted group in the sync commit: %q %v", b, err)
	}
}

func TestGitRepoPersonDNAndDeleteRecorded(t *testing.T) {
	needGit(t)
	remote := bare(t)
	checkout := filepath.Join(t.TempDir(), "c")
	a := newAuditor(t, remote, checkout, "person_dn_format: uid=%KEY%,ou=People,dc=example,dc=com\n")
	commitRun(t, a, &Run{Groups: []*Group{{DN: dnOld, Members: []string{"Eve"}}}, Actions: map[string]*Action{}, Confirmed: map[string]bool{}})
	if got := tree(t, remote)[pOld]; got != "uid=eve,ou=people,dc=example,dc=com\n" {
		t.Fatalf("content %q", got)
	}
	// Failed delete: file untouched. Then a successful one removes it in a valid commit.
	failed := &Run{Actions: map[string]*Action{key(dnOld): {Kind: providers.DeleteGroup, DN: dnOld, Existing: []string{"eve"}}},
		ProviderErr: errors.New("x")}
	commitRun(t, newAuditor(t, remote, checkout, "person_dn_format: uid=%KEY%,ou=People,dc=example,dc=com\n"), failed)
	if _, ok := tree(t, remote)[pOld]; !ok {
		t.Fatal("a failed delete removed the file")
	}
	ok := &Run{Actions: map[string]*Action{key(dnOld): {Kind: providers.DeleteGroup, DN: dnOld, Existing: []string{"eve"}, Succeeded: true}}}
	commitRun(t, newAuditor(t, remote, checkout, "person_dn_format: uid=%KEY%,ou=People,dc=example,dc=com\n"), ok)
	if got := tree(t, remote); len(got) != 0 {
		t.Fatalf("tree %q", got)
	}
	if got := messages(t, remote); len(got) != 2 || strings.HasPrefix(got[1], "[sync") {
		t.Fatalf("commits %q: the delete is a valid commit, without a sync commit (the file matched)", got)
	}
}

func TestGitRepoSetupResetsCheckout(t *testing.T) {
	needGit(t)
	remote := bare(t)
	checkout := filepath.Join(t.TempDir(), "c")
	commitRun(t, newAuditor(t, remote, checkout, ""), &Run{Groups: []*Group{{DN: dnTeam, Members: []string{"a"}}}})
	// Leftovers of an interrupted run: a modified file, an untracked one, a local commit.
	os.WriteFile(filepath.Join(checkout, filepath.FromSlash(pTeam)), []byte("zzz\n"), 0o644)
	os.WriteFile(filepath.Join(checkout, "junk"), []byte("j"), 0o644)
	run(t, checkout, "commit", "--quiet", "-am", "local only")
	a := newAuditor(t, remote, checkout, "")
	if err := a.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(checkout, filepath.FromSlash(pTeam)))
	if string(b) != "a\n" {
		t.Errorf("checkout not reset to the remote: %q", b)
	}
	if _, err := os.Stat(filepath.Join(checkout, "junk")); err == nil {
		t.Error("untracked file kept")
	}
}

func TestGitRepoSetupFailures(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	a := newAuditor(t, filepath.Join(t.TempDir(), "missing.git"), filepath.Join(t.TempDir(), "c"), "")
	if err := Set([]Auditor{a}).Setup(ctx); err == nil || !strings.Contains(err.Error(), "nothing was applied") {
		t.Errorf("setup against a missing remote: %v", err)
	}
	if _, err := a.Commit(ctx, &Run{}); err == nil {
		t.Error("commit after a failed setup must fail")
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "f"), nil, 0o644)
	b := newAuditor(t, bare(t), full, "")
	if err := b.Setup(ctx); err == nil || !strings.Contains(err.Error(), "not a git checkout") {
		t.Errorf("setup into a non-empty directory: %v", err)
	}
}

func TestNewSettings(t *testing.T) {
	tests := []struct {
		name, src, err string
	}{
		{"missing keys", "auditor_class: GitRepo\nrepo: a/b\n", "missing setting(s): checkout_directory, commit_message, git_email, git_name"},
		{"bad repo", "auditor_class: GitRepo\ncheckout_directory: x\ncommit_message: m\ngit_name: n\ngit_email: e\nrepo: nope\n", "owner/name"},
		{"no repo", "auditor_class: GitRepo\ncheckout_directory: x\ncommit_message: m\ngit_name: n\ngit_email: e\n", "repo_url"},
		{"bad key", "auditor_class: GitRepo\ncheckout_directory: x\ncommit_message: m\ngit_name: n\ngit_email: e\nrepo: a/b\nsshkey: '!!'\n", "base64"},
		{"unknown class", "auditor_class: Slack\n", "not supported"},
		{"ok", "auditor_class: GitRepo\ncheckout_directory: x\ncommit_message: m\ngit_name: n\ngit_email: e\nrepo: github/audit-log\nsshkey: aGVsbG8=\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set, err := New([]config.Value{node(t, tc.src)}, Options{})
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if g := set[0].(*GitRepo); g.url != "git@github.com:github/audit-log.git" || string(g.key) != "hello" || !g.usesSSH() {
					t.Errorf("url %q key %q", g.url, g.key)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestSSHHostKeys(t *testing.T) {
	home := t.TempDir()
	env := func(k string) (string, bool) {
		if k == "HOME" {
			return home, true
		}
		return "", false
	}
	mk := func(extra string) *GitRepo {
		n := node(t, "auditor_class: GitRepo\ncheckout_directory: x\ncommit_message: m\ngit_name: n\ngit_email: e\nrepo: o/r\n"+extra)
		set, err := New([]config.Value{n}, Options{Getenv: env})
		if err != nil {
			t.Fatal(err)
		}
		return set[0].(*GitRepo)
	}
	// Default known_hosts: ~/.ssh/known_hosts, which must exist.
	if _, err := mk("").sshCommand(); err == nil || !strings.Contains(err.Error(), filepath.Join(home, ".ssh", "known_hosts")) {
		t.Errorf("missing default known_hosts: %v", err)
	}
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte("github.com ssh-ed25519 AAAA\n"), 0o600)
	cmd, err := mk("").sshCommand()
	if err != nil || !strings.Contains(cmd, "StrictHostKeyChecking=yes") || !strings.Contains(cmd, "UserKnownHostsFile="+filepath.Join(home, ".ssh", "known_hosts")) {
		t.Errorf("default: %q %v", cmd, err)
	}
	kh := filepath.Join(t.TempDir(), "my hosts")
	os.WriteFile(kh, nil, 0o600)
	cmd, err = mk("known_hosts: " + kh + "\n").sshCommand()
	if err != nil || !strings.Contains(cmd, "'UserKnownHostsFile="+kh+"'") {
		t.Errorf("explicit known_hosts (quoted, it has a space): %q %v", cmd, err)
	}
	g := mk("skip_host_key_check: true\n")
	var logs bytes.Buffer
	g.opt.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	cmd, err = g.sshCommand()
	if err != nil || !strings.Contains(cmd, "StrictHostKeyChecking=no") {
		t.Errorf("opt-out: %q %v", cmd, err)
	}
	g.dir, g.url = filepath.Join(t.TempDir(), "c"), "ssh://nobody@127.0.0.1:1/x.git"
	g.Setup(context.Background()) // fails (nothing listens there); the warning comes first
	if !strings.Contains(logs.String(), "NOT verified") {
		t.Errorf("no warning for the opt-out: %s", logs.String())
	}
	if mk("").usesSSH() != true || (&GitRepo{url: "/srv/log.git"}).usesSSH() || (&GitRepo{url: "https://h/x.git"}).usesSSH() || !(&GitRepo{url: "ssh://git@h/x.git"}).usesSSH() {
		t.Error("usesSSH")
	}
}
