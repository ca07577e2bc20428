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

func TestRead(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{tree, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) string {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write(filepath.Join(tree, "ok.txt"), "hello\n")
	secret := write(filepath.Join(outside, "secret"), "s3cret\n")
	fifo := filepath.Join(tree, "fifo.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	linkOut := filepath.Join(tree, "out.txt")
	if err := os.Symlink(secret, linkOut); err != nil {
		t.Fatal(err)
	}
	linkIn := filepath.Join(tree, "in.txt")
	if err := os.Symlink("ok.txt", linkIn); err != nil {
		t.Fatal(err)
	}
	treeLink := filepath.Join(dir, "tree-link") // the tree reached through a symlink
	if err := os.Symlink(tree, treeLink); err != nil {
		t.Fatal(err)
	}
	big := write(filepath.Join(tree, "big.txt"), strings.Repeat("x", 1000))
	roots := []string{tree}
	cases := []struct {
		name string
		path string
		opt  Options
		want error
		data string
	}{
		{name: "regular", path: ok, data: "hello\n"},
		{name: "FIFO", path: fifo, want: validate.ErrNotRegular},
		{name: "character device", path: "/dev/null", want: validate.ErrNotRegular},
		{name: "directory", path: tree, want: validate.ErrNotRegular},
		{name: "missing", path: filepath.Join(tree, "nope"), want: os.ErrNotExist},
		{name: "over the cap", path: big, opt: Options{MaxSize: 999}, want: validate.ErrFileTooLarge},
		{name: "at the cap", path: big, opt: Options{MaxSize: 1000}, data: strings.Repeat("x", 1000)},
		{name: "no cap", path: big, opt: Options{MaxSize: -1}, data: strings.Repeat("x", 1000)},
		{name: "link leaving the roots", path: linkOut, opt: Options{Roots: roots}, want: validate.ErrOutsideTree},
		{name: "link leaving, no roots", path: linkOut, data: "s3cret\n"},
		{name: "link inside the roots", path: linkIn, opt: Options{Roots: roots}, data: "hello\n"},
		{name: "root reached through a link", path: filepath.Join(treeLink, "ok.txt"), opt: Options{Roots: []string{treeLink}}, data: "hello\n"},
		{name: "link leaving a linked root", path: filepath.Join(treeLink, "out.txt"), opt: Options{Roots: []string{treeLink}}, want: validate.ErrOutsideTree},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := Read(c.path, c.opt)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("err = %v, want %v", err, c.want)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("error shows the content: %v", err)
				}
				return
			}
			if err != nil || string(data) != c.data {
				t.Fatalf("Read = %q, %v", data, err)
			}
		})
	}
	if _, err := Read(fifo, Options{}); err == nil || !strings.HasSuffix(err.Error(), fifo+": not a regular file") {
		t.Errorf("message %v, want \"<path>: not a regular file\"", err)
	}
	if r := Reason(&Error{Path: "p", Err: validate.ErrNotRegular}); r != "not a regular file" {
		t.Errorf("Reason %q", r)
	}
}
