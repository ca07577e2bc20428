//go:build unix

package journal

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func createExcl(path string) (*os.File, error) {
	// O_EXCL with O_CREATE fails on any existing name, a symbolic link included.
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
}

// openChecked opens an existing journal without following a final symbolic link and without
// blocking on a FIFO, then checks what it opened (not what a path named a moment before).
func openChecked(path string, write bool) (*os.File, error) {
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ELOOP):
			return nil, fmt.Errorf("%s: %w (a symbolic link)", path, ErrUnsafe)
		case errors.Is(err, syscall.EISDIR):
			return nil, fmt.Errorf("%s: %w (a directory)", path, ErrUnsafe)
		}
		return nil, fmt.Errorf("journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	why := ""
	sys, _ := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.Mode().IsRegular():
		why = "not a regular file"
	case st.Mode().Perm()&0o022 != 0:
		why = fmt.Sprintf("writable by others (mode %v)", st.Mode().Perm())
	case sys != nil && int(sys.Uid) != os.Geteuid():
		why = fmt.Sprintf("owned by uid %d, not by this user", sys.Uid)
	}
	if why != "" {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrUnsafe, why)
	}
	// Back to blocking I/O for the regular file.
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	return f, nil
}

// lockFile takes the journal's exclusive lock without waiting: the holder is an apply that may
// run for hours, so the caller is told at once rather than queued behind it.
func lockFile(f *os.File, path string) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("%s: %w", path, ErrBusy)
		default:
			return fmt.Errorf("journal %s: lock: %w", path, err)
		}
	}
}
