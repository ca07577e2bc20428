package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/review"
	"github.com/entitlements-go/entitlements/review/gitfs"
)

// cmdDiff calculates the config repo at two revisions, from git objects, and prints who
// gains or loses which access and why.
func cmdDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	var c common
	c.register(fs)
	base := fs.String("base", "", "base revision (required): the commit the change is compared against, e.g. origin/main")
	head := fs.String("head", "", "head revision (default: the work tree as it is, uncommitted changes included)")
	format := fs.String("format", "text", "output format: text, json or markdown")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 when nothing changes, 2 when something does, 1 on error")
	limit := fs.Int("markdown-limit", review.GitHubCommentLimit, "largest Markdown output in characters (GitHub comments max out at 65536)")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	switch {
	case *base == "":
		fmt.Fprintln(stderr, "entitlements diff: --base is required")
		return exitUsage
	case c.config == "":
		fmt.Fprintln(stderr, "entitlements diff: --config is required")
		return exitUsage
	case !slices.Contains([]string{"text", "json", "markdown"}, *format):
		fmt.Fprintf(stderr, "entitlements diff: unknown --format %q (text, json, markdown)\n", *format)
		return exitUsage
	}
	defer c.stop()
	start := time.Now()
	d, code := diffRevisions(ctx, &c, *base, *head, stderr)
	if d == nil {
		return code
	}
	var err error
	switch *format {
	case "json":
		err = d.WriteJSON(stdout)
	case "markdown":
		err = d.WriteMarkdown(stdout, review.MarkdownOptions{Limit: *limit})
	default:
		err = d.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: writing output: %v\n", err)
		return exitError
	}
	if c.verbose {
		fmt.Fprintf(stderr, "diff: %s\n", time.Since(start).Round(time.Millisecond))
	}
	if *detailed && !d.Empty() {
		return exitChanges
	}
	return exitOK
}

// diffRevisions loads the base revision in full from git objects and the head (a revision or
// the work tree) incrementally over it: only the files that differ are read and parsed
// again, and only the groups that depend on them are evaluated again.
func diffRevisions(ctx context.Context, c *common, baseRev, headRev string, stderr io.Writer) (*review.Diff, int) {
	fail := func(code int, format string, args ...any) (*review.Diff, int) {
		fmt.Fprintf(stderr, "entitlements diff: "+format+"\n", args...)
		return nil, code
	}
	opt, err := c.options(stderr)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fail(exitUsage, "%v", err)
		}
		c.stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
	}
	t0 := time.Now()
	wd, err := os.Getwd()
	if err != nil {
		return fail(exitError, "%v", err)
	}
	repo, err := gitfs.Open(ctx, wd)
	if err != nil {
		return fail(exitError, "%v (run diff inside the config repo's work tree)", err)
	}
	defer repo.Close()
	cfgAbs, err := filepath.Abs(c.config)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	cfgRel, err := filepath.Rel(repo.Top(), cfgAbs)
	if err != nil || !filepath.IsLocal(cfgRel) {
		return fail(exitUsage, "--config %s is outside the git work tree %s", c.config, repo.Top())
	}
	// Rooted: the loader resolves relative paths against the working directory (Prefix).
	cfgRel = "/" + filepath.ToSlash(cfgRel)
	opt.WorkDir = repo.Prefix()

	baseTree, err := repo.Tree(ctx, baseRev)
	if err != nil {
		return fail(exitError, "--base: %v", err)
	}
	// Profile labels tell the base's work from the head's in a --cpuprofile.
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", "base")))
	if err := baseTree.Prefetch(ctx); err != nil {
		return fail(exitError, "reading %s: %v", baseRev, err)
	}
	baseRepo, err := calc.LoadFS(ctx, baseTree, cfgRel, opt)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: the base revision %s does not load:\n", baseRev)
		printErr(stderr, err)
		return nil, exitError
	}
	baseRes, err := baseRepo.Calculate(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: the base revision %s does not calculate:\n", baseRev)
		printErr(stderr, err)
		return nil, exitError
	}

	t1 := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", "head")))
	// vfs.Dir: reads of the work tree keep the size caps and symlink roots of a normal run.
	var headFS = vfs.Dir(repo.Top())
	name := "the work tree"
	if headRev != "" {
		t, err := repo.Tree(ctx, headRev)
		if err != nil {
			return fail(exitError, "--head: %v", err)
		}
		headFS, name = t, headRev
	}
	changed, err := repo.Changed(ctx, baseTree.Commit(), commitOf(ctx, repo, headRev))
	if err != nil {
		return fail(exitError, "%v", err)
	}
	set := make(map[string]bool, len(changed))
	for _, p := range changed {
		set[p] = true
	}
	hopt := opt
	hopt.Incremental = &calc.Incremental{Base: baseRepo, Changed: func(p string) bool { return set[p] }}
	headRepo, err := calc.LoadFS(ctx, headFS, cfgRel, hopt)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: %s does not load:\n", name)
		printErr(stderr, err)
		return nil, exitError
	}
	headRes, err := headRepo.Calculate(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: %s does not calculate:\n", name)
		printErr(stderr, err)
		return nil, exitError
	}
	t2 := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", "compare")))
	d := review.Compare(baseRes, headRes, review.Options{})
	if c.verbose {
		fmt.Fprintf(stderr, "diff: base %s (from git, full), head %s (%d changed file(s), incremental), compare %s\n",
			t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), len(changed), time.Since(t2).Round(time.Millisecond))
	}
	return d, exitOK
}

func commitOf(ctx context.Context, repo *gitfs.Repo, rev string) string {
	if rev == "" {
		return ""
	}
	c, err := repo.Resolve(ctx, rev)
	if err != nil {
		return rev
	}
	return c
}
