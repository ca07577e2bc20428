package gitfs

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// TestReadAhead: files announced to ReadAhead are served from one stream in any read order,
// with the committed content; a stream stopped by Close releases the readers waiting for it
// (they get the file if it was delivered, an error otherwise, and never wrong content).
func TestReadAhead(t *testing.T) {
	dir, git := gitRepo(t)
	var names []string
	for i := 0; i < 300; i++ {
		p := filepath.ToSlash(filepath.Join("groups", "t", "g"+strconv.Itoa(i)+".txt"))
		write(t, dir, p, "username = u"+strconv.Itoa(i)+"\n")
		names = append(names, p)
	}
	git("add", "-A")
	git("commit", "-qm", "one")
	ctx := context.Background()
	for _, closeEarly := range []bool{false, true} {
		r, err := Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := r.Tree(ctx, "HEAD")
		if err != nil {
			t.Fatal(err)
		}
		tree.ReadAhead(append(names, "missing.txt", "groups"))
		if closeEarly {
			r.Close()
		}
		// Read in reverse: a reader may wait for files far down the stream.
		for i := len(names) - 1; i >= 0; i-- {
			b, err := tree.ReadFile(names[i])
			if closeEarly && err != nil {
				continue
			}
			if want := "username = u" + strconv.Itoa(i) + "\n"; err != nil || string(b) != want {
				t.Fatalf("close early %v: %s = %q, %v; want %q", closeEarly, names[i], b, err, want)
			}
		}
		r.Close()
	}
}

// TestFromWorkTree: files that are the commit's are read from disk; an edited, a deleted and
// an untracked file change nothing: the tree's content and names are served.
func TestFromWorkTree(t *testing.T) {
	dir, git := gitRepo(t)
	write(t, dir, "a.txt", "alpha\n")
	write(t, dir, "b.txt", "beta\n")
	write(t, dir, "c.txt", "gamma\n")
	write(t, dir, "empty.txt", "")
	git("add", "-A")
	git("commit", "-qm", "one")
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tree, err := r.Tree(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "b.txt", "BETA, edited\n")
	os.Remove(filepath.Join(dir, "c.txt"))
	write(t, dir, "untracked.txt", "x\n")
	wt := tree.FromWorkTree()
	if err := fstest.TestFS(wt, "a.txt", "b.txt", "c.txt", "empty.txt"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n", "empty.txt": ""} {
		if b, err := fs.ReadFile(wt, name); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := fs.Stat(wt, "untracked.txt"); err == nil {
		t.Error("an untracked file is served")
	}
	// Files that match are really read from disk: once the repository is closed, git serves
	// nothing, and only those files can still be read.
	fresh, err := r.Tree(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	wt = fresh.FromWorkTree()
	r.Close()
	if b, err := fs.ReadFile(wt, "a.txt"); err != nil || string(b) != "alpha\n" {
		t.Errorf("a.txt after Close = %q, %v", b, err)
	}
	if b, err := fs.ReadFile(wt, "b.txt"); err == nil {
		t.Errorf("edited b.txt read after Close: %q", b)
	}
}
