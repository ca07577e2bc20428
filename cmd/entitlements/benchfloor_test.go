package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFloorReadsEveryFileAndWritesTheOutputSize(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a.txt": "12345", "sub/b.yaml": "xy", "sub/deeper/c": ""}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	n, read, err := floor(context.Background(), dir, &out, 200_000)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || read != 7 || out.Len() != 200_000 {
		t.Fatalf("floor: %d files, %d bytes read, %d written; want 3, 7, 200000", n, read, out.Len())
	}
}

// The CLI contract of bench --floor: both figures and their ratio on stdout, exit 0; a
// negative run count is a usage error. bench changes the working directory: not parallel.
func TestBenchFloor(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCLI(t, "bench", "--people", "40", "--floor", "1")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"floor (walk + read ", "calc (load + validate + calculate + write JSON", "ratio calc/floor: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, stderr := runCLI(t, "bench", "--floor", "-1"); code != exitUsage || !strings.Contains(stderr, "--floor") {
		t.Errorf("--floor -1: exit %d, stderr %q; want a usage error", code, stderr)
	}
	code, stdout, _ = runCLI(t, "bench", "--people", "40")
	if code != exitOK || strings.Contains(stdout, "ratio") {
		t.Errorf("without --floor: exit %d, stdout %q; want no floor report", code, stdout)
	}
}

// TestBenchDiff: bench --diff commits the generated repo and the benchmark's change, runs
// the built binary's calc and both forms of diff, and prints the three figures and the two
// ratios. It needs the binary itself (the test binary cannot stand in for it) and git.
func TestBenchDiff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "entitlements")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "bench", "--people", "600", "--diff", "1", "--dir", filepath.Join(tmp, "repo"))
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench --diff: %v\n%s", err, out)
	}
	for _, want := range []string{"changed by the head commit: ldap-config/pizza_teams/", "people.yaml, manager-map.yaml",
		"calc (whole process, JSON to a file): ", "diff --base HEAD~1 --head HEAD (whole process, markdown): ",
		"diff --base HEAD~1 (head: the work tree", "goal <= 1.5"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(string(out), "ratio diff/calc") != 2 {
		t.Errorf("want two ratios:\n%s", out)
	}
}
