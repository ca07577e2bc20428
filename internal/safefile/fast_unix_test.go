//go:build unix

package safefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFastReadDecidesOnlyPlainFiles: the fast path answers for a regular file inside the
// roots and within the cap, and leaves everything the general path must refuse or resolve
// (symlinks, FIFOs, directories, oversize files, files outside the roots) to it, without
// blocking on a FIFO.
func TestFastReadDecidesOnlyPlainFiles(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	write := func(p, s string) string {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write(filepath.Join(dir, "a.txt"), "username = alice\n")
	empty := write(filepath.Join(dir, "empty.txt"), "")
	big := write(filepath.Join(dir, "big.txt"), "0123456789")
	outside := write(filepath.Join(other, "secret.txt"), "x")
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cases := []struct {
		name  string
		path  string
		max   int64
		roots []string
		ok    bool
		want  string
	}{
		{"regular file", plain, 0, nil, true, "username = alice\n"},
		{"regular file in a root", plain, 0, []string{dir}, true, "username = alice\n"},
		{"empty file", empty, 0, nil, true, ""},
		{"exactly the cap", big, 10, nil, true, "0123456789"},
		{"over the cap", big, 9, nil, false, ""},
		{"symlink", link, 0, nil, false, ""},
		{"fifo", fifo, 0, nil, false, ""},
		{"directory", dir, 0, nil, false, ""},
		{"outside the roots", outside, 0, []string{dir}, false, ""},
		{"missing", filepath.Join(dir, "none.txt"), 0, nil, false, ""},
	}
	for _, c := range cases {
		for _, regular := range []bool{false, true} {
			t.Run(c.name, func(t *testing.T) {
				got, ok := fastRead(c.path, c.max, c.roots, regular)
				if ok != c.ok || string(got) != c.want {
					t.Fatalf("fastRead(regular %v) = %q, %v; want %q, %v", regular, got, ok, c.want, c.ok)
				}
			})
		}
	}
}

// TestReadNeverOpensAFIFO: a FIFO where a file is expected is refused without being opened:
// opening it would release a writer blocked on it (found by review).
func TestReadNeverOpensAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "g.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	released := make(chan struct{})
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		close(released)
	}()
	time.Sleep(50 * time.Millisecond) // the writer is blocked in open(2)
	if _, err := Read(fifo, Options{}); err == nil {
		t.Fatal("a FIFO was read")
	}
	select {
	case <-released:
		t.Fatal("Read opened the FIFO (the blocked writer was released)")
	case <-time.After(300 * time.Millisecond):
	}
	// Release the writer ourselves.
	if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		<-released
		f.Close()
	}
}
