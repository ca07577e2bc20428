package vfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
// a Dir, and ignored for other file systems (they have no symlinks leaving them).
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
