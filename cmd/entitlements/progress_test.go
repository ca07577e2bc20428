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
	p := &progress{w: &buf, now: func() time.Time { return now }, active: map[string]deploy.Progress{}}
	p.phase, p.start = "reading targets", now
	p.target(deploy.Progress{OU: "apps", Type: "ldap", Desired: 3})
	p.target(deploy.Progress{OU: "teams", Type: "github_team", Desired: 40})
	now = now.Add(1500 * time.Millisecond)
	p.target(deploy.Progress{OU: "apps", Type: "ldap", Desired: 3, Read: 4, Done: true, Elapsed: 1500 * time.Millisecond})
	p.target(deploy.Progress{OU: "teams", Type: "github_team", Desired: 40, Done: true, Elapsed: 2 * time.Second, Err: errors.New("boom")})
	fmt := func(s string) string { return strings.ReplaceAll(s, "\r\x1b[K", "<CLR>") }
	want := "<CLR>reading targets 0s: reading apps (3 groups)" +
		"<CLR>reading targets 0s: reading apps (3 groups), teams (40 groups)" +
		"<CLR>read apps (ldap): 4 groups read, 3 calculated in 1.5s\n" +
		"<CLR>reading targets 1.5s: reading teams (40 groups)" +
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
