package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/entitlements-go/entitlements/validate"
)

// ReadIn reads name, a slash-separated path inside root, for a directory that others write
// (the audit log checkout, the predictive state): only a regular file is read, at most
// opt.MaxSize bytes (0: DefaultMaxSize; negative: no cap), and a symbolic link is refused
// wherever it points, never followed (a parent directory reached through a link cannot
// leave root either: os.Root refuses that). Errors name the file as root's name joined with
// name. opt.Roots and opt.Regular do not apply.
func ReadIn(root *os.Root, name string, opt Options) ([]byte, error) {
	max := opt.MaxSize
	if max == 0 {
		max = DefaultMaxSize
	}
	// Not filepath.Join: a name with ".." must be shown as given.
	path := root.Name() + string(filepath.Separator) + filepath.FromSlash(name)
	// Lstat before opening: a FIFO must not be opened, a link not followed.
	st, err := root.Lstat(name)
	if err != nil {
		return nil, withPath(err, path)
	}
	if err := CheckEntry(path, st.Mode()); err != nil {
		return nil, err
	}
	if err := check(path, st, max); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, withPath(err, path)
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// Replaced since the Lstat (by a link, which OpenFile follows inside root, or anything
	// else): refused, not read.
	if !os.SameFile(st, fst) {
		return nil, &Error{Path: path, Err: errors.New("replaced while being read")}
	}
	if err := check(path, fst, max); err != nil {
		return nil, err
	}
	return readOpen(f, fst, max, path)
}

// CheckEntry refuses, naming path and what it is, an entry of a tree others write that is
// neither a regular file nor a directory (a symbolic link, FIFO, socket or device): such
// a tree is read and written without following links.
func CheckEntry(path string, mode fs.FileMode) error {
	if mode.IsRegular() || mode.IsDir() {
		return nil
	}
	return &Error{Path: path, Err: fmt.Errorf("%w (%s)", validate.ErrNotRegular, kindOf(mode))}
}

func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + mode.String()
}

// withPath replaces the path of an os.Root error (the name inside the root) with path.
func withPath(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
	}
	return err
}
