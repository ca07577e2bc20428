package main

import (
	"bytes"
	"context"
	"os"
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

// The contract of --floor: both figures and their ratio on stdout, exit 0; a negative run
// count is a usage error. The benchmark changes the working directory: not parallel.
func TestBenchFloor(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := runBench(t, "--people", "40", "--floor", "1")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"floor (walk + read ", "calc (load + validate + calculate + write JSON", "ratio calc/floor: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, stderr := runBench(t, "--floor", "-1"); code != exitUsage || !strings.Contains(stderr, "--floor") {
		t.Errorf("--floor -1: exit %d, stderr %q; want a usage error", code, stderr)
	}
	code, stdout, _ = runBench(t, "--people", "40")
	if code != exitOK || strings.Contains(stdout, "ratio") {
		t.Errorf("without --floor: exit %d, stdout %q; want no floor report", code, stdout)
	}
}
