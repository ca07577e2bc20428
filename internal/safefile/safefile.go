// Package safefile is the one way entitlements-go reads an input file (config, group files,
// people data, manager map, LDAP group snapshot, state and plan files). It refuses anything
// but a regular file before opening it (a FIFO would block the run forever, /dev/zero would
// exhaust memory), caps the size of one file, and can refuse symlinks that resolve outside a
// set of directories (a group file linked to a credentials file elsewhere on the machine).
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/entitlements-go/entitlements/validate"
)

// DefaultMaxSize is the default size cap of one file: larger than the people file of a
// company of several hundred thousand people, far below what exhausts a small machine.
const DefaultMaxSize int64 = 64 << 20

// Options tune Read. The zero value is the documented default.
type Options struct {
	// MaxSize caps the size of the file in bytes. 0: DefaultMaxSize; negative: no cap.
	MaxSize int64
	// Roots, when set, are the directories the file's real path (after every symlink) must be
	// inside; a file resolving elsewhere is refused with validate.ErrOutsideTree.
	Roots []string
	// Regular says that a directory listing has just shown path to be a regular file, not
	// a symlink (a run's group files): the read then skips the lstat that otherwise comes
	// before opening. Anything else found there since is still refused after opening.
	Regular bool
}

// Read returns the content of the regular file at path.
func Read(path string, opt Options) ([]byte, error) {
	max := opt.MaxSize
	if max == 0 {
		max = DefaultMaxSize
	}
	if data, ok := fastRead(path, max, opt.Roots, opt.Regular); ok {
		return data, nil
	}
	// Stat before opening: opening a FIFO blocks until a writer appears, so the type must
	// be known first.
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	link := st.Mode()&fs.ModeSymlink != 0
	if link {
		if st, err = os.Stat(path); err != nil {
			return nil, err
		}
	}
	if err := check(path, st, max); err != nil {
		return nil, err
	}
	if len(opt.Roots) > 0 {
		if err := inside(path, link, opt.Roots); err != nil {
			return nil, err
		}
	}
	// O_NONBLOCK: should the file have been replaced by a FIFO since Stat, opening it must
	// not block either (the check below then refuses it). It changes nothing for files.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have been replaced between Stat and Open: check what was opened.
	st, err = f.Stat()
	if err != nil {
		return nil, err
	}
	if err := check(path, st, max); err != nil {
		return nil, err
	}
	return readOpen(f, st, max, path)
}

// readOpen reads the opened regular file f (st its fstat) to its end, at most max bytes.
func readOpen(f *os.File, st fs.FileInfo, max int64, path string) ([]byte, error) {
	r := io.Reader(f)
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	buf := make([]byte, 0, st.Size()+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
	}
	if max > 0 && int64(len(buf)) > max {
		// The file grew after Stat.
		return nil, tooLarge(path, int64(len(buf)), max)
	}
	return buf, nil
}

// Error is a refused or failed read. Its text is "path: reason", the reason wrapping
// validate.ErrNotRegular, validate.ErrFileTooLarge or validate.ErrOutsideTree when the file
// was refused.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Reason is err's text without the path, for callers that print the path themselves.
func Reason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Err.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func check(path string, st fs.FileInfo, max int64) error {
	if !st.Mode().IsRegular() {
		return &Error{Path: path, Err: validate.ErrNotRegular}
	}
	if max > 0 && st.Size() > max {
		return tooLarge(path, st.Size(), max)
	}
	return nil
}

func tooLarge(path string, size, max int64) error {
	return &Error{Path: path,
		Err: fmt.Errorf("%w (%d bytes or more, limit %d)", validate.ErrFileTooLarge, size, max)}
}

// inside checks that the real path of path is inside one of roots (roots are resolved too, so
// a config tree reached through a symlinked directory still works).
func inside(path string, link bool, roots []string) error {
	// Fast path (every file of a normal repo): not a link, directly in a root directory.
	if !link {
		dir := filepath.Clean(filepath.Dir(path))
		for _, r := range roots {
			if filepath.Clean(r) == dir {
				return nil
			}
		}
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return err
	}
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if rr, err = filepath.Abs(rr); err != nil {
			continue
		}
		if real == rr || strings.HasPrefix(real, rr+string(filepath.Separator)) || rr == string(filepath.Separator) {
			return nil
		}
	}
	return &Error{Path: path, Err: validate.ErrOutsideTree}
}
