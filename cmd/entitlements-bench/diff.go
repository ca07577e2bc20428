package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// diffBenchReport compares the whole-process time of `entitlements diff` between two commits
// of the generated repo with that of one `entitlements calc` of the same repo: the pull-request
// diff must cost little more than one calculation (the review-workflow issue asks for at most
// 1.5 times).
type diffBenchReport struct {
	// Diff is `diff --base HEAD~1 --head HEAD` (two commits); DiffWorkTree is `diff --base
	// HEAD~1` (the head is the work tree, as in the pull-request workflow).
	Calc, Diff, DiffWorkTree time.Duration
	Changed                  []string
}

// runDiffBench commits the generated repo in dir (a new git repository), commits the change
// a typical access pull request makes (a member added to three group files, one person moved
// to another manager), then runs the calc and diff of the entitlements binary cli alternately
// runs times each, keeping the fastest of each.
func runDiffBench(ctx context.Context, cli, dir string, runs int) (diffBenchReport, error) {
	var rep diffBenchReport
	if _, err := exec.LookPath("git"); err != nil {
		return rep, fmt.Errorf("--diff needs git: %w", err)
	}
	git := func(args ...string) error {
		// No automatic gc in the background: the explicit one below packs the objects as a
		// clone would have them.
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "gc.auto=0"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.net",
			"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.net",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, bytes.TrimSpace(out))
		}
		return nil
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "base"}} {
		if err := git(args...); err != nil {
			return rep, err
		}
	}
	changed, err := benchChange(dir)
	if err != nil {
		return rep, err
	}
	rep.Changed = changed
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "head"}, {"gc", "-q"}} {
		if err := git(args...); err != nil {
			return rep, err
		}
	}
	out, err := os.CreateTemp("", "entitlements-bench-diff-")
	if err != nil {
		return rep, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	run := func(args ...string) (time.Duration, error) {
		if err := resetSink(out); err != nil {
			return 0, err
		}
		cmd := exec.CommandContext(ctx, cli, args...)
		cmd.Dir = dir
		cmd.Stdout = out
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t := time.Now()
		err := cmd.Run()
		d := time.Since(t)
		if err != nil {
			return 0, fmt.Errorf("entitlements %s: %v: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
		}
		return d, nil
	}
	common := []string{"--config", "config.yaml", "--now", "2026-01-01"}
	for i := 0; i < runs; i++ {
		c, err := run(append([]string{"calc", "--format", "json"}, common...)...)
		if err != nil {
			return rep, err
		}
		d, err := run(append([]string{"diff", "--base", "HEAD~1", "--head", "HEAD", "--format", "markdown"}, common...)...)
		if err != nil {
			return rep, err
		}
		w, err := run(append([]string{"diff", "--base", "HEAD~1", "--format", "markdown"}, common...)...)
		if err != nil {
			return rep, err
		}
		keepMin(&rep.Calc, c)
		keepMin(&rep.Diff, d)
		keepMin(&rep.DiffWorkTree, w)
	}
	return rep, nil
}

// benchChange makes the change of the diff benchmark in the generated repo and returns the
// files it changed: username lines added to the first two team files and the first app
// file (by name), and the manager of the 501st person (in people data and manager map) set
// to the third person.
func benchChange(dir string) ([]string, error) {
	var changed []string
	pick := func(sub string, n int) error {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			return err
		}
		var names []string
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".txt") {
				names = append(names, e.Name())
			}
		}
		slices.Sort(names)
		if len(names) < n {
			return fmt.Errorf("%s has fewer than %d .txt files", sub, n)
		}
		for _, name := range names[:n] {
			p := filepath.Join(dir, sub, name)
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = io.WriteString(f, "username = u000123\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			changed = append(changed, filepath.ToSlash(filepath.Join(sub, name)))
		}
		return nil
	}
	if err := pick("ldap-config/pizza_teams", 2); err != nil {
		return nil, err
	}
	if err := pick("ldap-config/entitlements/apps", 1); err != nil {
		return nil, err
	}
	for _, name := range []string{"people.yaml", "manager-map.yaml"} {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s := string(data)
		i := strings.Index(s, "\nu000500:\n")
		if i < 0 {
			return nil, fmt.Errorf("%s: person u000500 not found (use --people 501 or more)", name)
		}
		j := strings.Index(s[i:], "manager: ")
		if j < 0 {
			return nil, fmt.Errorf("%s: u000500 has no manager", name)
		}
		j += i + len("manager: ")
		k := j + strings.IndexByte(s[j:], '\n')
		s = s[:j] + "u000002" + s[k:]
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			return nil, err
		}
		changed = append(changed, name)
	}
	return changed, nil
}

// buildCLI builds the entitlements command of this module into dir, with the build tags this
// benchmark was built with (-tags aad builds both with Azure AD), and returns its path. The go
// command runs in the working directory, which must be in the module's source tree.
func buildCLI(ctx context.Context, dir string, log io.Writer) (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("--diff builds the entitlements CLI and needs go (or --cli PATH): %w", err)
	}
	bin := filepath.Join(dir, "entitlements")
	args := []string{"build", "-o", bin}
	if tags := buildTags(); tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, cliPackage)
	t := time.Now()
	cmd := exec.CommandContext(ctx, "go", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the CLI for --diff (go %s; run from the repository, or pass --cli PATH): %w\n%s",
			strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	fmt.Fprintf(log, "built %s in %s\n", cliPackage, time.Since(t).Round(time.Millisecond))
	return bin, nil
}

// cliPackage is the command whose calc and diff --diff times.
const cliPackage = "github.com/entitlements-go/entitlements/cmd/entitlements"

// buildTags are the -tags of this binary's build ("" when none or unknown).
func buildTags() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "-tags" {
			return s.Value
		}
	}
	return ""
}

func keepMin(d *time.Duration, v time.Duration) {
	if *d == 0 || v < *d {
		*d = v
	}
}

func printDiffBench(w io.Writer, rep diffBenchReport, runs int) {
	fmt.Fprintf(w, "changed by the head commit: %s\n", strings.Join(rep.Changed, ", "))
	fmt.Fprintf(w, "calc (whole process, JSON to a file): %s\n", rep.Calc.Round(time.Millisecond))
	fmt.Fprintf(w, "diff --base HEAD~1 --head HEAD (whole process, markdown): %s, ratio diff/calc %.2f\n",
		rep.Diff.Round(time.Millisecond), float64(rep.Diff)/float64(rep.Calc))
	fmt.Fprintf(w, "diff --base HEAD~1 (head: the work tree, as in the PR workflow): %s, ratio diff/calc %.2f\n",
		rep.DiffWorkTree.Round(time.Millisecond), float64(rep.DiffWorkTree)/float64(rep.Calc))
	fmt.Fprintf(w, "(fastest of %d runs each; goal <= 1.5)\n", runs)
}
