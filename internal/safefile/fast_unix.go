//go:build unix

package safefile

import (
	"errors"
	"syscall"
)

// fastRead reads a regular file that is not a symlink in the fewest system calls: lstat
// (skipped when a listing has just said the path is a regular file), open, fstat, read,
// close. A run reads tens of thousands of small group files, and the general path (an
// *os.File with its poller registration and finalizer, then a read to see end of file) spent
// more time in the kernel than the parser spent on the content. The lstat comes first so that
// a FIFO or a device is never opened (an open can release a writer blocked on a FIFO, or act
// on a device). The open cannot block or take a terminal either (O_NONBLOCK, O_NOCTTY) and
// does not follow a final symlink (O_NOFOLLOW), for a file replaced since; whatever is not a
// regular file within the cap is closed unread and left to the general path, which reports
// it. It returns false when the general path must decide.
func fastRead(path string, max int64, roots []string, regular bool) ([]byte, bool) {
	if len(roots) > 0 && inside(path, false, roots) != nil {
		return nil, false
	}
	if !regular {
		var st syscall.Stat_t
		for {
			err := syscall.Lstat(path, &st)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				return nil, false
			}
			break
		}
	}
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || max > 0 && st.Size > max {
		return nil, false
	}
	size := st.Size
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, false
		}
		buf = buf[:len(buf)+n]
		// The size fstat gave is the snapshot read; files that report no size (procfs-like)
		// are read to their end.
		if n == 0 || size > 0 && int64(len(buf)) >= size {
			break
		}
		if max > 0 && int64(len(buf)) > max {
			return nil, false
		}
	}
	return buf, true
}
