package gitfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/entitlements-go/entitlements/validate"
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
	// Links are followed within the tree, as a checkout follows them (see TestSymlinks).
	if b, err := tree.ReadFile("link"); err != nil || string(b) != "alpha\n" {
		t.Errorf("link = %q, %v", b, err)
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

// TestSymlinks: links stored in the tree (mode 120000) are followed the way a checkout
// follows them, within the tree: to a file, to a directory, through a chain; a link that
// leaves the tree, an absolute one, a dangling one and a loop are errors, never a read of
// the machine's files.
func TestSymlinks(t *testing.T) {
	dir, git := gitRepo(t)
	write(t, dir, "docs/notes.txt", "username = mallory\n")
	write(t, dir, "shared/apps/wiki.txt", "username = bob\n")
	write(t, dir, "groups/teams/sre.txt", "username = alice\n")
	links := map[string]string{
		"groups/apps":               "../shared/apps",
		"groups/teams/backdoor.txt": "../../docs/notes.txt",
		"groups/teams/chain.txt":    "backdoor.txt",
		"groups/teams/escape.txt":   "../../../outside.txt",
		"groups/teams/abs.txt":      "/etc/hostname",
		"groups/teams/dangling.txt": "nothing-here.txt",
		"groups/teams/loop1.txt":    "loop2.txt",
		"groups/teams/loop2.txt":    "loop1.txt",
	}
	for p, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
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
	for _, c := range []struct {
		name, want string
		err        error
	}{
		{"groups/teams/backdoor.txt", "username = mallory\n", nil},
		{"groups/teams/chain.txt", "username = mallory\n", nil},
		{"groups/apps/wiki.txt", "username = bob\n", nil},
		{"groups/teams/escape.txt", "", validate.ErrOutsideTree},
		{"groups/teams/abs.txt", "", validate.ErrOutsideTree},
		{"groups/teams/dangling.txt", "", fs.ErrNotExist},
		{"groups/teams/loop1.txt", "", nil},
	} {
		b, err := fs.ReadFile(tree, c.name)
		switch {
		case c.want != "" && (err != nil || string(b) != c.want):
			t.Errorf("%s = %q, %v; want %q", c.name, b, err, c.want)
		case c.want == "" && err == nil:
			t.Errorf("%s read: %q", c.name, b)
		case c.err != nil && !errors.Is(err, c.err):
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
	// The listing shows links as links (as os.ReadDir does); Stat follows them, Lstat and
	// ReadLink do not.
	ents, err := fs.ReadDir(tree, "groups")
	if err != nil {
		t.Fatal(err)
	}
	var apps fs.DirEntry
	for _, e := range ents {
		if e.Name() == "apps" {
			apps = e
		}
	}
	if apps == nil || apps.Type() != fs.ModeSymlink || apps.IsDir() {
		t.Errorf("groups/apps listed as %v", apps)
	}
	if st, err := fs.Stat(tree, "groups/apps"); err != nil || !st.IsDir() {
		t.Errorf("stat groups/apps: %v, %v", st, err)
	}
	if st, err := fs.Lstat(tree, "groups/apps"); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("lstat groups/apps: %v, %v", st, err)
	}
	if target, err := fs.ReadLink(tree, "groups/teams/chain.txt"); err != nil || target != "backdoor.txt" {
		t.Errorf("readlink = %q, %v", target, err)
	}
	if names, err := fs.Glob(tree, "groups/apps/*.txt"); err != nil || !slices.Equal(names, []string{"groups/apps/wiki.txt"}) {
		t.Errorf("glob through a linked directory: %v, %v", names, err)
	}
	for p, want := range map[string]bool{"groups/apps/wiki.txt": true, "groups/teams/chain.txt": true,
		"groups/teams/sre.txt": false, "shared/apps/wiki.txt": false, "groups": false} {
		if got := tree.HasLink(p); got != want {
			t.Errorf("HasLink(%s) = %v", p, got)
		}
	}
	// Read from the work tree, the links give the same content (the files they lead to are
	// the commit's).
	if b, err := fs.ReadFile(tree.FromWorkTree(), "groups/teams/backdoor.txt"); err != nil || string(b) != "username = mallory\n" {
		t.Errorf("work tree: %q, %v", b, err)
	}
	// Without the links that cannot be opened, the tree passes the io/fs checks (which read
	// every entry).
	for _, p := range []string{"escape", "abs", "dangling", "loop1", "loop2"} {
		git("rm", "-q", "groups/teams/"+p+".txt")
	}
	git("commit", "-qm", "two")
	tree, err = r.Tree(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(tree, "groups/teams/backdoor.txt", "groups/teams/chain.txt", "docs/notes.txt"); err != nil {
		t.Error(err)
	}
}

// TestNeutralGitConfig: settings of the repository or the user that change what git prints
// or which files it reports (diff.relative, assume-unchanged and skip-worktree bits,
// core.ignoreStat, a global excludes file) do not hide a change.
func TestNeutralGitConfig(t *testing.T) {
	dir, git := gitRepo(t)
	write(t, dir, "config/groups/a.txt", "username = a\n")
	write(t, dir, "config/groups/b.txt", "username = b\n")
	write(t, dir, "config/groups/c.txt", "username = c\n")
	write(t, dir, "config/groups/d.txt", "username = d\n")
	git("add", "-A")
	git("commit", "-qm", "one")
	git("config", "diff.relative", "true")
	git("config", "diff.noprefix", "true")
	git("config", "core.quotePath", "true")
	git("config", "color.ui", "always")
	git("update-index", "--assume-unchanged", "config/groups/b.txt")
	git("update-index", "--skip-worktree", "config/groups/c.txt")
	write(t, dir, "config/groups/a.txt", "username = A\n")
	write(t, dir, "config/groups/b.txt", "username = B\n")
	write(t, dir, "config/groups/c.txt", "username = C\n")
	write(t, dir, "config/groups/é.txt", "username = e\n")
	ctx := context.Background()
	r, err := Open(ctx, filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Changed(ctx, "HEAD", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config/groups/a.txt", "config/groups/b.txt", "config/groups/c.txt", "config/groups/é.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("changed %q, want %q", got, want)
	}
	git("commit", "-qam", "two")
	got, err = r.Changed(ctx, "HEAD~1", "HEAD")
	if err != nil || !slices.Equal(got, []string{"config/groups/a.txt"}) {
		t.Errorf("changed between commits %q, %v", got, err)
	}
	// The bits hide a modified file from `git status` too: the revision is still dirty.
	git("update-index", "--no-assume-unchanged", "config/groups/b.txt")
	git("update-index", "--no-skip-worktree", "config/groups/c.txt")
	git("reset", "-q", "--hard")
	os.Remove(filepath.Join(dir, "config/groups/é.txt"))
	git("update-index", "--assume-unchanged", "config/groups/d.txt")
	head, _ := r.Resolve(ctx, "HEAD")
	if rev, err := r.Revision(ctx); err != nil || rev != head {
		t.Fatalf("clean: %q, %v", rev, err)
	}
	write(t, dir, "config/groups/d.txt", "username = D\n")
	if rev, err := r.Revision(ctx); err != nil || rev != head+"+dirty" {
		t.Errorf("assume-unchanged file edited: revision %q, %v", rev, err)
	}
}

// TestMergeBase: the commit two branches last shared.
func TestMergeBase(t *testing.T) {
	dir, git := gitRepo(t)
	write(t, dir, "a.txt", "a\n")
	git("add", "-A")
	git("commit", "-qm", "fork point")
	git("branch", "feature")
	write(t, dir, "b.txt", "b\n")
	git("add", "-A")
	git("commit", "-qm", "main moves on")
	git("checkout", "-q", "feature")
	write(t, dir, "c.txt", "c\n")
	git("add", "-A")
	git("commit", "-qm", "feature work")
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, _ := r.Resolve(ctx, "main~1")
	if got, err := r.MergeBase(ctx, "main", "feature"); err != nil || got != want {
		t.Errorf("MergeBase = %q, %v; want %q", got, err, want)
	}
	if _, err := r.MergeBase(ctx, "main", "--all"); err == nil {
		t.Error("an option was accepted as a revision")
	}
	git("checkout", "-q", "--orphan", "lonely")
	git("commit", "-qm", "unrelated")
	if _, err := r.MergeBase(ctx, "main", "lonely"); err == nil {
		t.Error("unrelated histories have a merge base")
	}
}

// Issue 20 items 9 and 16: every git command runs through internal/gitsafe, as the audit
// log's do. The caller's GIT_* variables (a GIT_DIR pointing elsewhere, from a hook or a CI
// step) do not choose the repository or its index, and the repository's settings that run
// a program run nothing, whichever command diff uses.
func TestGitRunsThroughGitsafe(t *testing.T) {
	other, ogit := gitRepo(t)
	write(t, other, "config/groups/a.txt", "username = other\n")
	ogit("add", "-A")
	ogit("commit", "-qm", "other")

	dir, git := gitRepo(t)
	write(t, dir, "config/groups/a.txt", "username = a\n")
	git("add", "-A")
	git("commit", "-qm", "one")
	marker := filepath.Join(t.TempDir(), "ran")
	run := "touch " + strconv.Quote(marker)
	for _, kv := range [][2]string{
		{"core.fsmonitor", run}, {"core.pager", run}, {"diff.external", run}, {"credential.helper", "!" + run},
		{"core.sshCommand", run}, {"core.editor", run}, {"log.showSignature", "true"}, {"gpg.program", run},
	} {
		git("config", kv[0], kv[1])
	}
	write(t, dir, "config/groups/a.txt", "username = A\n")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_WORK_TREE", other)
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	t.Setenv("GIT_EXTERNAL_DIFF", run)

	ctx := context.Background()
	r, err := Open(ctx, filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, _ := filepath.EvalSymlinks(r.Top()); got != mustEval(t, dir) {
		t.Fatalf("Top %q, want %q (the caller's GIT_DIR chose the repository)", r.Top(), dir)
	}
	if rev, err := r.Revision(ctx); err != nil || !strings.HasSuffix(rev, "+dirty") {
		t.Errorf("Revision %q, %v", rev, err)
	}
	if got, err := r.Changed(ctx, "HEAD", ""); err != nil || !slices.Equal(got, []string{"config/groups/a.txt"}) {
		t.Errorf("Changed %q, %v", got, err)
	}
	tree, err := r.Tree(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := tree.ReadFile("config/groups/a.txt"); err != nil || string(b) != "username = a\n" {
		t.Errorf("HEAD:a.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a program named by the repository's config ran")
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
