package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"go.yaml.in/yaml/v3"
)

const exampleState = "../../examples/state.json"

// testdataDir is absolute: the git tests change the working directory.
var testdataDir, _ = filepath.Abs("testdata")

// copyTree copies a directory (the example config repo) so a test can change it.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join(testdataDir, name)
	if *update {
		writeFile(t, p, got)
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update to accept):\n--- got\n%s\n--- want\n%s", p, got, want)
	}
}

func TestPlanDetailedExitcode(t *testing.T) {
	dir := t.TempDir()
	// The calculated groups as a state file: nothing to change.
	code, calcOut, stderr := runCLI(t, "calc", "--config", exampleConfig, "--now", "2026-01-01")
	if code != exitOK {
		t.Fatal(stderr)
	}
	inSync := filepath.Join(dir, "in-sync.json")
	writeFile(t, inSync, calcOut)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"changes", []string{"--state", exampleState}, exitChanges},
		{"no changes", []string{"--state", inSync}, exitOK},
		{"error", []string{"--state", filepath.Join(dir, "missing.json")}, exitUsage},
		{"refused by the guard is an error, not 'changes'", []string{"--state", exampleState, "--max-deleted-groups", "0"}, exitError},
		{"without the flag changes exit 0", nil, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"plan", "--config", exampleConfig, "--now", "2026-01-01"}
			if tc.args == nil {
				args = append(args, "--state", exampleState)
			} else {
				args = append(append(args, "--detailed-exitcode"), tc.args...)
			}
			if code, out, errOut := runCLI(t, args...); code != tc.code {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
		})
	}
}

func TestApplyConfirmation(t *testing.T) {
	base := []string{"apply", "--config", exampleConfig, "--now", "2026-01-01", "--state", exampleState}
	// The test's stdin is not a terminal: apply must refuse and write nothing.
	code, stdout, stderr := runCLI(t, base...)
	if code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	mustContain(t, "stderr", stderr, "refusing to apply 5 change(s) to 2 target(s) without confirmation", "--yes")
	if strings.Contains(stdout, "Apply:") || strings.Contains(stderr, "msg=write") {
		t.Fatalf("something was applied:\n%s\n%s", stdout, stderr)
	}
	for _, flag := range []string{"--yes", "--auto-approve"} {
		if code, stdout, stderr := runCLI(t, append(base, flag)...); code != exitOK || !strings.Contains(stdout, "Apply: 5 change(s) applied") {
			t.Errorf("%s: exit %d\n%s\n%s", flag, code, stdout, stderr)
		}
	}
}

func TestConfirmPrompt(t *testing.T) {
	for _, tc := range []struct {
		answer string
		ok     bool
	}{{"y\n", true}, {"yes\n", true}, {"Y\n", true}, {"\n", false}, {"n\n", false}, {"", false}, {"sure\n", false}} {
		var prompt bytes.Buffer
		p := examplePlan(t)
		err := confirm(p, strings.NewReader(tc.answer), true, &prompt)
		if (err == nil) != tc.ok {
			t.Errorf("answer %q: err %v", tc.answer, err)
		}
		if prompt.String() != "Apply 5 changes to 2 targets? [y/N] " {
			t.Errorf("prompt %q", prompt.String())
		}
	}
}

// Changes that other targets' changes make entirely are not counted as writes to confirm.
func TestPendingChangesLeaveOutCovered(t *testing.T) {
	org := &providers.Change{Kind: providers.UpdateGroup, OU: "org", Remove: []string{"erin"}}
	team := &providers.Change{Kind: providers.UpdateGroup, OU: "teams", Remove: []string{"erin"},
		Covered: []providers.Cover{{Member: "erin", By: org}}}
	plan := &deploy.Plan{Targets: []*deploy.TargetPlan{{OU: "org", Changes: []*providers.Change{org}},
		{OU: "teams", Changes: []*providers.Change{team}}}}
	if n, m := pendingChanges(plan); n != 1 || m != 1 {
		t.Errorf("%d changes to %d targets, want 1 to 1", n, m)
	}
}

// examplePlan plans the example against its state file through the library.
func examplePlan(t *testing.T) *deploy.Plan {
	t.Helper()
	var pf planFlags
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	pf.register(fs)
	if err := fs.Parse([]string{"--config", exampleConfig, "--now", "2026-01-01"}); err != nil {
		t.Fatal(err)
	}
	s := newSession(&pf.common)
	defer s.close()
	var stderr bytes.Buffer
	repo, res, code := calculate(t.Context(), s, &stderr)
	if code != exitOK {
		t.Fatal(stderr.String())
	}
	reg, err := targetBackends(exampleState, s)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := deploy.Build(t.Context(), res, repo.Config(), deploy.Options{Backends: reg})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func TestSavedPlan(t *testing.T) {
	dir := t.TempDir()
	repoDir := filepath.Join(dir, "config")
	copyTree(t, "../../examples/config", repoDir)
	cfg := filepath.Join(repoDir, "entitlements.yaml")
	state := filepath.Join(dir, "state.json")
	stateText, err := os.ReadFile(exampleState)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, state, string(stateText))
	planFile := filepath.Join(dir, "plan.json")
	code, stdout, stderr := runCLI(t, "plan", "--config", cfg, "--now", "2026-01-01", "--state", state, "--out", planFile)
	if code != exitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	mustContain(t, "plan output", stdout, "Plan: 1 to create, 3 to update, 1 to delete")
	saved, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var sp struct {
		Version int `json:"version"`
		Inputs  struct {
			Config string `json:"config_digest"`
			People string `json:"people_digest"`
		} `json:"inputs"`
		Targets []struct {
			OU          string            `json:"ou"`
			Fingerprint string            `json:"fingerprint"`
			Changes     []json.RawMessage `json:"changes"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(saved, &sp); err != nil {
		t.Fatal(err)
	}
	if sp.Version != 1 || len(sp.Inputs.Config) != 64 || len(sp.Inputs.People) != 64 || len(sp.Targets) != 2 ||
		len(sp.Targets[0].Fingerprint) != 64 {
		t.Fatalf("saved plan lacks version, digests or fingerprints:\n%s", saved)
	}
	// The same plan twice is the same file.
	again := filepath.Join(dir, "again.json")
	runCLI(t, "plan", "--config", cfg, "--now", "2026-01-01", "--state", state, "--out", again)
	if b, _ := os.ReadFile(again); !bytes.Equal(b, saved) {
		t.Error("two plans of the same inputs and state differ")
	}

	t.Run("applies exactly the saved plan without a prompt", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "apply", "--config", cfg, "--now", "2026-01-01", "--state", state, planFile)
		if code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		mustContain(t, "stdout", stdout, "Apply: 5 change(s) applied, 0 skipped, 0 failed; 0 target(s) not applied")
	})
	t.Run("flags after the plan file", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, "apply", "--config", cfg, planFile, "--now", "2026-01-01", "--state", state)
		if code != exitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
	})
	// Someone added ivan to apps/legacy-vpn by hand since the plan was made.
	drift := func(t *testing.T) {
		edited := strings.Replace(string(stateText), `"Dave"`, `"Dave", "ivan"`, 1)
		if edited == string(stateText) {
			t.Fatal("the state file has no Dave to drift")
		}
		writeFile(t, state, edited)
		t.Cleanup(func() { writeFile(t, state, string(stateText)) })
	}
	t.Run("a target whose state drifted: nothing is applied (all or nothing)", func(t *testing.T) {
		drift(t)
		code, stdout, stderr := runCLI(t, "apply", planFile, "-v")
		if code != exitError {
			t.Fatalf("exit %d, want %d\n%s\n%s", code, exitError, stdout, stderr)
		}
		mustContain(t, "stdout", stdout, "apps (ldap): ERROR: refused: the current state of apps changed",
			"pizza_teams (ldap): ERROR: not applied: a saved plan is applied whole or not at all, and apps cannot be")
		mustContain(t, "stderr", stderr, "nothing was applied", "--allow-partial")
		if strings.Contains(stderr, "msg=write") || strings.Contains(stdout, "Apply:") {
			t.Errorf("something was written:\n%s\n%s", stdout, stderr)
		}
	})
	t.Run("a target whose state drifted is refused, the others applied with --allow-partial", func(t *testing.T) {
		drift(t)
		code, stdout, stderr := runCLI(t, "apply", "--config", cfg, "--now", "2026-01-01", "--state", state, planFile, "-v", "--allow-partial")
		if code != exitError {
			t.Fatalf("exit %d, want %d\n%s\n%s", code, exitError, stdout, stderr)
		}
		mustContain(t, "stdout", stdout, "apps (ldap): ERROR: refused: the current state of apps changed",
			"since the plan was made; nothing was written to apps", "Apply: 1 change(s) applied", "1 target(s) not applied: apps")
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, "msg=write") && strings.Contains(l, "ou=apps") {
				t.Errorf("wrote to the drifted target: %s", l)
			}
		}
		mustContain(t, "stderr", stderr, "msg=write ou=pizza_teams") // the other target was applied
	})
	t.Run("changed inputs refuse every target", func(t *testing.T) {
		writeFile(t, filepath.Join(repoDir, "groups/pizza_teams/sre.txt"), "description = SRE\nusername = ivan\n")
		defer writeFile(t, filepath.Join(repoDir, "groups/pizza_teams/sre.txt"), mustRead(t, "../../examples/config/groups/pizza_teams/sre.txt"))
		code, stdout, stderr := runCLI(t, "apply", "--config", cfg, "--now", "2026-01-01", "--state", state, planFile)
		if code != exitError {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		mustContain(t, "stdout", stdout, "apps (ldap): ERROR: refused: the config repo (group files or entitlements.yaml) changed since the plan was made",
			"pizza_teams (ldap): ERROR: refused")
		mustContain(t, "stderr", stderr, "nothing was applied")
	})
	t.Run("a bad plan file", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		writeFile(t, bad, `{"version": 99, "inputs": {}, "targets": []}`)
		code, _, stderr := runCLI(t, "apply", "--config", cfg, "--state", state, bad)
		if code != exitError || !strings.Contains(stderr, "plan file version 99 is not supported") {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPlanMarkdownGolden(t *testing.T) {
	code, stdout, stderr := runCLI(t, "plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", exampleState, "--format", "markdown")
	if code != exitOK {
		t.Fatal(stderr)
	}
	golden(t, "plan.md", stdout)
}

// gitRepo is a temporary config repo under git.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo { t.Helper(); return newGitRepoIn(t, "") }

// newGitRepoIn is newGitRepo with the example in a subdirectory of the repository.
func newGitRepoIn(t *testing.T, sub string) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	g := &gitRepo{t: t, dir: t.TempDir()}
	copyTree(t, "../../examples/config", filepath.Join(g.dir, sub))
	g.git("init", "-q", "-b", "main")
	g.commit("base")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.net", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.net", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (g *gitRepo) commit(msg string) string {
	g.git("add", "-A")
	g.git("commit", "-q", "--allow-empty", "-m", msg)
	return g.git("rev-parse", "HEAD")
}

func (g *gitRepo) edit(p string, f func(string) string) {
	g.t.Helper()
	full := filepath.Join(g.dir, p)
	b, _ := os.ReadFile(full)
	writeFile(g.t, full, f(string(b)))
}

// TestDiffGit drives `entitlements diff` over two commits of a temporary repo: a member added
// by a rule line, a person moved by the org chart, an expiration that passes, a group deleted.
func TestDiffGit(t *testing.T) {
	g := newGitRepo(t)
	base := g.git("rev-parse", "HEAD")
	// A member added by a rule line.
	g.edit("groups/pizza_teams/sre.txt", func(s string) string { return s + "username = ivan\n" })
	// A person moved by the org chart: grace now reports to carol (no longer under bob).
	g.edit("manager-map.yaml", func(s string) string {
		return strings.Replace(s, "grace: {manager: bob}", "grace: {manager: heidi}", 1)
	})
	// An expiration that passes: erin's loan to backend ends before "now".
	g.edit("groups/pizza_teams/backend.txt", func(s string) string { return strings.Replace(s, "2026-06-30", "2025-12-15", 1) })
	// A group deleted.
	if err := os.Remove(filepath.Join(g.dir, "groups/pizza_teams/sales.txt")); err != nil {
		t.Fatal(err)
	}
	head := g.commit("head")
	t.Chdir(g.dir)
	args := []string{"diff", "--config", "entitlements.yaml", "--base", base, "--head", head, "--now", "2026-01-01"}
	code, text, stderr := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	mustContain(t, "text diff", text,
		"~ CHANGE pizza_teams/sre (groups/pizza_teams/sre.txt)",
		"+ ivan  (username = ivan (groups/pizza_teams/sre.txt:5))",
		"- grace  (no longer matched: management: bob (groups/pizza_teams/engineering.yaml:3; org chart was: grace → bob))",
		"- erin  (expiration 2025-12-15 passed: username = erin; expiration = 2025-12-15   # on loan from SRE until the end of June (groups/pizza_teams/backend.txt:4))",
		"- erin  (group = pizza_teams/backend (groups/apps/billing-admin.txt:2) → expiration 2025-12-15 passed:",
		"- heidi  (group = pizza_teams/* (groups/apps/wiki.txt:2) → group pizza_teams/sales deleted (groups/pizza_teams/sales.txt))",
		"- DELETE pizza_teams/sales (groups/pizza_teams/sales.txt)",
		"- heidi  (group deleted (groups/pizza_teams/sales.txt removed))",
	)
	code, md, _ := runCLI(t, append(args, "--format", "markdown")...)
	if code != exitOK {
		t.Fatal(code)
	}
	golden(t, "diff.md", md)
	code, js, _ := runCLI(t, append(args, "--format", "json")...)
	var parsed struct {
		Version int `json:"version"`
		Groups  []struct {
			Group, Status string
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(js), &parsed); err != nil || code != exitOK || parsed.Version != 1 || len(parsed.Groups) == 0 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, js)
	}

	t.Run("the same diff whichever revision is read from disk", func(t *testing.T) {
		// head is the commit checked out: it is read from the work tree and the base
		// incrementally from git. Edits in the work tree, and a commit on top that makes
		// head an older revision (then the base is read from git in full and the head
		// incrementally), change nothing.
		want := text
		g.edit("groups/pizza_teams/sre.txt", func(s string) string { return s + "username = mallory\n" })
		if code, got, stderr := runCLI(t, args...); code != exitOK || got != want {
			t.Errorf("dirty work tree: exit %d, diff differs:\n%s\n%s", code, got, stderr)
		}
		g.git("checkout", "--", "groups/pizza_teams/sre.txt")
		g.commit("on top")
		if code, got, stderr := runCLI(t, args...); code != exitOK || got != want {
			t.Errorf("head below HEAD: exit %d, diff differs:\n%s\n%s", code, got, stderr)
		}
		g.git("reset", "-q", "--hard", head)
	})
	t.Run("detailed exit codes", func(t *testing.T) {
		if code, _, _ := runCLI(t, append(args, "--detailed-exitcode")...); code != exitChanges {
			t.Errorf("changes: exit %d", code)
		}
		if code, out, _ := runCLI(t, "diff", "--config", "entitlements.yaml", "--base", head, "--head", head, "--detailed-exitcode"); code != exitOK {
			t.Errorf("no changes: exit %d\n%s", code, out)
		}
		if code, _, _ := runCLI(t, "diff", "--config", "entitlements.yaml", "--base", "no-such-rev", "--detailed-exitcode"); code != exitError {
			t.Errorf("bad revision: exit %d", code)
		}
	})
	t.Run("head defaults to the work tree, uncommitted changes included, untouched", func(t *testing.T) {
		g.edit("groups/apps/wiki.txt", func(s string) string { return strings.Replace(s, "Internal wiki editors", "Wiki editors", 1) })
		writeFile(t, filepath.Join(g.dir, "groups/apps/new-app.txt"), "username = judy\ncontractors = all\n")
		status := g.git("status", "--porcelain")
		code, out, stderr := runCLI(t, "diff", "--config", "entitlements.yaml", "--base", head, "--now", "2026-01-01")
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		mustContain(t, "work tree diff", out, `description: "Internal wiki editors" -> "Wiki editors"`,
			"+ CREATE apps/new-app (groups/apps/new-app.txt)", "+ judy  (username = judy (groups/apps/new-app.txt:1))")
		if after := g.git("status", "--porcelain"); after != status {
			t.Errorf("diff touched the work tree:\n%s\nwas\n%s", after, status)
		}
	})
	t.Run("from a subdirectory", func(t *testing.T) {
		t.Chdir(filepath.Join(g.dir, "groups"))
		code, out, stderr := runCLI(t, "diff", "--config", "../entitlements.yaml", "--base", base, "--head", head, "--now", "2026-01-01")
		if code != exitOK || !strings.Contains(out, "- DELETE pizza_teams/sales") {
			t.Errorf("exit %d\n%s\n%s", code, out, stderr)
		}
	})
}

// TestExampleWorkflow parses the GitHub Actions examples and checks that every entitlements
// command they run exists and takes the flags they pass, and what each must do: the review
// workflow validates and diffs on pull requests with no credential; the apply workflow
// (issue 24) plans and applies on push with a GitHub App's variables given to those steps
// only, and asks for no write permission of the job's own token.
func TestExampleWorkflow(t *testing.T) {
	type step struct {
		Name string            `yaml:"name"`
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		Env  map[string]string `yaml:"env"`
	}
	for _, tc := range []struct {
		file, trigger string
		commands      []string
		// creds are the variables that the steps running these commands get, and no other.
		creds   []string
		credCmd []string
	}{
		{"entitlements-review.yml", "pull_request", []string{"validate", "diff"}, nil, nil},
		{"entitlements-apply.yml", "push", []string{"validate", "plan", "apply"},
			[]string{"GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY"}, []string{"plan", "apply"}},
		// Issue 24 item 2: a GitHub App and Azure OIDC, no stored PAT or client secret.
		{"entitlements-apply-azure.yml", "push", []string{"validate", "plan", "apply"},
			[]string{"GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "AZURE_TENANT_ID", "AZURE_CLIENT_ID"}, []string{"plan", "apply"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("../../examples/github-actions/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var wf struct {
				On          map[string]any    `yaml:"on"`
				Permissions map[string]string `yaml:"permissions"`
				Env         map[string]string `yaml:"env"`
				Jobs        map[string]struct {
					Env   map[string]string `yaml:"env"`
					Steps []step            `yaml:"steps"`
				} `yaml:"jobs"`
			}
			if err := yaml.Unmarshal(data, &wf); err != nil {
				t.Fatalf("the workflow is not valid YAML: %v", err)
			}
			for _, stored := range []string{"AZURE_CLIENT_SECRET", "GITHUB_TOKEN"} {
				if strings.Contains(string(data), stored) {
					t.Errorf("the workflow mentions %s: it must need no stored PAT or client secret", stored)
				}
			}
			if strings.Contains(tc.file, "azure") && wf.Permissions["id-token"] != "write" {
				t.Errorf("permissions %v: Azure OIDC needs id-token: write", wf.Permissions)
			}
			if _, ok := wf.On[tc.trigger]; !ok {
				t.Errorf("the workflow does not run on %s", tc.trigger)
			}
			if tc.creds != nil {
				// The job's own token only checks out (id-token: write is no repository
				// access: it lets the job ask for an OIDC token, as Azure's federation does).
				for k, v := range wf.Permissions {
					if v != "read" && v != "none" && k != "id-token" || k == "contents" && v != "read" {
						t.Errorf("permissions %v: the job's token needs contents: read only", wf.Permissions)
					}
				}
			}
			call := regexp.MustCompile(`(?m)(?:^|\s)entitlements\s+(\w+)((?:\s+[^\s|>;&]+)*)`)
			seen := map[string]bool{}
			for _, job := range wf.Jobs {
				for k := range job.Env {
					if slices.Contains(tc.creds, k) {
						t.Errorf("the job gives %s to every step", k)
					}
				}
				for _, st := range job.Steps {
					var cmds []string
					for _, m := range call.FindAllStringSubmatch(st.Run, -1) {
						cmd := m[1]
						seen[cmd] = true
						cmds = append(cmds, cmd)
						_, out, errOut := runCLI(t, cmd, "-h")
						help := out + errOut
						if !strings.Contains(help, "-config") {
							t.Errorf("step %q: command %q has no usage (does it exist?)", st.Name, cmd)
							continue
						}
						for _, f := range regexp.MustCompile(`\s--?([a-z][a-z-]*)`).FindAllStringSubmatch(m[2], -1) {
							if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(f[1]) + `\b`).MatchString(help) {
								t.Errorf("step %q: entitlements %s has no flag --%s", st.Name, cmd, f[1])
							}
						}
					}
					wantCreds := slices.ContainsFunc(cmds, func(c string) bool { return slices.Contains(tc.credCmd, c) })
					for _, k := range tc.creds {
						if _, ok := st.Env[k]; ok != wantCreds {
							t.Errorf("step %q (%s, runs %v): has %s %v, want %v", st.Name, st.Uses, cmds, k, ok, wantCreds)
						}
					}
				}
			}
			for _, want := range tc.commands {
				if !seen[want] {
					t.Errorf("the workflow never runs entitlements %s", want)
				}
			}
		})
	}
}

// TestSavedPlanRevision: a plan saved from a git work tree names the commit it was made from
// (and says so when the work tree had changes); outside git the field is left out.
func TestSavedPlanRevision(t *testing.T) {
	g := newGitRepo(t)
	head := g.git("rev-parse", "HEAD")
	state := filepath.Join(t.TempDir(), "state.json")
	stateText, err := os.ReadFile(exampleState)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, state, string(stateText))
	revision := func(cfgDir string) string {
		t.Helper()
		planFile := filepath.Join(t.TempDir(), "plan.json")
		code, _, stderr := runCLI(t, "plan", "--config", filepath.Join(cfgDir, "entitlements.yaml"), "--now", "2026-01-01",
			"--state", state, "--out", planFile)
		if code != exitOK {
			t.Fatalf("plan: exit %d\n%s", code, stderr)
		}
		data, err := os.ReadFile(planFile)
		if err != nil {
			t.Fatal(err)
		}
		var sp struct {
			Inputs struct {
				Revision *string `json:"revision"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal(data, &sp); err != nil {
			t.Fatal(err)
		}
		if sp.Inputs.Revision == nil {
			return "<absent>"
		}
		return *sp.Inputs.Revision
	}
	if got := revision(g.dir); got != head {
		t.Errorf("clean work tree: revision %q, want %q", got, head)
	}
	g.edit("groups/pizza_teams/sre.txt", func(s string) string { return s + "username = ivan\n" })
	if got := revision(g.dir); got != head+"+dirty" {
		t.Errorf("changed work tree: revision %q, want %q", got, head+"+dirty")
	}
	plain := filepath.Join(t.TempDir(), "config")
	copyTree(t, "../../examples/config", plain)
	if got := revision(plain); got != "<absent>" {
		t.Errorf("outside git: revision %q, want none", got)
	}
}
