package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

func TestReadIn(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "sub"), 0o755)
	os.WriteFile(filepath.Join(tree, "sub", "ok"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(tree, "big"), make([]byte, 100), 0o644)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("s3cret\n"), 0o644)
	os.Symlink(filepath.Join(dir, "secret"), filepath.Join(tree, "abs"))
	os.Symlink("sub/ok", filepath.Join(tree, "inside"))
	os.Symlink("../secret", filepath.Join(tree, "rel"))
	os.Symlink("..", filepath.Join(tree, "up"))
	if err := syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := ReadIn(root, "sub/ok", Options{}); err != nil || string(b) != "hello\n" {
		t.Fatalf("regular file: %q %v", b, err)
	}
	for _, tc := range []struct {
		name, err string
		is        error
	}{
		{"abs", "abs: not a regular file (a symbolic link)", validate.ErrNotRegular},
		{"inside", "inside: not a regular file (a symbolic link)", validate.ErrNotRegular},
		{"rel", "rel: not a regular file (a symbolic link)", validate.ErrNotRegular},
		{"fifo", "fifo: not a regular file (a named pipe)", validate.ErrNotRegular},
		{"sub", "sub: not a regular file", validate.ErrNotRegular},
		{"up/secret", "escapes", nil},
		{"../secret", "escapes", nil},
		{"missing", "no such file", os.ErrNotExist},
	} {
		b, err := ReadIn(root, tc.name, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.err) || tc.is != nil && !errors.Is(err, tc.is) || b != nil {
			t.Errorf("%s: %q %v, want %q", tc.name, b, err, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), tree) {
			t.Errorf("%s: the error does not name the file: %v", tc.name, err)
		}
	}
	if _, err := ReadIn(root, "big", Options{MaxSize: 10}); !errors.Is(err, validate.ErrFileTooLarge) {
		t.Errorf("size cap: %v", err)
	}
}
