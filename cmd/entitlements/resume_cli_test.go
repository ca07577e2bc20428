package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
	"github.com/entitlements-go/entitlements/providers/github"
)

// runRealCtx is runReal with a context of its own (a test stops the run through it).
func runRealCtx(ctx context.Context, fp *fake.Provider, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	ext := &cmdExt{providers: func(*config.OU) (providers.Provider, error) { return fp, nil }}
	code = planOrApplyExt(ctx, args[0], args[1:], &out, &errb, ext)
	return code, out.String(), errb.String()
}

// stopAfterWrites cancels the run's context once n changes were written to fp.
func stopAfterWrites(fp *fake.Provider, n int, cancel context.CancelFunc) {
	var mu sync.Mutex
	written := 0
	fp.FailApply(func(*providers.Change) error {
		mu.Lock()
		defer mu.Unlock()
		if written++; written == n {
			cancel()
		}
		return nil
	})
}

// lastLine is the last line of an output.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// Issue 25.3: apply PLANFILE keeps a journal next to the plan file (or --journal); a run
// stopped part way exits 3 saying it is resumable, a second apply without --resume refuses
// naming --resume, apply --resume finishes it (exit 0, "done"), and a resume of a finished
// journal is done with nothing to write.
func TestCLIApplyJournalResume(t *testing.T) {
	for _, tc := range []struct {
		name    string
		journal string // --journal, or "" for the default
	}{
		{"default journal", ""},
		{"--journal", "j/run.journal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fp := realTargets(t)
			planFile := filepath.Join(dir, "p.json")
			if code, stdout, stderr := runReal(t, fp, "plan", "--config", exampleConfig, "--now", "2026-01-01", "--out", planFile); code != exitOK {
				t.Fatalf("plan: exit %d\n%s\n%s", code, stdout, stderr)
			}
			journalFile, jargs := planFile+".journal", []string(nil)
			if tc.journal != "" {
				journalFile = filepath.Join(dir, tc.journal)
				os.MkdirAll(filepath.Dir(journalFile), 0o755)
				jargs = []string{"--journal", journalFile}
			}
			apply := func(ctx context.Context, extra ...string) (int, string, string) {
				return runRealCtx(ctx, fp, append(append(append([]string{"apply"}, jargs...), extra...), planFile)...)
			}

			// Nothing ran yet: --resume has no journal to continue and says how to start.
			if code, stdout, stderr := apply(t.Context(), "--resume"); code != exitError || !strings.Contains(stderr, "no journal "+journalFile) || strings.Contains(stdout, "Apply") {
				t.Errorf("resume before any apply: exit %d\n%s\n%s", code, stdout, stderr)
			}

			ctx, cancel := context.WithCancel(t.Context())
			stopAfterWrites(fp, 2, cancel)
			code, stdout, stderr := apply(ctx)
			cancel()
			fp.FailApply(nil)
			if code != exitStopped || lastLine(stdout) != "Apply stopped (resumable: 2 of 5 done)" {
				t.Fatalf("stopped run: exit %d, want %d and the summary last\n%s\n%s", code, exitStopped, stdout, stderr)
			}
			mustContain(t, "stderr", stderr, "continue with: entitlements apply --resume ")
			if _, err := os.Stat(journalFile); err != nil {
				t.Fatalf("no journal: %v", err)
			}

			code, stdout, stderr = apply(t.Context())
			if code != exitError || !strings.Contains(stderr, "journal "+journalFile+" exists") || !strings.Contains(stderr, "apply --resume") || strings.Contains(stdout, "Apply") {
				t.Errorf("apply again without --resume: exit %d\n%s\n%s", code, stdout, stderr)
			}

			code, stdout, stderr = apply(t.Context(), "--resume")
			if code != exitOK || lastLine(stdout) != "Apply done" {
				t.Fatalf("resume: exit %d\n%s\n%s", code, stdout, stderr)
			}
			mustContain(t, "resume", stdout, "Apply: 3 change(s) applied")

			code, stdout, stderr = apply(t.Context(), "--resume")
			if code != exitOK || lastLine(stdout) != "Apply done" || !strings.Contains(stdout, "Apply: 0 change(s) applied") {
				t.Errorf("resume of a finished journal: exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

// Issue 25.3: --journal and --resume belong to apply PLANFILE of the real systems.
func TestCLIApplyResumeUsage(t *testing.T) {
	planFile := filepath.Join(t.TempDir(), "p.json")
	if code, _, stderr := runCLI(t, "plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", exampleStateFile, "--out", planFile); code != exitOK {
		t.Fatalf("plan: %d %s", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"apply", "--config", exampleConfig, "--resume", "--yes"}, exitUsage, "--journal and --resume need a PLANFILE"},
		{[]string{"apply", "--config", exampleConfig, "--journal", "x", "--yes"}, exitUsage, "--journal and --resume need a PLANFILE"},
		{[]string{"apply", "--resume", planFile}, exitUsage, "simulated plan (--state): it keeps no journal"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s\n%s", tc.args, code, tc.code, tc.want, stdout, stderr)
		}
	}
	// A simulation keeps no journal.
	if code, stdout, stderr := runCLI(t, "apply", planFile); code != exitOK || lastLine(withoutNote(stdout)) != "Apply done" {
		t.Errorf("simulated apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(planFile + ".journal"); !os.IsNotExist(err) {
		t.Errorf("a simulated apply wrote a journal: %v", err)
	}
}

// Issue 25.4: GitHub's classified per-item failures are summed up in one table on stderr
// after the report; the other changes are applied and the run fails.
func TestCLIApplyItemFailureSummary(t *testing.T) {
	fp := realTargets(t)
	fp.FailApply(func(c *providers.Change) error {
		if strings.Contains(c.DN, "cn=sre,") {
			return errors.Join(&github.ItemError{Kind: github.FailBlocked, Org: "acme", Team: "sre", Login: "mallory",
				Err: errors.New("User is blocked"), Suggestion: "ask mallory to unblock the org"})
		}
		return nil
	})
	code, stdout, stderr := runReal(t, fp, "apply", "--config", exampleConfig, "--now", "2026-01-01", "--yes")
	if code != exitError || lastLine(stdout) != "Apply failed (4 of 5 done)" {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	mustContain(t, "stderr", stderr, "GitHub: 1 item(s) failed (blocked 1); the other changes were applied:\n",
		"KIND", "blocked  acme", "mallory", "User is blocked (ask mallory to unblock the org)")
	if strings.Contains(stdout, "GitHub:") {
		t.Errorf("the summary is on stdout:\n%s", stdout)
	}
	// Without classified failures there is no table.
	_, _, stderr = runReal(t, realTargets(t), "apply", "--config", exampleConfig, "--now", "2026-01-01", "--yes")
	if strings.Contains(stderr, "GitHub:") {
		t.Errorf("a summary without failures:\n%s", stderr)
	}
}
