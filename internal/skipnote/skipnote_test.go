package skipnote

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// info is a FileInfo of a given mode. os.SameFile is false for it (it only compares the
// operating system's FileInfos), so a real file stands in where sameness matters.
type info struct{ mode os.FileMode }

func (i info) Name() string       { return "f" }
func (i info) Size() int64        { return 0 }
func (i info) Mode() os.FileMode  { return i.mode }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return false }
func (i info) Sys() any           { return nil }

func TestDestination(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pipe := info{os.ModeNamedPipe}
	tty := info{os.ModeDevice | os.ModeCharDevice}
	for _, tc := range []struct {
		name        string
		verbose     bool
		own, parent os.FileInfo
		want        dest
	}{
		{"-v or -json: go test shows the binary's output", true, pipe, tty, toStderr},
		{"list mode in a terminal", false, pipe, tty, toParent},
		{"list mode into a pipe (CI, | tee)", false, pipe, pipe, toParent},
		{"list mode into a file: never written behind the go command's back", false, pipe, file, toTerminal},
		{"stderr shared with the starter (go test in a package directory, a binary run by hand)", false, file, file, toStderr},
		{"the starter's stderr cannot be seen", false, pipe, nil, toTerminal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := destination(tc.verbose, tc.own, tc.parent); got != tc.want {
				t.Errorf("destination = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestSummaryShownByGoTest runs `go test` on testdata/demo (one test skips through Skip, one
// passes) as CI does, with the go command's output going to pipes, and checks that the skip
// line is in its output exactly once: in list mode without -v (where go test hides the
// binary's output) and with -json (as with -v, the binary's own output).
func TestSummaryShownByGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the go command's stderr is found through /proc; elsewhere the line goes to the terminal")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	const line = "demo: SKIP 1 test(s): nothing to run here (TestSkips)"
	for _, args := range [][]string{{}, {"-json"}} {
		t.Run(strings.Join(append([]string{"go test"}, args...), " "), func(t *testing.T) {
			cmd := exec.Command(goCmd, append(append([]string{"test", "-count=1"}, args...), "./testdata/demo")...)
			cmd.Env = append(os.Environ(), "GOFLAGS=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("go test: %v\n%s%s", err, stdout.String(), stderr.String())
			}
			if n := strings.Count(stdout.String()+stderr.String(), line); n != 1 {
				t.Errorf("the skip line is shown %d times, want once:\nstdout:\n%s\nstderr:\n%s", n, stdout.String(), stderr.String())
			}
		})
	}
}
