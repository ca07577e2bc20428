// Package vfs lets the loaders read a repository either from the operating system or from an
// io/fs.FS (a git tree, an in-memory tree) without changing how they name files. The loaders
// work with absolute OS paths; an fs.FS is mounted at the virtual root "/" so that every path
// they build (joins, Rel for messages, the people file relative to the working directory)
// keeps working unchanged.
package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/entitlements-go/entitlements/internal/safefile"
)

// FS reads files by absolute path.
type FS interface {
	// ReadFile reads a regular file within opt's limits (see safefile).
	ReadFile(name string, opt safefile.Options) ([]byte, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	// Getwd is the working directory relative paths are resolved against.
	Getwd() (string, error)
	// Rel is the path of name relative to the root of the file system (slash-separated), or
	// name itself for the OS.
	Rel(name string) string
}

// OS is the operating system's file system.
type OS struct{}

func (OS) ReadFile(name string, opt safefile.Options) ([]byte, error) {
	return safefile.Read(name, opt)
}
func (OS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (OS) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (OS) Getwd() (string, error)                     { return os.Getwd() }
func (OS) Rel(name string) string                     { return name }

// Mount serves fsys at the virtual root "/"; wd is the working directory inside fsys
// (slash-separated, "" or "." for the root).
func Mount(fsys fs.FS, wd string) FS {
	wd = path.Clean("/" + strings.TrimPrefix(filepath.ToSlash(wd), "/"))
	return mounted{fsys: fsys, wd: filepath.FromSlash(wd)}
}

type mounted struct {
	fsys fs.FS
	wd   string
}

// name maps an absolute path under "/" to an fs.FS name; paths outside do not exist.
func (m mounted) name(op, p string) (string, error) {
	s := filepath.ToSlash(filepath.Clean(p))
	if !strings.HasPrefix(s, "/") {
		return "", &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
	}
	s = strings.TrimPrefix(s, "/")
	if s == "" {
		s = "."
	}
	if !fs.ValidPath(s) {
		return "", &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
	}
	return s, nil
}

func (m mounted) ReadFile(p string, opt safefile.Options) ([]byte, error) {
	n, err := m.name("open", p)
	if err != nil {
		return nil, err
	}
	b, err := readSafe(m.fsys, n, p, opt)
	return b, relabel(err, p)
}

func (m mounted) ReadDir(p string) ([]fs.DirEntry, error) {
	n, err := m.name("open", p)
	if err != nil {
		return nil, err
	}
	ents, err := fs.ReadDir(m.fsys, n)
	return ents, relabel(err, p)
}

func (m mounted) Stat(p string) (fs.FileInfo, error) {
	n, err := m.name("stat", p)
	if err != nil {
		return nil, err
	}
	st, err := fs.Stat(m.fsys, n)
	return st, relabel(err, p)
}

func (m mounted) Getwd() (string, error) { return m.wd, nil }

func (m mounted) Rel(p string) string {
	n, err := m.name("rel", p)
	if err != nil {
		return p
	}
	return n
}

// relabel names the file as the loader does in error messages.
func relabel(err error, p string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: p, Err: pe.Err}
	}
	return err
}

// Abs is filepath.Abs against fsys's working directory.
func Abs(fsys FS, p string) (string, error) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	wd, err := fsys.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, p), nil
}

// Or returns fsys, or the OS when it is nil.
func Or(fsys FS) FS {
	if fsys == nil {
		return OS{}
	}
	return fsys
}
