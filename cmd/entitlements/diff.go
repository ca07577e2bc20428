package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
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

	baseCommit, err := repo.Resolve(ctx, baseRev)
	if err != nil {
		return fail(exitError, "--base: %v", err)
	}
	headCommit := ""
	if headRev != "" {
		if headCommit, err = repo.Resolve(ctx, headRev); err != nil {
			return fail(exitError, "--head: %v", err)
		}
	}
	// The base tree and the changed files are listed while the head loads (when the head is
	// read from disk, the base is only needed for the incremental load that follows).
	type listing struct {
		tree    *gitfs.Tree
		changed []string
		err     error
	}
	listed := make(chan listing, 1)
	go func() {
		var l listing
		if l.tree, l.err = repo.Tree(ctx, baseCommit); l.err != nil {
			l.err = fmt.Errorf("--base: %w", l.err)
		} else {
			l.changed, l.err = repo.Changed(ctx, baseCommit, headCommit)
		}
		listed <- l
	}()
	// vfs.Dir: reads of the work tree keep the size caps and symlink roots of a normal run.
	head := &diffSide{desc: "the work tree", fsys: vfs.Dir(repo.Top()), label: "head", disk: true}
	if headRev != "" {
		t, err := repo.Tree(ctx, headCommit)
		if err != nil {
			return fail(exitError, "--head: %v", err)
		}
		head = &diffSide{desc: headRev, fsys: t, label: "head"}
		// A head revision that is the commit checked out is read from the work tree wherever
		// the files there are that commit's (checked by object id, file by file): plain files
		// read faster than git decompresses objects.
		if headCommit == commitOf(ctx, repo, "HEAD") {
			head.fsys, head.disk = t.FromWorkTree(), true
		}
	}
	base := &diffSide{desc: "the base revision " + baseRev, label: "base"}
	// One side is loaded in full, the other incrementally over it (only the changed files
	// are read and only what depends on them is computed again). The full side is the one
	// on disk when there is one: then git is asked for the few changed files only.
	full, inc := base, head
	if head.disk {
		full, inc = head, base
	}
	var l listing
	if !head.disk {
		if l = <-listed; l.err != nil {
			return fail(exitError, "%v", l.err)
		}
		base.fsys = l.tree
	}
	tGit := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", full.label)))
	if code := full.load(ctx, cfgRel, opt, stderr); code != exitOK {
		return nil, code
	}
	if head.disk {
		if l = <-listed; l.err != nil {
			return fail(exitError, "%v", l.err)
		}
		base.fsys = l.tree
	}
	changed := l.changed
	set := make(map[string]bool, len(changed))
	for _, p := range changed {
		set[p] = true
	}
	t1 := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", inc.label)))
	iopt := opt
	iopt.Incremental = &calc.Incremental{Base: full.repo, Changed: func(p string) bool { return set[p] }}
	if code := inc.load(ctx, cfgRel, iopt, stderr); code != exitOK {
		return nil, code
	}
	baseRes, headRes := base.res, head.res
	t2 := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", "compare")))
	d := review.Compare(baseRes, headRes, review.Options{})
	if c.verbose {
		ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
		ft, it := full.res.Timings, inc.res.Timings
		ru := inc.res.Reuse
		fmt.Fprintf(stderr, "diff: git listings %s, %s %s (%s, full: load %s, validate %s, calculate %s), %s %s (%d changed file(s), incremental: load %s, validate %s, calculate %s; taken from the other side: %d group files, %d rule leaves, %d evaluations, %d result groups), compare %s\n",
			ms(tGit.Sub(t0)), full.label, ms(t1.Sub(tGit)), full.source(), ms(ft.Load), ms(ft.Validate), ms(ft.Calculate),
			inc.label, ms(t2.Sub(t1)), len(changed), ms(it.Load), ms(it.Validate), ms(it.Calculate),
			ru.Files, ru.Leaves, ru.Groups, ru.Outputs, ms(time.Since(t2)))
	}
	return d, exitOK
}

// diffSide is one of the two revisions of a diff.
type diffSide struct {
	desc  string // for messages: "the base revision main", "the work tree", "HEAD"
	label string // "base" or "head"
	fsys  fs.FS
	disk  bool // fsys is the work tree
	repo  *calc.Repo
	res   *calc.Result
}

func (s *diffSide) source() string {
	if s.disk {
		return "from the work tree"
	}
	return "from git"
}

// load loads and calculates the side, printing why it cannot.
func (s *diffSide) load(ctx context.Context, cfg string, opt calc.Options, stderr io.Writer) int {
	repo, err := calc.LoadFS(ctx, s.fsys, cfg, opt)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: %s does not load:\n", s.desc)
		printErr(stderr, err)
		return exitError
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: %s does not calculate:\n", s.desc)
		printErr(stderr, err)
		return exitError
	}
	s.repo, s.res = repo, res
	return exitOK
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
