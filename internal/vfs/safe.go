package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/validate"
)

// Dir is os.DirFS(root) that Mount recognises: reads then go through safefile with the real
// paths, so size caps and the symlink roots apply as they do for the operating system.
func Dir(root string) fs.FS { return dirFS{FS: os.DirFS(root), root: root} }

type dirFS struct {
	fs.FS
	root string
}

// readSafe reads name (an fs.FS name) from fsys with safefile's checks: only a regular file,
// at most opt.MaxSize bytes. Roots are paths under "/" (mounted), mapped to the directory of
// a Dir; for other file systems they are checked when the file system has symbolic links
// (fs.ReadLinkFS, as a git tree does), and ignored otherwise (nothing can lead out of a root).
func readSafe(fsys fs.FS, name, abs string, opt safefile.Options) ([]byte, error) {
	if d, ok := fsys.(dirFS); ok {
		roots := make([]string, len(opt.Roots))
		for i, r := range opt.Roots {
			roots[i] = filepath.Join(d.root, filepath.FromSlash(r))
		}
		opt.Roots = roots
		return safefile.Read(filepath.Join(d.root, filepath.FromSlash(name)), opt)
	}
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if lfs, ok := fsys.(fs.ReadLinkFS); ok && len(opt.Roots) > 0 {
		if err := inside(lfs, name, abs, opt.Roots); err != nil {
			return nil, err
		}
	}
	max := opt.MaxSize
	if max == 0 {
		max = safefile.DefaultMaxSize
	}
	if !st.Mode().IsRegular() {
		return nil, &safefile.Error{Path: abs, Err: validate.ErrNotRegular}
	}
	if max > 0 && st.Size() > max {
		return nil, &safefile.Error{Path: abs, Err: fmt.Errorf("%w (%d bytes or more, limit %d)", validate.ErrFileTooLarge, st.Size(), max)}
	}
	data, err := fs.ReadFile(fsys, name)
	if err == nil && max > 0 && int64(len(data)) > max {
		return nil, &safefile.Error{Path: abs, Err: fmt.Errorf("%w (%d bytes or more, limit %d)", validate.ErrFileTooLarge, len(data), max)}
	}
	return data, err
}

// inside checks that name, after every symbolic link, is inside one of roots (mounted paths,
// themselves resolved), as safefile does on the operating system.
func inside(fsys fs.ReadLinkFS, name, abs string, roots []string) error {
	names := make([]string, len(roots))
	for i, r := range roots {
		names[i] = strings.TrimPrefix(path.Clean(filepath.ToSlash(r)), "/")
		if names[i] == "" {
			names[i] = "."
		}
	}
	// Fast path (every file of a repository without links): not a link, directly in a root.
	if st, err := fsys.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink == 0 && slices.Contains(names, path.Dir(name)) {
		return nil
	}
	real, err := evalLinks(fsys, name)
	if err != nil {
		if errors.Is(err, validate.ErrOutsideTree) {
			return &safefile.Error{Path: abs, Err: validate.ErrOutsideTree}
		}
		return err
	}
	for _, r := range names {
		rr, err := evalLinks(fsys, r)
		if err != nil {
			continue
		}
		if rr == "." || real == rr || strings.HasPrefix(real, rr+"/") {
			return nil
		}
	}
	return &safefile.Error{Path: abs, Err: validate.ErrOutsideTree}
}

// maxLinks bounds the links followed to resolve one name, as the operating system does.
const maxLinks = 40

// ErrLinkLoop is a name whose resolution follows more than 40 symbolic links.
var ErrLinkLoop = errors.New("too many levels of symbolic links")

// evalLinks is filepath.EvalSymlinks for an fs.ReadLinkFS.
func evalLinks(fsys fs.ReadLinkFS, name string) (string, error) {
	return Resolve(name, true, func(p string) (string, bool, error) {
		st, err := fsys.Lstat(p)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return "", false, err
		}
		target, err := fsys.ReadLink(p)
		return target, err == nil, err
	})
}

// Resolve returns the name (slash-separated, relative to the root of a file system) that name
// leads to, following the symbolic links on the way, and the last element's when follow is
// set, as the operating system does: link reports whether a path is a link and its target,
// which is relative to the link's directory. A link that leaves the file system (an absolute
// target, or one that climbs above the root) is validate.ErrOutsideTree; more than 40 links,
// ErrLinkLoop.
func Resolve(name string, follow bool, link func(p string) (target string, ok bool, err error)) (string, error) {
	todo := strings.Split(name, "/")
	done := make([]string, 0, len(todo))
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", validate.ErrOutsideTree
			}
			done = done[:len(done)-1]
			continue
		}
		done = append(done, c)
		if len(todo) == 0 && !follow {
			break
		}
		target, ok, err := link(strings.Join(done, "/"))
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if hops++; hops > maxLinks {
			return "", ErrLinkLoop
		}
		if path.IsAbs(target) {
			return "", validate.ErrOutsideTree
		}
		done = done[:len(done)-1]
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}
