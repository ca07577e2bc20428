package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflowStep is one step of a GitHub Actions job.
type workflowStep struct {
	ID   string            `yaml:"id"`
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	Env  map[string]string `yaml:"env"`
}

type workflow struct {
	Concurrency struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, file string) (wf workflow, raw string) {
	t.Helper()
	data, err := os.ReadFile("../../examples/github-actions/" + file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s is not valid YAML: %v", file, err)
	}
	return wf, string(data)
}

// commentAbove is the block of comment lines right above the line that starts with key.
func commentAbove(raw, key string) string {
	lines := strings.Split(raw, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), key) {
			continue
		}
		var c []string
		for j := i - 1; j >= 0 && strings.HasPrefix(strings.TrimSpace(lines[j]), "#"); j-- {
			c = append([]string{lines[j]}, c...)
		}
		return strings.Join(c, "\n")
	}
	return ""
}

func (wf workflow) steps() []workflowStep {
	var out []workflowStep
	for _, j := range wf.Jobs {
		out = append(out, j.Steps...)
	}
	return out
}

func (wf workflow) step(t *testing.T, id string) workflowStep {
	t.Helper()
	for _, s := range wf.steps() {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no step with id %q", id)
	return workflowStep{}
}

// The example workflows pin the release they install, run one at a time, and read no
// expression into a shell script (issue 22.14).
// The Azure workflow builds the CLI with -tags aad in a clone of the pinned tag (the AAD
// provider is a module of its own), never from a branch or @latest.
func TestAzureWorkflowBuildsThePinnedTag(t *testing.T) {
	wf, raw := readWorkflow(t, "entitlements-apply-azure.yml")
	if regexp.MustCompile(`(?m)^[^#\n]*@latest`).MatchString(raw) {
		t.Error("installs @latest")
	}
	if v := wf.Env["ENTITLEMENTS_VERSION"]; !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("ENTITLEMENTS_VERSION %q is not a release tag vX.Y.Z", v)
	}
	builds := 0
	for _, s := range wf.steps() {
		if strings.Contains(s.Run, "go build -tags aad") {
			builds++
			if !strings.Contains(s.Run, `--branch "$ENTITLEMENTS_VERSION"`) {
				t.Errorf("step %q builds another revision than ENTITLEMENTS_VERSION: %s", s.Name, s.Run)
			}
		}
	}
	if builds != 1 {
		t.Errorf("%d -tags aad build steps, want 1", builds)
	}
}

func TestWorkflowsPinAndSerialise(t *testing.T) {
	for _, file := range []string{"entitlements-review.yml", "entitlements-apply.yml"} {
		t.Run(file, func(t *testing.T) {
			wf, raw := readWorkflow(t, file)
			if regexp.MustCompile(`(?m)^[^#\n]*@latest`).MatchString(raw) {
				t.Error("installs @latest: a new release would change the result without a commit")
			}
			v := wf.Env["ENTITLEMENTS_VERSION"]
			if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(v) {
				t.Errorf("ENTITLEMENTS_VERSION %q is not a release tag vX.Y.Z", v)
			}
			if c := commentAbove(raw, "ENTITLEMENTS_VERSION:"); !strings.Contains(c, "tag") || !strings.Contains(c, "must") {
				t.Errorf("ENTITLEMENTS_VERSION has no comment saying that the tag must exist: %q", c)
			}
			installs := 0
			for _, s := range wf.steps() {
				if strings.Contains(s.Run, "go install") {
					installs++
					if !strings.Contains(s.Run, "cmd/entitlements@${ENTITLEMENTS_VERSION}") {
						t.Errorf("step %q installs another version than ENTITLEMENTS_VERSION: %s", s.Name, s.Run)
					}
				}
				// ${{ }} in a script is pasted into it before the shell reads it: a branch
				// name or title could run commands. Values come in through env.
				if strings.Contains(s.Run, "${{") {
					t.Errorf("step %q expands an expression inside its script; pass it through env", s.Name)
				}
			}
			if installs != 1 {
				t.Errorf("%d install steps, want 1", installs)
			}
			if wf.Concurrency.Group == "" {
				t.Error("no concurrency group")
			}
		})
	}
	review, _ := readWorkflow(t, "entitlements-review.yml")
	if !strings.Contains(review.Concurrency.Group, "github.event.pull_request.number") || !review.Concurrency.CancelInProgress {
		t.Errorf("review concurrency %+v: want one run per pull request, the newer push cancelling the older", review.Concurrency)
	}
	apply, _ := readWorkflow(t, "entitlements-apply.yml")
	if apply.Concurrency.CancelInProgress {
		t.Error("apply: a running apply must never be cancelled by the next push")
	}
}

// Every output a step writes is read by a later step: an output nobody uses is a promise
// the workflow does not keep.
func TestWorkflowOutputsAreUsed(t *testing.T) {
	wf, raw := readWorkflow(t, "entitlements-review.yml")
	out := regexp.MustCompile(`echo "(\w+)=`)
	n := 0
	for _, s := range wf.steps() {
		for _, m := range out.FindAllStringSubmatch(s.Run, -1) {
			n++
			if s.ID == "" {
				t.Errorf("step %q writes output %s but has no id", s.Name, m[1])
				continue
			}
			if !strings.Contains(raw, "steps."+s.ID+".outputs."+m[1]) {
				t.Errorf("output %s of step %s is never used", m[1], s.ID)
			}
		}
	}
	if n == 0 {
		t.Error("no step output found: the test no longer matches the workflow")
	}
	if !strings.Contains(wf.step(t, "diff").Run, "changes=") {
		t.Error("the diff step no longer says whether there are changes")
	}
}

// The review workflow's shell steps, run with stand-ins for entitlements and gh: validation
// errors become the comment (fenced so that the files quoted cannot close the fence); the
// comment updated is this workflow's own (the Actions bot's, with the marker), never one a
// person wrote with the marker pasted in; a fork's run writes the job summary and does not
// comment.
func TestReviewWorkflowSteps(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	wf, raw := readWorkflow(t, "entitlements-review.yml")
	validate, diff := wf.step(t, "validate"), wf.step(t, "diff")
	var summary, comment workflowStep
	for _, s := range wf.steps() {
		switch {
		case strings.Contains(s.Run, "GITHUB_STEP_SUMMARY"):
			summary = s
		case strings.Contains(s.Run, "gh pr comment"):
			comment = s
		}
	}
	if summary.Run == "" || comment.Run == "" {
		t.Fatal("no job summary step or no comment step")
	}
	if strings.Contains(summary.If, "full_name") {
		t.Error("the job summary is written for forks too")
	}
	if !strings.Contains(comment.If, "github.event.pull_request.head.repo.full_name == github.repository") {
		t.Errorf("the comment step runs for forks, whose token cannot write: if: %q", comment.If)
	}
	if strings.Contains(comment.If, "steps.diff") || !strings.Contains(diff.If, "steps.validate.outputs.ok") {
		t.Errorf("a failed validation must still be commented: comment if %q, diff if %q", comment.If, diff.If)
	}

	// fake writes stand-ins into bin; entitlements prints hostile validation errors.
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExe := func(name, script string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/bash\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeExe("entitlements", "echo 'groups/a.txt:1: unknown method \"````\" @everyone' >&2\nexit 1\n")
	runStep := func(s workflowStep, env ...string) string {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", s.Run)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "GITHUB_OUTPUT="+filepath.Join(dir, "output"),
			"GITHUB_STEP_SUMMARY="+filepath.Join(dir, "summary"), "CONFIG=entitlements.yaml", "MARKER="+wf.Env["MARKER"])
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("step %q: %v\n%s", s.Name, err, out)
		}
		return string(out)
	}
	runStep(validate)
	if got := mustRead(t, filepath.Join(dir, "output")); got != "ok=false\n" {
		t.Errorf("validate outputs %q, want ok=false", got)
	}
	body := mustRead(t, filepath.Join(dir, "comment.md"))
	if !strings.Contains(body, "validation failed") || !strings.Contains(body, "\n`````\ngroups/a.txt:1:") || !strings.HasSuffix(body, "\n`````\n") {
		t.Errorf("comment on a failed validation: the errors must sit in a fence longer than their backticks:\n%s", body)
	}
	runStep(summary)
	if mustRead(t, filepath.Join(dir, "summary")) != body {
		t.Error("the job summary is not the comment")
	}

	// The diff step: the whole diff goes to --out-full, and a comment that differs from it
	// (shortened) makes the next step attach it to the run.
	writeExe("entitlements", `out=""; prev=""
for a in "$@"; do [ "$prev" = --out-full ] && out=$a; prev=$a; done
[ -n "$out" ] || { echo "no --out-full" >&2; exit 1; }
echo "the whole diff" > "$out"
echo "${COMMENT:-the whole diff}"
exit 2
`)
	var upload workflowStep
	for _, s := range wf.steps() {
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			upload = s
		}
	}
	if upload.If != "steps.diff.outputs.truncated == 'true'" {
		t.Errorf("no upload of the full diff when the comment is shortened (if: %q)", upload.If)
	}
	for _, tc := range []struct{ comment, want string }{
		{"", "changes=true\ntruncated=false\n"},
		{"a shortened diff", "changes=true\ntruncated=true\n"},
	} {
		os.Remove(filepath.Join(dir, "output"))
		runStep(diff, "BASE_REF=main", "COMMENT="+tc.comment)
		if got := mustRead(t, filepath.Join(dir, "output")); got != tc.want {
			t.Errorf("comment %q: outputs %q, want %q", tc.comment, got, tc.want)
		}
	}
	var uw struct {
		Jobs map[string]struct {
			Steps []struct {
				With map[string]string `yaml:"with"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(raw), &uw); err != nil {
		t.Fatal(err)
	}
	uploads := ""
	for _, j := range uw.Jobs {
		for _, s := range j.Steps {
			uploads += s.With["path"] + " "
		}
	}
	if !strings.Contains(diff.Run, "--out-full diff-full.md") || !strings.Contains(uploads, "diff-full.md") {
		t.Errorf("the file uploaded (%q) is not the one --out-full writes", uploads)
	}

	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("no jq to stand in for gh --jq")
	}
	marker := wf.Env["MARKER"]
	if !regexp.MustCompile(`^<!--.*-->$`).MatchString(marker) {
		t.Errorf("MARKER %q is not a hidden HTML comment", marker)
	}
	// A person's comment quoting the marker comes first; the bot's own second.
	comments := `[{"id": 1, "user": {"login": "mallory"}, "body": "look: ` + marker + `"},
		{"id": 2, "user": {"login": "github-actions[bot]"}, "body": "old diff\n` + marker + `"},
		{"id": 3, "user": {"login": "github-actions[bot]"}, "body": "another workflow"}]`
	if err := os.WriteFile(filepath.Join(dir, "comments.json"), []byte(comments), 0o644); err != nil {
		t.Fatal(err)
	}
	writeExe("gh", `echo "gh $*" >> "$GH_LOG"
if [ "$1 $3 $4" = "api --paginate --jq" ]; then jq -r "$5" comments.json; fi
`)
	ghLog := filepath.Join(dir, "gh.log")
	runStep(comment, "GH_LOG="+ghLog, "PR=7", "REPO=o/r", "CHANGES=")
	log := mustRead(t, ghLog)
	if !strings.Contains(log, "gh api -X PATCH repos/o/r/issues/comments/2 ") || strings.Contains(log, "comments/1 ") || strings.Contains(log, "pr comment") {
		t.Errorf("the comment step must update the bot's own comment (2) only:\n%s", log)
	}
	if body := mustRead(t, filepath.Join(dir, "comment.md")); !strings.HasSuffix(body, "\n"+marker+"\n") {
		t.Errorf("the posted comment does not end with the marker:\n%s", body)
	}

	// No comment of its own yet, and no access change: nothing is posted.
	if err := os.WriteFile(filepath.Join(dir, "comments.json"), []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(ghLog)
	runStep(comment, "GH_LOG="+ghLog, "PR=7", "REPO=o/r", "CHANGES=false")
	if log := mustRead(t, ghLog); strings.Contains(log, "pr comment") || strings.Contains(log, "PATCH") {
		t.Errorf("a pull request without access changes got a new comment:\n%s", log)
	}
	os.Remove(ghLog)
	runStep(comment, "GH_LOG="+ghLog, "PR=7", "REPO=o/r", "CHANGES=true")
	if log := mustRead(t, ghLog); !strings.Contains(log, "gh pr comment 7 --repo o/r --body-file comment.md") {
		t.Errorf("a pull request with access changes got no comment:\n%s", log)
	}
}
