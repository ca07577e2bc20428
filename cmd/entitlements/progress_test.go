package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/deploy"
)

// Progress is for terminals only: a pipe or a file (what tests, CI and `2>log` see) gets
// nothing, and stdout never does.
func TestProgressSilentWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	if p := newProgress(&buf); p != nil {
		t.Fatal("progress on a buffer")
	}
	var p *progress // every method is a no-op on nil
	p.begin("x")
	p.target(deploy.Progress{OU: "a"})
	p.end()
	if w := p.wrap(&buf); w != &buf {
		t.Error("wrap of a nil progress must return the writer itself")
	}
	code, stdout, stderr := runCLI(t, "plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--format", "json")
	if code != exitOK || strings.Contains(stdout+stderr, "\r") || strings.Contains(stderr, "reading") {
		t.Errorf("exit %d, progress leaked:\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, now: func() time.Time { return now }, active: map[string]*reading{}}
	p.phase, p.start = "reading targets", now
	p.target(deploy.Progress{OU: "apps", Type: "ldap", Desired: 3})
	now = now.Add(200 * time.Millisecond)
	p.target(deploy.Progress{OU: "teams", Type: "github_team", Desired: 40})
	// Mid-read reports: LDAP cannot know its total, GitHub knows the teams it reads.
	now = now.Add(500 * time.Millisecond)
	p.target(deploy.Progress{OU: "apps", Type: "ldap", Desired: 3, Read: 2})
	p.target(deploy.Progress{OU: "teams", Type: "github_team", Desired: 40, Read: 25, Total: 42})
	now = now.Add(800 * time.Millisecond)
	p.draw() // the ticker: elapsed times move between reports
	p.target(deploy.Progress{OU: "apps", Type: "ldap", Desired: 3, Read: 4, Done: true, Elapsed: 1500 * time.Millisecond})
	p.target(deploy.Progress{OU: "teams", Type: "github_team", Desired: 40, Done: true, Elapsed: 2 * time.Second, Err: errors.New("boom")})
	fmt := func(s string) string { return strings.ReplaceAll(s, "\r\x1b[K", "<CLR>") }
	want := "<CLR>reading targets 0s: reading apps 0 groups read (3 calculated), 0s" +
		"<CLR>reading targets 200ms: reading apps 0 groups read (3 calculated), 200ms; teams 0 groups read (40 calculated), 0s" +
		"<CLR>reading targets 700ms: reading apps 2 groups read (3 calculated), 700ms; teams 0 groups read (40 calculated), 500ms" +
		"<CLR>reading targets 700ms: reading apps 2 groups read (3 calculated), 700ms; teams 25/42 groups read, 500ms" +
		"<CLR>reading targets 1.5s: reading apps 2 groups read (3 calculated), 1.5s; teams 25/42 groups read, 1.3s" +
		"<CLR>read apps (ldap): 4 groups read, 3 calculated in 1.5s\n" +
		"<CLR>reading targets 1.5s: reading teams 25/42 groups read, 1.3s" +
		"<CLR>read teams (github_team): FAILED (see below) in 2s\n" +
		"<CLR>reading targets 1.5s"
	if got := fmt(buf.String()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	buf.Reset()
	p.wrap(&buf).Write([]byte("x.txt:1: warning: w\n"))
	if got := fmt(buf.String()); got != "<CLR>x.txt:1: warning: w\n" {
		t.Errorf("a warning must clear the progress line first: %q", got)
	}
}

// A line wider than the terminal wraps, and \r then redraws only its last part: lines are
// cut to the width.
func TestProgressFitsTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		line  string
		width int
		want  string
	}{
		{"reading targets 1s", 0, "reading targets 1s"},
		{"reading targets 1s", 19, "reading targets 1s"},
		{"reading targets 1s", 18, "reading targets …"},
		{"lecture des cibles é", 10, "lecture …"},
	} {
		if got := fit(tc.line, tc.width); got != tc.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tc.line, tc.width, got, tc.want)
		}
	}
}
