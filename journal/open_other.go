//go:build !unix

package journal

import (
	"fmt"
	"io/fs"
	"os"
)

func createExcl(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
}

// openChecked refuses anything but a regular file that is not a symbolic link (checked before
// and after opening: this system has no O_NOFOLLOW).
func openChecked(path string, write bool) (*os.File, error) {
	lst, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if !lst.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (not a regular file)", path, ErrUnsafe)
	}
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil || !os.SameFile(st, lst) || st.Mode()&fs.ModeType != 0 {
		f.Close()
		return nil, fmt.Errorf("%s: %w (replaced while opened)", path, ErrUnsafe)
	}
	return f, nil
}

// lockFile does nothing here: this system has no flock, and the journal is documented as
// unlocked on it.
func lockFile(*os.File, string) error { return nil }
