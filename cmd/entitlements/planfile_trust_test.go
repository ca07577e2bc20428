package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// editPlan rewrites the targets of a saved plan file.
func editPlan(t *testing.T, src, dst string, edit func([]map[string]any) []map[string]any) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, src)), &doc); err != nil {
		t.Fatal(err)
	}
	var targets []map[string]any
	for _, x := range doc["targets"].([]any) {
		targets = append(targets, x.(map[string]any))
	}
	doc["targets"] = edit(targets)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(b))
}

// Issue 20 item 4: a saved plan is applied as a whole or refused. A plan file with a target
// removed (or one the config does not have) used to apply the rest with exit 0, and the audit
// sync commit then recorded the dropped target's desired state as applied.
func TestApplyRefusesPlanFileWithOtherTargets(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "log.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", remote).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	cfg, checkout := auditRepo(t, remote)
	state := "../../examples/state.json"
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	if code, _, stderr := runCLI(t, "plan", "--config", cfg, "--now", "2026-01-01", "--state", state, "--out", planFile); code != exitOK {
		t.Fatalf("plan: %d\n%s", code, stderr)
	}
	for _, tc := range []struct {
		name string
		edit func([]map[string]any) []map[string]any
		want []string
	}{
		{"a target removed", func(ts []map[string]any) []map[string]any {
			var out []map[string]any
			for _, x := range ts {
				if x["ou"] != "apps" {
					out = append(out, x)
				}
			}
			return out
		}, []string{"missing from the plan file: apps"}},
		{"a target the config does not have", func(ts []map[string]any) []map[string]any {
			return append(ts, map[string]any{"ou": "ghosts", "type": "ldap", "changes": []any{}})
		}, []string{"not in the config: ghosts"}},
		{"a target twice", func(ts []map[string]any) []map[string]any {
			return append(ts, ts[0])
		}, []string{"twice in the plan file: " + ts0OU(t, planFile)}},
		{"a target of another type", func(ts []map[string]any) []map[string]any {
			ts[0]["type"] = "github_team"
			return ts
		}, []string{ts0OU(t, planFile) + " is github_team in the plan file but ldap in the config"}},
		{"no targets", func([]map[string]any) []map[string]any { return []map[string]any{} },
			[]string{"missing from the plan file: apps, pizza_teams"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edited := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			editPlan(t, planFile, edited, tc.edit)
			code, stdout, stderr := runCLI(t, "apply", "--config", cfg, "--now", "2026-01-01", "--state", state, edited)
			if code != exitError {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, exitError, stdout, stderr)
			}
			mustContain(t, "stderr", stderr, append(tc.want, "the plan file's targets are not the config's", "nothing was applied")...)
			if strings.Contains(stderr, "msg=write") || strings.Contains(stdout, "Apply:") {
				t.Errorf("something was applied:\n%s\n%s", stdout, stderr)
			}
			if _, err := os.Stat(checkout); err == nil {
				t.Error("the audit repository was touched")
			}
		})
	}
}

// ts0OU is the OU of the first target of a saved plan.
func ts0OU(t *testing.T, planFile string) string {
	t.Helper()
	var doc struct {
		Targets []struct {
			OU string `json:"ou"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, planFile)), &doc); err != nil || len(doc.Targets) == 0 {
		t.Fatalf("plan file: %v", err)
	}
	return doc.Targets[0].OU
}

// Issue 20 item 13: the plan file is read like every other input: a FIFO is refused at once
// (opening it used to block apply until a writer came), and its size is capped.
func TestApplyPlanFileNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "plan.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := runCLI(t, "apply", "--config", exampleConfig, "--now", "2026-01-01", "--state", exampleState, fifo)
		done <- result{code, stdout, stderr}
	}()
	select {
	case r := <-done:
		if r.code != exitError || !strings.Contains(r.stderr, "not a regular file") {
			t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	case <-time.After(10 * time.Second):
		// Unblock the stuck open so the test ends.
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("apply blocked opening a FIFO plan file")
	}
}

// A plan file larger than the cap is refused before it is read (a sparse file: no disk used).
func TestApplyPlanFileTooLarge(t *testing.T) {
	big := filepath.Join(t.TempDir(), "plan.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(65 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stdout, stderr := runCLI(t, "apply", "--config", exampleConfig, "--now", "2026-01-01", "--state", exampleState, big)
	if code != exitError || !strings.Contains(stderr, "too large") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}
