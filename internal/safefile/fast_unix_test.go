//go:build unix

package safefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
		t.Run(c.name, func(t *testing.T) {
			got, ok := fastRead(c.path, c.max, c.roots)
			if ok != c.ok || string(got) != c.want {
				t.Fatalf("fastRead = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}
