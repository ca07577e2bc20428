package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/validate"
)

// rawControl returns the first rune of s that termsafe would escape (the newlines and tabs
// of the layout excepted), or "".
func rawControl(s string) string {
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		if c := s[i : i+size]; c != "\n" && c != "\t" && termsafe.Escape(c) != c {
			return c
		}
		i += size
	}
	return ""
}

// A repo whose names carry bidi overrides (the loader refuses control characters in the
// repo) and a target whose names carry terminal escapes (ESC sequences that clear the screen
// or set the window title, a C1 CSI): nothing the CLI prints in text, on stdout or stderr,
// passes them raw, and JSON keeps them exact as escapes.
func TestCLIEscapesTerminalControls(t *testing.T) {
	const evilUID = "evil\u202eexe"
	const ghost = "gh\x1b]0;x\x07ost\u009b"
	dir := t.TempDir()
	copyTree(t, "../../examples/config", dir)
	people, err := os.ReadFile(filepath.Join(dir, "people.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "people.yaml"), string(people)+"\"evil\\u202eexe\": {cn: Evil}\n")
	sre := filepath.Join(dir, "groups", "pizza_teams", "sre.txt")
	rules, err := os.ReadFile(sre)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, sre, string(rules)+"username = "+evilUID+"\nusername = nob\u2066ody\n")
	// Without the person in the org chart, the repo is invalid: the error names them.
	broken := filepath.Join(t.TempDir(), "entitlements.yaml")
	copyTree(t, dir, filepath.Dir(broken))
	mm, err := os.ReadFile(filepath.Join(dir, "manager-map.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "manager-map.yaml"), string(mm)+"\"evil\\u202eexe\": {manager: carol}\n")
	var state map[string]map[string]map[string]any
	raw, err := os.ReadFile(exampleState)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	g := state["groups"]["pizza_teams/sre"]
	g["members"] = append(g["members"].([]any), ghost)
	raw, _ = json.Marshal(state)
	statePath := filepath.Join(dir, "state.json")
	writeFile(t, statePath, string(raw))
	cfg := filepath.Join(dir, "entitlements.yaml")

	for _, tc := range []struct {
		name string
		args []string
		json bool
		want string // an escaped form the output shows
	}{
		{"validate", []string{"validate", "--config", cfg}, false, `nob\u2066ody`},
		{"invalid repo", []string{"validate", "--config", broken}, false, `evil\u202eexe`},
		{"plan", []string{"plan", "--config", cfg, "--now", "2026-01-01", "--state", statePath}, false, `gh\x1b]0;x\x07ost\u009b`},
		{"plan json", []string{"plan", "--config", cfg, "--now", "2026-01-01", "--state", statePath, "--format", "json"}, true, ""},
		{"apply", []string{"apply", "--config", cfg, "--now", "2026-01-01", "--state", statePath, "--yes"}, false, `evil\u202eexe`},
		{"explain", []string{"explain", "--config", cfg, "--now", "2026-01-01", "--group", "pizza_teams/sre", "--person", evilUID}, false, `evil\u202eexe`},
		{"explain json", []string{"explain", "--config", cfg, "--now", "2026-01-01", "--group", "pizza_teams/sre", "--person", evilUID, "--format", "json"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if want := exitOK; tc.name == "invalid repo" {
				if code != exitError {
					t.Fatalf("exit %d, want %d", code, exitError)
				}
			} else if code != want {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
			}
			for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
				if r := rawControl(out); r != "" {
					t.Errorf("%s: raw %q reaches the terminal:\n%q", name, r, out)
				}
			}
			if tc.want != "" && !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("output does not show %s:\nstdout %s\nstderr %s", tc.want, stdout, stderr)
			}
			if tc.json {
				var doc any
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatal(err)
				}
				if b, _ := json.Marshal(doc); !strings.Contains(string(b), "evil\u202eexe") && !strings.Contains(string(b), `gh\u001b]0;x\u0007ost`+"\u009b") {
					t.Errorf("the values do not decode back exactly:\n%s", stdout)
				}
			}
		})
	}
}

// The progress line draws its own escape sequences on the terminal; the OU names and types it
// shows come from the config and are escaped.
func TestProgressEscapesNames(t *testing.T) {
	var buf strings.Builder
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, now: func() time.Time { return now }, active: map[string]*reading{}}
	p.phase, p.start = "reading targets", now
	p.target(deploy.Progress{OU: "a\u202eb", Type: "ldap"})
	p.target(deploy.Progress{OU: "a\u202eb", Type: "x\x1b[2J", Done: true})
	out := strings.ReplaceAll(buf.String(), "\r\x1b[K", "")
	if r := rawControl(out); r != "" {
		t.Errorf("raw %q in %q", r, out)
	}
	if !strings.Contains(out, `read a\u202eb (x\x1b[2J)`) {
		t.Errorf("escapes not shown: %q", out)
	}
}

// A warning is one line: a file name or message holding a newline cannot print a line of
// its own (issue 20 item 11, each value escaped).
func TestWarningIsOneLine(t *testing.T) {
	var b strings.Builder
	p := &warningPrinter{w: termsafe.NewWriter(&b)}
	evil := "groups/a\nplan: 0 to create\x1b]8;;https://evil.example/\x1b\\x\u202e.txt"
	p.print(validate.Warning{Path: evil, Line: 3, Msg: evil})
	p.print(validate.Warning{Path: evil, Msg: evil})
	p.print(validate.Warning{Msg: evil})
	out := b.String()
	if n := strings.Count(out, "\n"); n != 3 || rawControl(out) != "" || !strings.Contains(out, `a\nplan: 0 to create\x1b]8;;`) {
		t.Errorf("%d lines:\n%q", n, out)
	}
}
