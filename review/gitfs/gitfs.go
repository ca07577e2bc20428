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
package gitfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Repo is a git repository, found from a directory inside its work tree.
type Repo struct {
	dir    string
	top    string
	prefix string

	mu    sync.Mutex
	batch *catFile
}

// Open finds the repository that contains dir.
func Open(ctx context.Context, dir string) (*Repo, error) {
	r := &Repo{dir: dir}
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

// Close stops the helper process of lazy reads.
func (r *Repo) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.batch != nil {
		r.batch.close()
		r.batch = nil
	}
}

func (r *Repo) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.dir
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
	out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("unknown revision %q: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Revision names the state of the work tree around the directory Open was given: the
// commit checked out, with "+dirty" appended when files under that directory differ from it
// (staged, unstaged or untracked and not ignored). A saved plan records it so that a reviewer
// can tell which commit the plan was made from; the content digests, not this name, decide
// whether the plan still applies.
func (r *Repo) Revision(ctx context.Context) (string, error) {
	commit, err := r.Resolve(ctx, "HEAD")
	if err != nil {
		return "", err
	}
	out, err := r.git(ctx, "status", "--porcelain", "--untracked-files=normal", "--", ".")
	if err != nil {
		return "", err
	}
	if len(bytes.TrimSpace(out)) > 0 {
		commit += "+dirty"
	}
	return commit, nil
}

// Changed lists the files (slash-separated, relative to Top) that differ between the
// commits base and head, or between base and the work tree when head is "" (staged and
// unstaged changes, and untracked files that are not ignored).
func (r *Repo) Changed(ctx context.Context, base, head string) ([]string, error) {
	args := []string{"diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", base}
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
	}
	slices.Sort(names)
	return slices.Compact(names), nil
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

// Tree is the tree of one commit as an fs.FS (also fs.ReadFileFS, fs.ReadDirFS and
// fs.StatFS). Files are read from git objects on first use, or all at once by Prefetch.
// Symbolic links and submodules are left out. It is safe for concurrent use.
type Tree struct {
	repo   *Repo
	commit string
	files  map[string]*entry
	dirs   map[string][]fs.DirEntry

	mu sync.Mutex
}

type entry struct {
	name string
	oid  string
	size int64
	data []byte
	read bool
}

// Tree lists the tree of rev (one `git ls-tree` call; no file is read yet).
func (r *Repo) Tree(ctx context.Context, rev string) (*Tree, error) {
	commit, err := r.Resolve(ctx, rev)
	if err != nil {
		return nil, err
	}
	out, err := r.git(ctx, "ls-tree", "-r", "-z", "-l", "--full-tree", commit)
	if err != nil {
		return nil, err
	}
	t := &Tree{repo: r, commit: commit, files: map[string]*entry{}, dirs: map[string][]fs.DirEntry{}}
	dirSeen := map[string]bool{".": true}
	var addDir func(d string)
	addDir = func(d string) {
		if dirSeen[d] {
			return
		}
		dirSeen[d] = true
		parent := path.Dir(d)
		addDir(parent)
		t.dirs[parent] = append(t.dirs[parent], dirEntry{name: path.Base(d), dir: true})
	}
	for _, rec := range splitZ(out) {
		// <mode> SP <type> SP <object> SP+ <size> TAB <path>
		meta, name, ok := strings.Cut(rec, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		if len(f) != 4 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		size, _ := strconv.ParseInt(f[3], 10, 64)
		t.files[name] = &entry{name: path.Base(name), oid: f[2], size: size}
		d := path.Dir(name)
		addDir(d)
		t.dirs[d] = append(t.dirs[d], dirEntry{name: path.Base(name), size: size})
	}
	if _, ok := t.dirs["."]; !ok {
		t.dirs["."] = nil
	}
	for d, ents := range t.dirs {
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		t.dirs[d] = ents
	}
	return t, nil
}

// Commit is the commit the tree belongs to.
func (t *Tree) Commit() string { return t.commit }

// Prefetch reads every file of the tree through one `git cat-file --batch` stream, which is
// much faster than reading them one by one when most of them will be needed.
func (t *Tree) Prefetch(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var want []*entry
	for _, e := range t.files {
		if !e.read {
			want = append(want, e)
		}
	}
	if len(want) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = t.repo.dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	werr := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(stdin, 1<<16)
		for _, e := range want {
			bw.WriteString(e.oid)
			bw.WriteByte('\n')
		}
		err := bw.Flush()
		stdin.Close()
		werr <- err
	}()
	br := bufio.NewReaderSize(stdout, 1<<20)
	var rerr error
	for _, e := range want {
		data, err := readObject(br)
		if err != nil {
			rerr = err
			break
		}
		e.data, e.read = data, true
	}
	if rerr != nil {
		cmd.Process.Kill()
	}
	io.Copy(io.Discard, br)
	if err := <-werr; err != nil && rerr == nil {
		rerr = err
	}
	if err := cmd.Wait(); err != nil && rerr == nil {
		rerr = fmt.Errorf("git cat-file: %w", err)
	}
	return rerr
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
	if r.batch == nil {
		// Not bound to a request's context: the process serves every lazy read until Close.
		cmd := exec.Command("git", "cat-file", "--batch")
		cmd.Dir = r.dir
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
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	t.mu.Lock()
	e := t.files[name]
	if e == nil {
		t.mu.Unlock()
		if _, ok := t.dirs[name]; ok {
			return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
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

// ReadDir implements fs.ReadDirFS.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	ents, ok := t.dirs[name]
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(ents), nil
}

// Stat implements fs.StatFS.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if e := t.files[name]; e != nil {
		return dirEntry{name: e.name, size: e.size}, nil
	}
	if _, ok := t.dirs[name]; ok {
		return dirEntry{name: path.Base(name), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
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
}

func (d dirEntry) Name() string { return d.name }
func (d dirEntry) IsDir() bool  { return d.dir }
func (d dirEntry) Type() fs.FileMode {
	if d.dir {
		return fs.ModeDir
	}
	return 0
}
func (d dirEntry) Info() (fs.FileInfo, error) { return d, nil }
func (d dirEntry) Size() int64                { return d.size }
func (d dirEntry) Mode() fs.FileMode {
	if d.dir {
		return fs.ModeDir | 0o555
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
