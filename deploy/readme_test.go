package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMELibrarySnippet compiles the Go snippet of the README's "The library" section as
// written, as the body of func(ctx, today) error, so that the first code a new
// user copies keeps compiling when the API moves.
func TestREADMELibrarySnippet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool (-short)")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not found: %v", err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## The library\n")
	if !ok {
		t.Fatal(`README.md has no "## The library" section`)
	}
	_, code, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal("the library section has no ```go block")
	}
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		t.Fatal("unterminated ```go block")
	}
	src := `package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/runner"
)

var (
	_ = fmt.Sprint
	_ = os.Stdout
	_ = calc.Load
)

func snippet(ctx context.Context, today time.Time) error {
` + code + `}

func main() { _ = snippet }
`
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// The overlay places the file inside this module (so its packages resolve) without
	// writing into the source tree.
	virtual, err := filepath.Abs(filepath.Join("testdata", "readme", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	ov, _ := json.Marshal(map[string]any{"Replace": map[string]string{virtual: file}})
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gotool, "build", "-overlay", overlay, "-o", os.DevNull, "./testdata/readme")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README library snippet does not compile: %v\n%s\n--- generated file:\n%s", err, out, src)
	}
}
