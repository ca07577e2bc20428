// Package gitfs serves the trees of a git repository as io/fs.FS values, read from git
// objects: no checkout, nothing in the work tree is touched, so `entitlements diff` can
// calculate any revision of a config repo next to the one being edited.
//
// It runs the git binary (`git ls-tree`, `git cat-file --batch`, `git diff`) rather than a
// Go implementation such as go-git: git is present wherever there is a work tree to run
// in, its packfile access is the fastest there is (a production-sized repo of 67,000 group
// files streams through one `cat-file --batch` process in well under a second), it honours
// every repository feature (alternates, partial clones, new object formats, worktrees)
// without us tracking them, and the module gains no dependency. Library users who have no
// git at all diff two trees with calc.LoadFS and review.Compare directly.
//
// Every git command runs the way the audit log runs git: no system or global
// configuration files, none of the caller's GIT_* variables, -c overrides for every setting
// that runs a program, its own process group. On top of that, -c overrides fix the
// repository's settings that change paths, quoting, colours or which files count as changed
// (see neutralConfig), so that a setting such as diff.relative or an assume-unchanged bit can
// never hide a change from a review.
//
// Symbolic links stored in a tree are followed as a checkout follows them, within the tree:
// a link that leads outside it (an absolute target, or one with too many "..") is an error
// wrapping validate.ErrOutsideTree, never a read of a file of the machine.
package gitfs

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/entitlements-go/entitlements/internal/gitsafe"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/vfs"
)

// Repo is a git repository, found from a directory inside its work tree.
type Repo struct {
	dir    string
	top    string
	prefix string

	mu      sync.Mutex
	batch   *catFile
	streams map[*exec.Cmd]bool // read-ahead streams still running
	closed  bool
	// resolved holds the commit ids Resolve returned, which resolve to themselves.
	resolved map[string]string
	// args start every git command, after gitsafe's (see command).
	args []string
}

// neutralConfig are -c overrides for every git command, besides gitsafe's (which switch off
// every setting that runs a program): the settings of the repository that change the paths or
// the quoting git prints, or which files it reports as changed. System and global
// configuration files are not read at all (gitsafe.Env).
var neutralConfig = []string{
	"diff.relative=false", // paths relative to the working directory, and only those below it
	"diff.noprefix=false", // a/ b/ prefixes (not printed by --name-only, fixed all the same)
	"diff.mnemonicPrefix=false",
	"diff.renames=false",
	"diff.ignoreSubmodules=none",
	"core.quotePath=false",   // paths are read NUL-terminated, byte for byte
	"core.ignoreStat=false",  // would mark every file assume-unchanged
	"core.checkStat=default", // "minimal" compares fewer fields and misses edits
	"core.trustCtime=true",
	"core.untrackedCache=false",
	"core.splitIndex=false",
	"color.ui=false",
	"color.diff=false",
	"color.status=false",
	"status.showUntrackedFiles=normal",
	"status.relativePaths=false",
}

// Open finds the repository that contains dir.
func Open(ctx context.Context, dir string) (*Repo, error) {
	r := &Repo{dir: dir}
	r.args = neutral(ctx, dir)
	out, err := r.git(ctx, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("not inside a git work tree: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	r.top = lines[0]
	if len(lines) > 1 {
		r.prefix = strings.TrimSuffix(lines[1], "/")
	}
	return r, nil
}

// Top is the root of the work tree.
func (r *Repo) Top() string { return r.top }

// Prefix is the directory Open was given, relative to Top (slash-separated, "" at the root).
func (r *Repo) Prefix() string { return r.prefix }

// Close stops the helper processes of lazy reads and read-ahead streams.
func (r *Repo) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.batch != nil {
		r.batch.close()
		r.batch = nil
	}
	for cmd := range r.streams {
		cmd.Process.Kill()
	}
}

// neutral returns the arguments that every git command of a Repo starts with, after
// gitsafe's: the overrides of neutralConfig, and the user's safe.directory entries, the one
// setting carried over from the global or system configuration (a repository owned by
// another user, as in many CI containers, cannot be read without them). The look-up is
// `git config`, which runs nothing whatever the repository's config says.
func neutral(ctx context.Context, dir string) []string {
	var args []string
	for _, c := range neutralConfig {
		args = append(args, "-c", c)
	}
	cmd := exec.CommandContext(ctx, "git", "config", "--show-scope", "--get-all", "safe.directory")
	cmd.Dir = dir
	if out, err := cmd.Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			scope, v, ok := strings.Cut(line, "\t")
			if ok && scope != "local" && scope != "worktree" {
				args = append(args, "-c", "safe.directory="+v)
			}
		}
	}
	return args
}

// command is a git command in the repository: gitsafe's (neutral environment, overrides of
// every program setting, own process group) with the overrides of neutral.
func (r *Repo) command(ctx context.Context, args ...string) *exec.Cmd {
	return gitsafe.Command(ctx, "git", r.dir, append(slices.Clip(r.args), args...)...)
}

func (r *Repo) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := r.command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out, nil
}

// Resolve returns the commit a revision names.
func (r *Repo) Resolve(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("invalid revision %q", rev)
	}
	r.mu.Lock()
	c, ok := r.resolved[rev]
	r.mu.Unlock()
	if ok {
		return c, nil
	}
	out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("unknown revision %q: %w", rev, err)
	}
	c = strings.TrimSpace(string(out))
	// A commit id names itself for good: resolving it again (Tree of a resolved revision)
	// needs no git process. Names such as HEAD or a branch can move and are asked each time.
	r.mu.Lock()
	if r.resolved == nil {
		r.resolved = map[string]string{}
	}
	r.resolved[c] = c
	r.mu.Unlock()
	return c, nil
}

// Revision names the state of the work tree around the directory Open was given: the
// commit checked out, with "+dirty" appended when files under that directory differ from it
// (staged, unstaged or untracked and not ignored, and files git is told not to check, whose
// content is compared here). A saved plan records it so that a reviewer can tell which commit
// the plan was made from; the content digests, not this name, decide whether the plan still
// applies.
func (r *Repo) Revision(ctx context.Context) (string, error) {
	commit, err := r.Resolve(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	out, err := r.git(ctx, "status", "--porcelain", "--untracked-files=normal", "--", ".")
	if err != nil {
		return "", err
	}
	dirty := len(bytes.TrimSpace(out)) > 0
	if !dirty {
		fl, err := r.unchecked(ctx)
		if err != nil {
			return "", err
		}
		for _, f := range fl {
			if (r.prefix == "" || strings.HasPrefix(f.path, r.prefix+"/")) && !r.sameOnDisk(f) {
				dirty = true
				break
			}
		}
	}
	if dirty {
		commit += "+dirty"
	}
	return commit, nil
}

// MergeBase returns the best common ancestor of two revisions (as `git merge-base`): the
// commit a pull request's branch was made from, which is what its changes are to be compared
// against (comparing with the tip of the target branch shows that branch's later changes as
// reverted).
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	ca, err := r.Resolve(ctx, a)
	if err != nil {
		return "", err
	}
	cb, err := r.Resolve(ctx, b)
	if err != nil {
		return "", err
	}
	out, err := r.git(ctx, "merge-base", ca, cb)
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		if err == nil {
			err = errors.New("no output")
		}
		return "", fmt.Errorf("%s and %s have no common ancestor: %w", a, b, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Changed lists the files (slash-separated, relative to Top) that differ between the
// commits base and head, or between base and the work tree when head is "" (staged and
// unstaged changes, untracked files that are not ignored, and every file whose work-tree
// state git is told not to check: assume-unchanged and skip-worktree entries).
func (r *Repo) Changed(ctx context.Context, base, head string) ([]string, error) {
	args := []string{"diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-relative", base}
	if head != "" {
		args = append(args, head)
	}
	out, err := r.git(ctx, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	names := splitZ(out)
	if head == "" {
		out, err := r.git(ctx, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", ":/")
		if err != nil {
			return nil, err
		}
		names = append(names, splitZ(out)...)
		// git compares these with nothing: they are reported as changed (which only makes
		// the diff read them), whatever their content.
		fl, err := r.unchecked(ctx)
		if err != nil {
			return nil, err
		}
		for _, f := range fl {
			names = append(names, f.path)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// indexEntry is a file of the index.
type indexEntry struct {
	path, oid string
	mode      string
	// skip: the skip-worktree bit (the file may be absent from the work tree).
	skip bool
}

// unchecked lists the index entries whose work-tree state git does not look at: files marked
// assume-unchanged (a lower-case tag in `ls-files -v`) or skip-worktree (tag S).
func (r *Repo) unchecked(ctx context.Context) ([]indexEntry, error) {
	var out []indexEntry
	err := r.stream(ctx, []string{"ls-files", "-v", "-s", "-z", "--full-name", ":/"}, func(rec []byte) {
		// <tag> SP <mode> SP <object> SP <stage> TAB <path>
		if len(rec) < 2 || rec[1] != ' ' {
			return
		}
		tag := rec[0]
		if !(tag >= 'a' && tag <= 'z') && tag != 'S' {
			return
		}
		meta, name, ok := bytes.Cut(rec[2:], []byte("\t"))
		if !ok {
			return
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 {
			return
		}
		out = append(out, indexEntry{path: string(name), mode: f[0], oid: f[1], skip: tag == 'S' || tag == 's'})
	})
	return out, err
}

// sameOnDisk reports whether the work tree holds the index's content for e.
func (r *Repo) sameOnDisk(e indexEntry) bool {
	if e.mode != "100644" && e.mode != "100755" {
		return false
	}
	data, err := safefile.Read(filepath.Join(r.top, filepath.FromSlash(e.path)), safefile.Options{})
	return err == nil && blobID(data, len(e.oid)) == e.oid
}

func splitZ(b []byte) []string {
	var out []string
	for _, s := range strings.Split(string(b), "\x00") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Tree is the tree of one commit as an fs.FS (also fs.ReadFileFS, fs.ReadDirFS, fs.StatFS
// and fs.ReadLinkFS). Files are read from git objects on first use, or all at once by
// Prefetch. Symbolic links are followed within the tree (see the package documentation);
// submodules are left out. It is safe for concurrent use.
type Tree struct {
	repo   *Repo
	commit string
	files  map[string]*entry
	dirs   map[string][]dirEntry
	// links are the symbolic links of the tree: path → target as stored.
	links map[string]string

	mu sync.Mutex
}

type entry struct {
	name string
	oid  string
	size int64
	data []byte
	read bool
	// ready is closed when a read-ahead stream has dealt with the entry (read set, or left
	// unset when the stream failed); nil when no stream has it.
	ready chan struct{}
}

// Tree lists the tree of rev (one `git ls-tree` call; no file is read yet).
func (r *Repo) Tree(ctx context.Context, rev string) (*Tree, error) {
	commit, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	t := &Tree{repo: r, commit: commit, files: map[string]*entry{}, dirs: map[string][]dirEntry{".": nil}}
	var slab []entry
	var names []string
	var ents []*entry
	linkOIDs := map[string]string{}
	var addDir func(d string)
	addDir = func(d string) {
		if _, seen := t.dirs[d]; seen {
			return
		}
		t.dirs[d] = nil
		parent := path.Dir(d)
		addDir(parent)
		t.dirs[parent] = append(t.dirs[parent], dirEntry{name: path.Base(d), dir: true})
	}
	// The listing of a large repo is tens of megabytes: it is parsed as it streams.
	err = r.stream(ctx, []string{"ls-tree", "-r", "-z", "-l", "--full-tree", commit}, func(rec []byte) {
		// <mode> SP <type> SP <object> SP+ <size> TAB <path>
		tab := bytes.IndexByte(rec, '\t')
		if tab < 0 {
			return
		}
		meta, name := rec[:tab], string(rec[tab+1:])
		mode, meta, _ := bytes.Cut(meta, []byte(" "))
		typ, meta, _ := bytes.Cut(meta, []byte(" "))
		oid, meta, _ := bytes.Cut(meta, []byte(" "))
		if string(typ) != "blob" {
			return
		}
		d, base := path.Split(name)
		d = strings.TrimSuffix(d, "/")
		if d == "" {
			d = "."
		}
		size, _ := strconv.ParseInt(string(bytes.TrimLeft(meta, " ")), 10, 64)
		if string(mode) == "120000" {
			linkOIDs[name] = string(oid)
			addDir(d)
			t.dirs[d] = append(t.dirs[d], dirEntry{name: base, size: size, link: true})
			return
		}
		if string(mode) != "100644" && string(mode) != "100755" {
			return
		}
		if len(slab) == 0 {
			slab = make([]entry, 1024)
		}
		e := &slab[0]
		slab = slab[1:]
		*e = entry{name: base, oid: string(oid), size: size}
		names = append(names, name)
		ents = append(ents, e)
		addDir(d)
		t.dirs[d] = append(t.dirs[d], dirEntry{name: base, size: size})
	})
	if err != nil {
		return nil, err
	}
	// Filled at the end, at its final size: growing a map of 67,000 paths was a third of
	// the listing's cost.
	t.files = make(map[string]*entry, len(names))
	for i, n := range names {
		t.files[n] = ents[i]
	}
	if len(linkOIDs) > 0 {
		// A link's target is the content of its blob: few, small, read now.
		t.links = make(map[string]string, len(linkOIDs))
		for n, oid := range linkOIDs {
			target, err := r.readBlob(oid)
			if err != nil {
				return nil, fmt.Errorf("reading the symbolic link %s: %w", n, err)
			}
			t.links[n] = string(target)
		}
	}
	for d, ents := range t.dirs {
		// Git lists a directory's files in its own order (a subdirectory sorts as "name/"),
		// which is byte order for most directories: sort only those that are not.
		if !slices.IsSortedFunc(ents, compareEntries) {
			slices.SortFunc(ents, compareEntries)
			t.dirs[d] = ents
		}
	}
	return t, nil
}

func compareEntries(a, b dirEntry) int { return strings.Compare(a.name, b.name) }

// stream runs git and calls fn with each NUL-terminated record of its output.
func (r *Repo) stream(ctx context.Context, args []string, fn func(rec []byte)) error {
	cmd := r.command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	br := bufio.NewReaderSize(stdout, 1<<16)
	for {
		rec, err := br.ReadSlice(0)
		if err == bufio.ErrBufferFull {
			var long []byte
			long, err = br.ReadBytes(0)
			rec = append(slices.Clone(rec), long...)
		}
		if len(rec) > 0 && rec[len(rec)-1] == 0 {
			fn(rec[:len(rec)-1])
		}
		if err != nil {
			break
		}
	}
	if err := cmd.Wait(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("git %s: %s", args[0], msg)
	}
	return nil
}

// HasLink reports whether name, or a directory on its way, is a symbolic link of the tree:
// its content then depends on files elsewhere in the tree, which a list of changed paths does
// not name.
func (t *Tree) HasLink(name string) bool {
	if len(t.links) == 0 {
		return false
	}
	for i := 0; i <= len(name); i++ {
		if i == len(name) || name[i] == '/' {
			if _, ok := t.links[name[:i]]; ok {
				return true
			}
		}
	}
	return false
}

// real returns the path of the tree that name leads to, following the links on the way (and
// the last element's when follow is set) as the operating system does: a link's target is
// relative to its directory; an absolute target, or one that climbs above the root, leaves the
// tree and is refused.
func (t *Tree) real(op, name string, follow bool) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if !t.HasLink(name) {
		return name, nil
	}
	real, err := vfs.Resolve(name, follow, func(p string) (string, bool, error) {
		target, ok := t.links[p]
		return target, ok, nil
	})
	if err != nil {
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	return real, nil
}

// Commit is the commit the tree belongs to.
func (t *Tree) Commit() string { return t.commit }

// Prefetch reads every file of the tree through one `git cat-file --batch` stream (see
// ReadAhead) and waits for it, which is much faster than reading them one by one when most of
// them will be needed. Files a failed stream did not deliver are read one by one later.
func (t *Tree) Prefetch(ctx context.Context) error {
	t.mu.Lock()
	names := make([]string, 0, len(t.files))
	for n := range t.files {
		names = append(names, n)
	}
	t.mu.Unlock()
	slices.Sort(names)
	t.ReadAhead(names)
	for _, n := range names {
		t.mu.Lock()
		ready := t.files[n].ready
		t.mu.Unlock()
		if ready == nil {
			continue
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// ReadAhead starts reading the named files in the background, in that order, through one
// `git cat-file --batch` stream, and returns at once: a loader that announces the files it is
// about to read (calc.Load does) gets them as fast as git can decompress them, while it is
// still parsing the first ones, instead of waiting for a Prefetch of the whole tree first.
// ReadFile of a file in the stream waits for it; names that are not files, or already read
// or streaming, are skipped. A failed stream only makes the files it did not deliver read one
// by one. The stream stops with Repo.Close.
func (t *Tree) ReadAhead(names []string) {
	t.mu.Lock()
	var want []*entry
	for _, n := range names {
		if len(t.links) > 0 {
			var err error
			if n, err = t.real("read", n, true); err != nil {
				continue
			}
		}
		if e := t.files[n]; e != nil && !e.read && e.ready == nil {
			e.ready = make(chan struct{})
			want = append(want, e)
		}
	}
	t.mu.Unlock()
	if len(want) == 0 {
		return
	}
	cmd, stdin, stdout, err := t.repo.startCatFile(context.Background())
	if err != nil {
		t.release(want)
		return
	}
	go func() {
		bw := bufio.NewWriterSize(stdin, 1<<16)
		for _, e := range want {
			bw.WriteString(e.oid)
			bw.WriteByte('\n')
		}
		bw.Flush()
		stdin.Close()
	}()
	go func() {
		br := bufio.NewReaderSize(stdout, 1<<20)
		for i, e := range want {
			data, err := readObject(br)
			if err != nil {
				cmd.Process.Kill()
				t.release(want[i:])
				break
			}
			t.mu.Lock()
			e.data, e.read = data, true
			t.mu.Unlock()
			close(e.ready)
		}
		io.Copy(io.Discard, br)
		cmd.Wait()
		t.repo.streamDone(cmd)
	}()
}

// release gives entries a stream will not deliver back to reads one by one.
func (t *Tree) release(es []*entry) {
	for _, e := range es {
		close(e.ready)
	}
}

// startCatFile starts a `git cat-file --batch` that Close stops.
func (r *Repo) startCatFile(ctx context.Context) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := r.command(ctx, "cat-file", "--batch")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, nil, errors.New("repository closed")
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("git cat-file: %w", err)
	}
	if r.streams == nil {
		r.streams = map[*exec.Cmd]bool{}
	}
	r.streams[cmd] = true
	return cmd, stdin, stdout, nil
}

func (r *Repo) streamDone(cmd *exec.Cmd) {
	r.mu.Lock()
	delete(r.streams, cmd)
	r.mu.Unlock()
}

// readObject reads one `cat-file --batch` answer.
func readObject(br *bufio.Reader) ([]byte, error) {
	hdr, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(hdr)
	if len(f) != 3 {
		return nil, fmt.Errorf("git cat-file: %s", strings.TrimSpace(hdr))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, fmt.Errorf("git cat-file: bad header %q", hdr)
	}
	data := make([]byte, n+1) // content and the terminating newline
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return data[:n], nil
}

// catFile is a long-lived `git cat-file --batch` for lazy reads.
type catFile struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func (c *catFile) close() {
	c.stdin.Close()
	c.cmd.Wait()
}

func (r *Repo) readBlob(oid string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("repository closed")
	}
	if r.batch == nil {
		// Not bound to a request's context: the process serves every lazy read until Close.
		cmd := r.command(context.Background(), "cat-file", "--batch")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		r.batch = &catFile{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	}
	if _, err := io.WriteString(r.batch.stdin, oid+"\n"); err != nil {
		r.batch.close()
		r.batch = nil
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	data, err := readObject(r.batch.out)
	if err != nil {
		r.batch.close()
		r.batch = nil
	}
	return data, err
}

// ReadFile implements fs.ReadFileFS.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	real, err := t.real("read", name, true)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	e := t.files[real]
	if e == nil {
		t.mu.Unlock()
		if _, ok := t.dirs[real]; ok {
			return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	if !e.read && e.ready != nil {
		ready := e.ready
		t.mu.Unlock()
		<-ready
		t.mu.Lock()
	}
	if e.read {
		t.mu.Unlock()
		return slices.Clone(e.data), nil
	}
	t.mu.Unlock()
	data, err := t.repo.readBlob(e.oid)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	t.mu.Lock()
	e.data, e.read = data, true
	t.mu.Unlock()
	return slices.Clone(data), nil
}

// ReadDir implements fs.ReadDirFS. Links are listed as links (Type fs.ModeSymlink), as
// os.ReadDir lists them.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	real, err := t.real("readdir", name, true)
	if err != nil {
		return nil, err
	}
	ents, ok := t.dirs[real]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	out := make([]fs.DirEntry, len(ents))
	for i, e := range ents {
		out[i] = e
	}
	return out, nil
}

// Stat implements fs.StatFS; it follows links.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	real, err := t.real("stat", name, true)
	if err != nil {
		return nil, err
	}
	if e := t.files[real]; e != nil {
		return dirEntry{name: path.Base(name), size: e.size}, nil
	}
	if _, ok := t.dirs[real]; ok {
		return dirEntry{name: path.Base(name), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// Lstat implements fs.ReadLinkFS: Stat that does not follow a link in the last element.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) {
	real, err := t.real("lstat", name, false)
	if err != nil {
		return nil, err
	}
	if target, ok := t.links[real]; ok {
		return dirEntry{name: path.Base(name), size: int64(len(target)), link: true}, nil
	}
	return t.Stat(real)
}

// ReadLink implements fs.ReadLinkFS: the target of a link, as stored.
func (t *Tree) ReadLink(name string) (string, error) {
	real, err := t.real("readlink", name, false)
	if err != nil {
		return "", err
	}
	if target, ok := t.links[real]; ok {
		return target, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

// Open implements fs.FS.
func (t *Tree) Open(name string) (fs.File, error) {
	st, err := t.Stat(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Unwrap(err)}
	}
	if st.IsDir() {
		ents, _ := t.ReadDir(name)
		return &dirFile{info: st, ents: ents}, nil
	}
	data, err := t.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &file{info: st, r: bytes.NewReader(data)}, nil
}

type dirEntry struct {
	name string
	size int64
	dir  bool
	link bool
}

func (d dirEntry) Name() string               { return d.name }
func (d dirEntry) IsDir() bool                { return d.dir }
func (d dirEntry) Type() fs.FileMode          { return d.Mode().Type() }
func (d dirEntry) Info() (fs.FileInfo, error) { return d, nil }
func (d dirEntry) Size() int64                { return d.size }
func (d dirEntry) Mode() fs.FileMode {
	switch {
	case d.dir:
		return fs.ModeDir | 0o555
	case d.link:
		return fs.ModeSymlink | 0o777
	}
	return 0o444
}
func (d dirEntry) ModTime() time.Time { return time.Time{} }
func (d dirEntry) Sys() any           { return nil }

type file struct {
	info fs.FileInfo
	r    *bytes.Reader
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *file) Close() error               { return nil }

type dirFile struct {
	info fs.FileInfo
	ents []fs.DirEntry
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dirFile) Read([]byte) (int, error)   { return 0, errors.New("is a directory") }
func (d *dirFile) Close() error               { return nil }
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		out := d.ents
		d.ents = nil
		return out, nil
	}
	if len(d.ents) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(d.ents))
	out := d.ents[:k]
	d.ents = d.ents[k:]
	return out, nil
}

// FromWorkTree returns the tree as an fs.FS whose files are read from the work tree when they
// are byte for byte the tree's (same git object id) and from git objects otherwise. The
// names, sizes and directories are always the tree's. For the commit checked out this reads
// plain files, which is several times faster than decompressing every object, without
// trusting the work tree: a file that was edited, is missing, or is changed by a checkout
// filter is simply read from git.
func (t *Tree) FromWorkTree() fs.FS { return &workTree{Tree: t} }

type workTree struct{ *Tree }

func (w *workTree) ReadFile(name string) ([]byte, error) {
	real, err := w.real("read", name, true)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	e := w.files[real]
	w.mu.Unlock()
	if e != nil {
		// The file the tree's links lead to, read by its own path: the work tree's links are
		// not the tree's.
		data, err := safefile.Read(filepath.Join(w.repo.top, filepath.FromSlash(real)), safefile.Options{MaxSize: max(e.size, 1)})
		if err == nil && int64(len(data)) == e.size && blobID(data, len(e.oid)) == e.oid {
			return data, nil
		}
	}
	return w.Tree.ReadFile(real)
}

// ReadAhead does nothing: the files are expected on disk, and git is asked only for the few
// that are not.
func (w *workTree) ReadAhead([]string) {}

func (w *workTree) Open(name string) (fs.File, error) {
	st, err := w.Stat(name)
	if err != nil || st.IsDir() {
		return w.Tree.Open(name)
	}
	data, err := w.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return &file{info: st, r: bytes.NewReader(data)}, nil
}

// blobID is the git object id of a blob with this content, in the repository's hash (SHA-1
// ids have 40 hex digits, SHA-256 ids 64).
func blobID(data []byte, hexLen int) string {
	var h hash.Hash
	if hexLen == 64 {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	var hdr [32]byte
	h.Write(strconv.AppendInt(append(hdr[:0], "blob "...), int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
