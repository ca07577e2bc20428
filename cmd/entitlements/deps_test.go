package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// harness are the packages of the benchmark harness (cmd/entitlements-bench) and of tests:
// servers, fakes and the generator. The shipped binary links none of them (issue 21.4).
var harness = []string{
	"testing",
	"net/http/httptest",
	"github.com/entitlements-go/entitlements/internal/testldap",
	"github.com/entitlements-go/entitlements/internal/synth",
	"github.com/entitlements-go/entitlements/providers/github/fakegithub",
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph",
}

// TestShippedBinaryLinksNoHarness lists the packages the CLI links (go list -deps), with and
// without -tags aad. The aad build's dependencies are listed only when they are in the module
// cache already (GOPROXY=off): the main module's tests never download the Azure SDK.
func TestShippedBinaryLinksNoHarness(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	for _, tags := range []string{"", "aad"} {
		t.Run("tags="+tags, func(t *testing.T) {
			args := []string{"list", "-deps", "-json=ImportPath"}
			if tags != "" {
				args = append(args, "-tags", tags)
			}
			cmd := exec.CommandContext(t.Context(), goBin, append(args, ".")...)
			cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				if tags != "" && strings.Contains(stderr.String(), "GOPROXY=off") {
					t.Skipf("the modules of -tags %s are not in the module cache: %s", tags, firstLine(stderr.String()))
				}
				t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
			}
			deps, err := importPaths(out)
			if err != nil {
				t.Fatal(err)
			}
			// The list is the real one: it has the CLI and what it surely links.
			for _, want := range []string{"github.com/entitlements-go/entitlements/cmd/entitlements", "github.com/entitlements-go/entitlements/calc", "net/http"} {
				if !slices.Contains(deps, want) {
					t.Fatalf("go list -deps lacks %s: %v", want, deps)
				}
			}
			for _, p := range harness {
				if slices.Contains(deps, p) {
					t.Errorf("the CLI (tags %q) links %s: move what imports it to cmd/entitlements-bench or a _test.go file", tags, p)
				}
			}
		})
	}
}

// importPaths reads the stream of JSON objects that go list -json prints.
func importPaths(out []byte) ([]string, error) {
	var paths []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct{ ImportPath string }
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return paths, nil
		}
		if err != nil {
			return nil, err
		}
		paths = append(paths, p.ImportPath)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
