package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const exampleStateFile = "../../examples/state.json"

// readSettings returns the settings a plan file records.
func readSettings(t *testing.T, planFile string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Settings
}

// withoutNote drops the simulated note lines of an output.
func withoutNote(s string) string {
	return strings.ReplaceAll(s, simulatedNote+"\n", "")
}

// Issue 22.3: a plan file records what shaped it (the config path relative to the repo root,
// --now, the guard limits, --state, strictness), apply PLANFILE needs no other flag, a flag
// given again must match or the run says which differs, and show prints the file.
func TestPlanFileSelfContained(t *testing.T) {
	planFile := filepath.Join(t.TempDir(), "p.json")
	code, planOut, stderr := runCLI(t, "plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", exampleStateFile,
		"--max-deleted-groups", "5", "--strict", "--out", planFile)
	if code != exitOK {
		t.Fatalf("plan: exit %d\n%s\n%s", code, planOut, stderr)
	}
	st := readSettings(t, planFile)
	root, err := workRoot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, local := range map[string]string{"config": exampleConfig, "state": exampleStateFile} {
		rec := st[name]
		if filepath.IsAbs(rec) || strings.HasPrefix(rec, "..") || !samePath(resolvePath(root, rec), local) {
			t.Errorf("--%s recorded as %q: want %s relative to the repo root %s", name, rec, local, root)
		}
	}
	for name, want := range map[string]string{"now": "2026-01-01", "max-deleted-groups": "5", "strict": "true"} {
		if st[name] != want {
			t.Errorf("--%s recorded as %q, want %q (settings %v)", name, st[name], want, st)
		}
	}
	for _, name := range recordedFlags {
		if _, ok := st[name]; !ok {
			t.Errorf("--%s is not recorded (a default too must be: another binary's may differ): %v", name, st)
		}
	}

	t.Run("apply PLANFILE alone", func(t *testing.T) {
		// Not even --now: the plan's date is the file's (a day later, expirations differ).
		code, stdout, stderr := runCLI(t, "apply", planFile)
		if code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		mustContain(t, "stdout", stdout, "Apply: 5 change(s) applied, 0 skipped, 0 failed; 0 target(s) not applied", simulatedNote)
	})
	t.Run("the same flags again", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "apply", "--config", exampleConfig, "--state", exampleStateFile, "--now", "2026-01-01",
			"--max-deleted-groups", "5", planFile)
		if code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--now", "2026-01-02"}, "entitlements apply: --now 2026-01-02 differs from the plan file's --now 2026-01-01"},
		{[]string{"--max-deleted-groups", "7"}, "--max-deleted-groups 7 differs from the plan file's --max-deleted-groups 5"},
		{[]string{"--strict=false"}, "--strict false differs from the plan file's --strict true"},
		{[]string{"--state", filepath.Join(t.TempDir(), "other.json")}, "other.json differs from the plan file's --state " + st["state"]},
		{[]string{"--ldap-groups", "x.yaml"}, `--ldap-groups x.yaml differs from the plan file's --ldap-groups ""`},
		{[]string{"--max-removal-share", "0.5"}, "--max-removal-share 0.5 differs from the plan file's --max-removal-share 0.25"},
	} {
		t.Run("differs: "+strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append(append([]string{"apply"}, tc.args...), planFile)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, want %d and %q\nstdout: %s\nstderr: %s", code, exitUsage, tc.want, stdout, stderr)
			}
		})
	}
	t.Run("a setting this binary does not know", func(t *testing.T) {
		var doc map[string]any
		b, _ := os.ReadFile(planFile)
		json.Unmarshal(b, &doc)
		doc["settings"].(map[string]any)["frobnicate"] = "1"
		edited := filepath.Join(t.TempDir(), "edited.json")
		b, _ = json.Marshal(doc)
		os.WriteFile(edited, b, 0o644)
		code, _, stderr := runCLI(t, "apply", edited)
		if code != exitUsage || !strings.Contains(stderr, "records --frobnicate=1, which this binary does not know") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	})

	t.Run("show", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "show", planFile)
		if code != exitOK || stderr != "" {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		head, body, _ := strings.Cut(stdout, "\napps (ldap)")
		mustContain(t, "show", head, "Plan file "+planFile+" (version 1)\n", "Made from: ", "config digest ",
			"Made with: --config "+st["config"]+" --now 2026-01-01 --state "+st["state"]+" --strict true",
			" --max-removal-share 0.25 --max-deleted-groups 5 ")
		if want := withoutNote(planOut); "apps (ldap)"+body != want {
			t.Errorf("show prints the changes otherwise than plan did:\n%s\nwant:\n%s", "apps (ldap)"+body, want)
		}
		code, stdout, _ = runCLI(t, "show", planFile, "--format", "json")
		if b, _ := os.ReadFile(planFile); code != exitOK || stdout != string(b) {
			t.Errorf("show --format json is not the file: exit %d\n%s", code, stdout)
		}
		code, stdout, _ = runCLI(t, "show", "--format", "markdown", planFile)
		if code != exitOK || !strings.Contains(stdout, "### Entitlements plan") || !strings.Contains(stdout, "billing-admin") {
			t.Errorf("show --format markdown: exit %d\n%s", code, stdout)
		}
		if code, _, stderr := runCLI(t, "show"); code != exitUsage || !strings.Contains(stderr, "PLANFILE is required") {
			t.Errorf("show without a file: exit %d %s", code, stderr)
		}
	})
}

// Issue 22.3: a plan with a refused target is not written unless --allow-partial, and such
// a file is applied all or nothing unless --allow-partial again.
func TestPlanFilePartial(t *testing.T) {
	dir := t.TempDir()
	planFile := filepath.Join(dir, "p.json")
	args := []string{"plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", exampleStateFile, "--max-deleted-groups", "0", "--out", planFile}
	code, stdout, stderr := runCLI(t, args...)
	if code != exitError || !strings.Contains(stderr, "plan file "+planFile+" not written: 1 target(s) failed or refused (--allow-partial writes it") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(planFile); !os.IsNotExist(err) {
		t.Fatalf("the plan file was written: %v", err)
	}
	if code, stdout, stderr := runCLI(t, append(args, "--allow-partial")...); code != exitError {
		t.Fatalf("--allow-partial: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(planFile); err != nil {
		t.Fatalf("--allow-partial did not write the file: %v", err)
	}
	code, stdout, stderr = runCLI(t, "apply", planFile)
	if code != exitError || strings.Contains(stdout, "Apply:") || !strings.Contains(stderr, "nothing was applied") {
		t.Errorf("a partial plan file was applied in part: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "apply", planFile, "--allow-partial")
	if code != exitError || !strings.Contains(stdout, "Apply: 1 change(s) applied, 0 skipped, 0 failed; 1 target(s) not applied: apps") {
		t.Errorf("--allow-partial: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
