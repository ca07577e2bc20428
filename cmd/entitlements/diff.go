package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/internal/vfs"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/review"
	"github.com/entitlements-go/entitlements/review/gitfs"
	"github.com/entitlements-go/entitlements/validate"
)

// cmdDiff calculates the config repo at two revisions, from git objects, and prints who
// gains or loses which access and why.
func cmdDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	var c common
	c.register(fs)
	base := fs.String("base", "", "base revision (required): the commit the change is compared against, e.g. origin/main; A...B compares the merge-base of A and B with B (as git diff A...B)")
	head := fs.String("head", "", "head revision (default: the work tree as it is, uncommitted changes included; B of --base A...B)")
	mergeBase := fs.Bool("merge-base", false, "compare against the merge-base of --base and the head (the commit the change was made from), not the tip of --base: other changes made to --base since never show as reverted")
	format := fs.String("format", "text", "output format: text, json or markdown")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 when nothing changes, 2 when something does (access or the configuration), 1 on error")
	limit := fs.Int("markdown-limit", review.GitHubCommentLimit, "largest Markdown output in characters (GitHub comments max out at 65536)")
	outFull := fs.String("out-full", "", "also write the whole diff, in the same --format, to this file: no size limit and every person named (the comment may be shortened)")
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
	s := newSession(&c)
	defer s.close()
	start := time.Now()
	opt, err := s.options(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements diff: %v\n", err)
		return exitUsage
	}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "entitlements diff: %v\n", err)
			return exitUsage
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			fmt.Fprintf(stderr, "entitlements diff: %v\n", err)
			return exitUsage
		}
		s.stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
	}
	out, err := diffRevisions(ctx, diffInput{config: c.config, base: *base, head: *head, mergeBase: *mergeBase,
		opt: opt, ldapSnapshot: c.ldapGroups})
	if err != nil {
		var de *diffError
		if !errors.As(err, &de) {
			de = &diffError{code: exitError, err: err}
		}
		if de.what != "" {
			fmt.Fprintf(stderr, "entitlements diff: %s:\n", de.what)
			printErr(stderr, de.err)
		} else {
			fmt.Fprintf(stderr, "entitlements diff: %v\n", de.err)
		}
		return de.code
	}
	d := out.diff
	if err := writeDiff(stdout, d, *format, review.MarkdownOptions{Limit: *limit}); err != nil {
		fmt.Fprintf(stderr, "entitlements diff: writing output: %v\n", err)
		return exitError
	}
	if *outFull != "" {
		if err := writeDiffFile(*outFull, d, *format); err != nil {
			fmt.Fprintf(stderr, "entitlements diff: --out-full: %v\n", err)
			return exitError
		}
	}
	if c.verbose {
		fmt.Fprintf(stderr, "%s\ndiff: %s\n", out.stats, time.Since(start).Round(time.Millisecond))
	}
	if *detailed && !d.Empty() {
		return exitChanges
	}
	return exitOK
}

// writeDiff renders the diff in format.
func writeDiff(w io.Writer, d *review.Diff, format string, mopt review.MarkdownOptions) error {
	switch format {
	case "json":
		return d.WriteJSON(w)
	case "markdown":
		return d.WriteMarkdown(w, mopt)
	default:
		return d.WriteText(w)
	}
}

// writeDiffFile writes the whole diff to path (--out-full): the text and JSON forms are
// whole anyway, the Markdown one is rendered without a size limit.
func writeDiffFile(path string, d *review.Diff, format string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeDiff(f, d, format, review.MarkdownOptions{Full: true}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// diffInput is what a diff compares and how.
type diffInput struct {
	config     string // the config file, as given (any working directory)
	base, head string // revisions; head "" is the work tree; base may be A...B
	mergeBase  bool   // compare against the merge-base of base and the head
	opt        calc.Options
	// ldapSnapshot is the file opt.LDAPGroups was read from ("": none), named in the output.
	ldapSnapshot string
}

// diffOutput is a diff and the figures of how it was made.
type diffOutput struct {
	diff  *review.Diff
	stats string // phases and reuse, for -v
}

// diffError is a diff that could not be made: code is the exit status; what, when set, says
// which side failed to load and err lists its problems.
type diffError struct {
	code int
	what string
	err  error
}

func (e *diffError) Error() string {
	if e.what != "" {
		return e.what + ": " + e.err.Error()
	}
	return e.err.Error()
}

func (e *diffError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &diffError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// diffRevisions makes the diff of a config repo between two revisions; it prints nothing.
//
// The trust model: the base revision is trusted, the head is data. The configuration of
// both calculations is the base's, loaded with the environment (credentials, servers); the
// head contributes only its group files, people data and manager map. A change the head makes
// to the configuration file is compared with the base's, both read without the environment,
// and reported (review.ConfigDiff), never applied, and nothing it names is contacted.
//
// The base is read from git objects in full and the head (a revision, or the work tree)
// incrementally over it (or the other way round when the head is on disk): only the files
// that differ are read and parsed again, and only the groups that depend on them are
// evaluated again.
func diffRevisions(ctx context.Context, in diffInput) (*diffOutput, error) {
	t0 := time.Now()
	cfgAbs, err := filepath.Abs(in.config)
	if err != nil {
		return nil, usageErr("--config: %v", err)
	}
	// The repository is the one holding the config file, wherever the command runs.
	repo, err := gitfs.Open(ctx, filepath.Dir(cfgAbs))
	if err != nil {
		return nil, &diffError{code: exitError, err: fmt.Errorf("--config %s: %w (diff reads the revisions of the git repository that holds the config file)", in.config, err)}
	}
	defer repo.Close()
	// Rooted: the loader resolves relative paths against the working directory.
	cfgName := path.Join(repo.Prefix(), filepath.Base(cfgAbs))
	cfgPath := "/" + cfgName
	opt := in.opt
	opt.WorkDir = workDir(repo)

	baseRev, headRev, err := revisions(ctx, repo, in)
	if err != nil {
		return nil, err
	}
	baseCommit, err := repo.Resolve(ctx, baseRev.rev)
	if err != nil {
		return nil, &diffError{code: exitError, err: fmt.Errorf("--base: %w", err)}
	}
	headCommit := ""
	if headRev != "" {
		if headCommit, err = repo.Resolve(ctx, headRev); err != nil {
			return nil, &diffError{code: exitError, err: fmt.Errorf("--head: %w", err)}
		}
	}
	// The changed files are listed while the configuration and the first side load.
	type listing struct {
		changed []string
		err     error
	}
	listed := make(chan listing, 1)
	go func() {
		var l listing
		l.changed, l.err = repo.Changed(ctx, baseCommit, headCommit)
		listed <- l
	}()
	baseTree, err := repo.Tree(ctx, baseCommit)
	if err != nil {
		return nil, &diffError{code: exitError, err: fmt.Errorf("--base: %w", err)}
	}
	base := &diffSide{desc: "the base revision " + baseRev.desc, fsys: baseTree, label: "base"}
	// vfs.Dir: reads of the work tree keep the size caps and symlink roots of a normal run.
	head := &diffSide{desc: "the work tree", fsys: vfs.Dir(repo.Top()), label: "head", disk: true}
	var headTree *gitfs.Tree
	if headRev != "" {
		if headTree, err = repo.Tree(ctx, headCommit); err != nil {
			return nil, &diffError{code: exitError, err: fmt.Errorf("--head: %w", err)}
		}
		head = &diffSide{desc: headRev, fsys: headTree, label: "head"}
		// A head revision that is the commit checked out is read from the work tree wherever
		// the files there are that commit's (checked by object id, file by file): plain files
		// read faster than git decompresses objects.
		if headCommit == commitOf(ctx, repo, "HEAD") {
			head.fsys, head.disk = headTree.FromWorkTree(), true
		}
	}

	// The one configuration of both calculations: the base's.
	trusted := opt
	trusted.FS = baseTree
	cfg, err := calc.LoadConfig(cfgPath, trusted)
	if err != nil {
		return nil, &diffError{code: exitError, what: base.desc + " does not load", err: err}
	}
	opt.Config = cfg
	var used dataUse
	opt = used.record(opt)
	cfgDiff := compareConfigs(cfgName, cfgPath, baseTree, head.fsys, opt)

	// One side is loaded in full, the other incrementally over it. The full side is the one
	// on disk when there is one: then git is asked for the few changed files only.
	full, inc := base, head
	if head.disk {
		full, inc = head, base
	}
	tGit := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", full.label)))
	if err := full.load(ctx, cfgPath, opt); err != nil {
		return nil, err
	}
	l := <-listed
	if l.err != nil {
		return nil, &diffError{code: exitError, err: l.err}
	}
	set := make(map[string]bool, len(l.changed))
	for _, p := range l.changed {
		set[p] = true
	}
	// A file reached through a symbolic link changes with the file the link leads to, which
	// the list names instead: such paths are always read again.
	changed := func(p string) bool {
		if set[p] || baseTree.HasLink(p) || (headTree != nil && headTree.HasLink(p)) {
			return true
		}
		for i := strings.IndexByte(p, '/'); i >= 0; i = nextSlash(p, i) {
			if set[p[:i]] {
				return true
			}
		}
		return false
	}
	t1 := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", inc.label)))
	iopt := opt
	iopt.Incremental = &calc.Incremental{Base: full.repo, Changed: changed}
	if err := inc.load(ctx, cfgPath, iopt); err != nil {
		return nil, err
	}
	t2 := time.Now()
	pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("diff", "compare")))
	d := review.Compare(base.res, head.res, review.Options{})
	// The groups whose own file the change edits lead the comment: the file list names
	// paths from the top of the repository, the groups name theirs as the loader shows them.
	edited := make(map[string]bool, len(l.changed))
	for _, p := range l.changed {
		edited[cfg.Rel("/"+p)] = true
	}
	d.MarkEdited(func(file string) bool { return edited[file] })
	d.Config = cfgDiff
	d.Sources = used.sources(cfg, in.ldapSnapshot)
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	ft, it := full.res.Timings, inc.res.Timings
	ru := inc.res.Reuse
	stats := fmt.Sprintf("diff: %s against %s; git listings and config %s, %s %s (%s, full: load %s, validate %s, calculate %s), %s %s (%d changed file(s), incremental: load %s, validate %s, calculate %s; taken from the other side: %d group files, %d rule leaves, %d evaluations, %d result groups), compare %s",
		head.desc, base.desc, ms(tGit.Sub(t0)), full.label, ms(t1.Sub(tGit)), full.source(), ms(ft.Load), ms(ft.Validate), ms(ft.Calculate),
		inc.label, ms(t2.Sub(t1)), len(l.changed), ms(it.Load), ms(it.Validate), ms(it.Calculate),
		ru.Files, ru.Leaves, ru.Groups, ru.Outputs, ms(time.Since(t2)))
	return &diffOutput{diff: d, stats: stats}, nil
}

func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// workDir is the working directory inside the repository, against which the loader resolves
// relative people files (as a run in that directory would): the process's when it is inside
// the work tree, else the config file's directory.
func workDir(repo *gitfs.Repo) string {
	wd, err := os.Getwd()
	if err != nil {
		return repo.Prefix()
	}
	realWD, err1 := filepath.EvalSymlinks(wd)
	realTop, err2 := filepath.EvalSymlinks(repo.Top())
	if err1 != nil || err2 != nil {
		return repo.Prefix()
	}
	rel, err := filepath.Rel(realTop, realWD)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return repo.Prefix()
	}
	return filepath.ToSlash(rel)
}

// revision is a base revision and how to name it.
type revision struct{ rev, desc string }

// revisions works out the base and head revisions: --base A...B is the merge-base of A and B
// against B (unless --head is given), as `git diff A...B`; --merge-base compares against the
// merge-base of --base and the head (HEAD when the head is the work tree).
func revisions(ctx context.Context, repo *gitfs.Repo, in diffInput) (revision, string, error) {
	base, head := revision{rev: in.base, desc: in.base}, in.head
	a, b, threeDots := strings.Cut(in.base, "...")
	if threeDots {
		a, b = cmp.Or(a, "HEAD"), cmp.Or(b, "HEAD")
		if head == "" {
			head = b
		}
	} else if in.mergeBase {
		b = cmp.Or(head, "HEAD")
	}
	if threeDots || in.mergeBase {
		mb, err := repo.MergeBase(ctx, a, b)
		if err != nil {
			return revision{}, "", &diffError{code: exitError, err: fmt.Errorf("--base: %w", err)}
		}
		base = revision{rev: mb, desc: fmt.Sprintf("%s (the merge-base of %s and %s)", mb, a, b)}
	}
	return base, head, nil
}

// compareConfigs reports what the head changes in the configuration file. Both sides are
// read as the loader reads them (size cap, symlink confinement) and, when they differ,
// parsed without the environment and compared; nil when the files are the same.
func compareConfigs(name, cfgPath string, base, head fs.FS, opt calc.Options) *review.ConfigDiff {
	read := func(fsys fs.FS) ([]byte, error) {
		so := safefile.Options{MaxSize: opt.MaxFileSize}
		if !opt.AllowSymlinksOutside {
			so.Roots = []string{path.Dir(cfgPath)}
		}
		return vfs.Mount(fsys, "").ReadFile(cfgPath, so)
	}
	bd, berr := read(base)
	hd, herr := read(head)
	if berr == nil && herr == nil && string(bd) == string(hd) {
		return nil
	}
	d := &review.ConfigDiff{File: name}
	if herr != nil {
		d.Errors = append(d.Errors, fmt.Sprintf("the head's %s cannot be read: %s", name, safefile.Reason(herr)))
		return d
	}
	envFree := opt
	envFree.Config, envFree.Getenv, envFree.OnWarning = nil, review.PlaceholderEnv, func(validate.Warning) {}
	load := func(side string, fsys fs.FS) *config.Config {
		o := envFree
		o.FS = fsys
		cfg, err := calc.LoadConfig(cfgPath, o)
		if err != nil {
			d.Errors = append(d.Errors, fmt.Sprintf("the %s's %s does not load (read without the environment):", side, name))
			var list validate.List
			if errors.As(err, &list) {
				for _, e := range list {
					d.Errors = append(d.Errors, e.Error())
				}
			} else {
				d.Errors = append(d.Errors, err.Error())
			}
		}
		return cfg
	}
	bc, hc := load("base", base), load("head", head)
	if bc != nil && hc != nil {
		d.Changes = review.CompareConfig(bc, hc)
	}
	if !d.Changed() {
		// Only comments, formatting or ordering differ.
		return nil
	}
	return d
}

// dataUse records which data from outside the repository the calculations read.
type dataUse struct {
	people, ldapGroups atomic.Bool
}

// record wraps the readers of outside data in opt to record their use.
func (u *dataUse) record(opt calc.Options) calc.Options {
	if p := opt.People; p != nil {
		opt.People = func(ctx context.Context, src *config.PeopleSource) ([]people.Person, error) {
			u.people.Store(true)
			return p(ctx, src)
		}
	}
	if opt.LDAPGroups != nil {
		opt.LDAPGroups = recordingReader{opt.LDAPGroups, &u.ldapGroups}
	} else if f := opt.LDAPGroupsFor; f != nil {
		opt.LDAPGroupsFor = func(cfg *config.Config) (calc.LDAPGroupReader, error) {
			rd, err := f(cfg)
			if rd == nil || err != nil {
				return rd, err
			}
			return recordingReader{rd, &u.ldapGroups}, nil
		}
	}
	return opt
}

// sources says where the outside data came from, for the output.
func (u *dataUse) sources(cfg *config.Config, snapshot string) []string {
	var out []string
	if u.people.Load() {
		src := cfg.People[cfg.PeopleDataSource]
		out = append(out, fmt.Sprintf("people: read from the people source %q (type %s) with the base revision's settings, the same for both revisions",
			src.Name, src.Type))
	}
	if u.ldapGroups.Load() {
		if snapshot != "" {
			out = append(out, fmt.Sprintf("LDAP groups (ldap_group rules, MemberOfLDAPGroup filters): from the snapshot %s (--ldap-groups), the same for both revisions", snapshot))
		} else {
			out = append(out, "LDAP groups (ldap_group rules, MemberOfLDAPGroup filters): read from LDAP with the base revision's ldap_group settings, the same for both revisions")
		}
	}
	return out
}

type recordingReader struct {
	calc.LDAPGroupReader
	used *atomic.Bool
}

func (r recordingReader) ReadLDAPGroups(ctx context.Context, dns []string) (map[string]*calc.LDAPGroup, error) {
	r.used.Store(true)
	return r.LDAPGroupReader.ReadLDAPGroups(ctx, dns)
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

// load loads and calculates the side.
func (s *diffSide) load(ctx context.Context, cfg string, opt calc.Options) error {
	repo, err := calc.LoadFS(ctx, s.fsys, cfg, opt)
	if err != nil {
		return &diffError{code: exitError, what: s.desc + " does not load", err: err}
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		return &diffError{code: exitError, what: s.desc + " does not calculate", err: err}
	}
	s.repo, s.res = repo, res
	return nil
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
