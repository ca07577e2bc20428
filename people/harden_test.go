package people

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

func TestParseYAMLRefusesWhatTheReferenceCannotLoad(t *testing.T) {
	for name, c := range map[string]struct {
		src, want string
	}{
		"mixed list":          {"bob: {groups: [a, 1]}\n", `attribute "groups" of person "bob" is a list holding an Integer (1)`},
		"mixed list floats":   {"bob: {groups: [1.5, b]}\n", `attribute "groups" of person "bob" is a list holding a Float (1.5)`},
		"list of numbers":     {"bob: {ids: [1, 2]}\n", `attribute "ids" of person "bob" is a list holding an Integer (1)`},
		"NUL in a uid":        {"\"b\\0ob\": {cn: B}\n", "control character"},
		"escape in attribute": {"bob: {cn: \"\\e[31m\"}\n", "control character"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseYAML([]byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	for _, ok := range []string{"bob: {groups: [a, b]}\n", "bob: {ids: ['1', '2']}\n", "bob: {cn: \"tab\\there\"}\n"} {
		if _, err := ParseYAML([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestLoadOnlyRegularFilesWithinTheCap(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "people.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := LoadYAML(fifo); !errors.Is(err, validate.ErrNotRegular) {
		t.Errorf("FIFO: %v", err)
	}
	if _, err := LoadManagerMap(fifo); !errors.Is(err, validate.ErrNotRegular) {
		t.Errorf("FIFO manager map: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# x\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadYAMLFile(big, 100); !errors.Is(err, validate.ErrFileTooLarge) {
		t.Errorf("cap: %v", err)
	}
	if _, err := LoadManagerMapFile(big, 100); !errors.Is(err, validate.ErrFileTooLarge) {
		t.Errorf("cap manager map: %v", err)
	}
	if _, err := LoadYAMLFile(big, -1); err != nil {
		t.Errorf("no cap: %v", err)
	}
}
