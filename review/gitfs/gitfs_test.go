package gitfs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

func gitRepo(t *testing.T) (string, func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	return dir, run
}

func write(t *testing.T, dir, p, s string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
	if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTreeIsAnFS(t *testing.T) {
	dir, git := gitRepo(t)
	write(t, dir, "a.txt", "alpha\n")
	write(t, dir, "groups/teams/sre.txt", "username = bob\n")
	write(t, dir, "groups/teams/empty.txt", "")
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-qm", "one")
	ctx := context.Background()
	r, err := Open(ctx, filepath.Join(dir, "groups"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Prefix() != "groups" {
		t.Errorf("prefix %q", r.Prefix())
	}
	tree, err := r.Tree(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	// Lazy reads, then prefetched ones: both behave as a file system.
	if err := fstest.TestFS(tree, "a.txt", "groups/teams/sre.txt", "groups/teams/empty.txt"); err != nil {
		t.Fatal(err)
	}
	if err := tree.Prefetch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(tree, "a.txt", "groups/teams/sre.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Stat("link"); err == nil {
		t.Error("symbolic links are served")
	}

	// The work tree changes after the commit: Changed sees staged, unstaged and untracked
	// files; the tree keeps serving the commit.
	write(t, dir, "a.txt", "changed\n")
	write(t, dir, "new.txt", "x\n")
	got, err := r.Changed(ctx, tree.Commit(), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.txt", "new.txt"}; !slices.Equal(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
	if b, _ := tree.ReadFile("a.txt"); string(b) != "alpha\n" {
		t.Errorf("tree read %q", b)
	}
	git("add", "-A")
	git("commit", "-qm", "two")
	got, err = r.Changed(ctx, "HEAD~1", "HEAD")
	if err != nil || !slices.Equal(got, []string{"a.txt", "new.txt"}) {
		t.Errorf("changed between commits %v %v", got, err)
	}
	if _, err := r.Tree(ctx, "--output=/tmp/x"); err == nil {
		t.Error("an option was accepted as a revision")
	}
	if _, err := r.Tree(ctx, "nope"); err == nil {
		t.Error("unknown revision accepted")
	}
}

// TestRevision: the commit, marked dirty by changes under the directory only.
func TestRevision(t *testing.T) {
	dir, git := gitRepo(t)
	write(t, dir, "config/teams/sre.txt", "username = bob\n")
	write(t, dir, "other/notes.txt", "x\n")
	git("add", "-A")
	git("commit", "-qm", "one")
	ctx := context.Background()
	r, err := Open(ctx, filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	head, err := r.Resolve(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	check := func(step, want string) {
		t.Helper()
		got, err := r.Revision(ctx)
		if err != nil || got != want {
			t.Fatalf("%s: Revision = %q, %v; want %q", step, got, err, want)
		}
	}
	check("clean", head)
	write(t, dir, "other/notes.txt", "changed elsewhere\n")
	check("change outside the directory", head)
	write(t, dir, "config/teams/new.txt", "username = alice\n")
	check("untracked file", head+"+dirty")
	os.Remove(filepath.Join(dir, "config/teams/new.txt"))
	write(t, dir, "config/teams/sre.txt", "username = carol\n")
	check("modified file", head+"+dirty")
}
