// Command entitlements is the reference deployment tool of entitlements-go: it validates an
// entitlements config repo, calculates every group, explains memberships and (with providers)
// plans and applies changes.
//
//	entitlements calc     --config PATH [--now YYYY-MM-DD] [--ldap-groups FILE] [--format json]
//	entitlements validate --config PATH [--now YYYY-MM-DD] [--ldap-groups FILE] [--strict]
//	entitlements explain  --config PATH --group OU/CN --person UID [--now ...] [--format json]
//	entitlements plan     --config PATH [--state FILE] [--format text|json|markdown] [--out PLANFILE] [--detailed-exitcode]
//	entitlements apply    --config PATH [--state FILE] [--yes] [PLANFILE]
//	entitlements apply    PLANFILE [--allow-partial]
//	entitlements show     PLANFILE [--format text|json|markdown]
//	entitlements diff     --config PATH --base REV|A...B [--head REV] [--merge-base] [--format text|json|markdown] [--out-full FILE] [--detailed-exitcode]
//
// The benchmarks are a command of their own, cmd/entitlements-bench, so that this binary links
// none of their servers and fakes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/suggest"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/providers/ldap/ldapcalc"
	"github.com/entitlements-go/entitlements/validate"
)

func main() {
	// SIGTERM is what CI cancellations and service managers send: it must unwind like Ctrl-C
	// (the auditor removes its key, git and ssh are ended), not kill the process where it stands.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one ends the process at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage: entitlements <command> [flags]

commands:
  calc      calculate every group and print the canonical JSON
  validate  load and validate a config repo; print every error found
  explain   explain why a person is (or is not) in a group
  plan      show the changes that would bring every target in step (writes nothing)
  apply     make those changes (asks first on a terminal; --yes, or a saved plan file)
  show      print a saved plan file (text, json or markdown) and how it was made
  diff      who gains or loses which access between two git revisions, and why
  doctor    check each target's credential, permissions, rate limits and clock (writes nothing)
  drift     what was changed on the targets outside the tool since the last apply (writes nothing)
  graph     print the dependency graph of groups (dot or mermaid)
  version   print the version of this binary (also --version)

run "entitlements <command> -h" (or "entitlements help <command>") for what a command does,
its usage, flags and an example; the benchmarks are a command of their own:
  ` + benchMoved + `
`

// benchMoved says where the benchmarks went (entitlements bench until issue 21).
const benchMoved = "go run ./cmd/entitlements-bench -h"

// exit codes
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitStopped: apply stopped before its end (interrupted, a run budget ran out); with a
	// plan file, apply --resume PLANFILE continues it.
	exitStopped = 3
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// Messages on stderr quote names, uids, DNs and errors from the repo and the targets:
	// their control and bidi characters are shown as escapes. stdout carries documents
	// (text, JSON, Markdown, graphs), whose renderers escape by format.
	if _, ok := stderr.(*termsafe.Writer); !ok {
		stderr = termsafe.NewWriter(stderr)
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	if wantsHelp(rest) && ctx.Value(helpMode{}) == nil {
		return helpFor(stdout, stderr, func(o, e io.Writer) int { return run(context.WithValue(ctx, helpMode{}, true), args, o, e) })
	}
	switch cmd {
	case "version", "--version", "-version":
		if !parseFlags(flag.NewFlagSet("version", flag.ContinueOnError), rest, stderr) {
			return exitUsage
		}
		fmt.Fprintln(stdout, versionString())
		return exitOK
	case "graph":
		return cmdGraph(ctx, rest, stdout, stderr)
	case "calc":
		return cmdCalc(ctx, rest, stdout, stderr)
	case "validate":
		return cmdValidate(ctx, rest, stdout, stderr)
	case "explain":
		return cmdExplain(ctx, rest, stdout, stderr)
	case "plan":
		return cmdPlan(ctx, rest, stdout, stderr)
	case "apply":
		return cmdApply(ctx, rest, stdout, stderr)
	case "diff":
		return cmdDiff(ctx, rest, stdout, stderr)
	case "show":
		return cmdShow(ctx, rest, stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, rest, stdout, stderr)
	case "drift":
		return cmdDrift(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		if len(rest) > 0 {
			return run(ctx, []string{rest[0], "-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	hint := ""
	if s := suggest.Closest(cmd, commandNames); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	if cmd == "bench" {
		hint = "; the benchmarks are a command of their own: " + benchMoved
	}
	fmt.Fprintf(stderr, "entitlements: unknown command %q%s\n\n%s", cmd, hint, usage)
	return exitUsage
}

// commandNames yields the commands listed in usage, so that the suggestion for a mistyped
// command can never name one the help does not.
func commandNames(yield func(string) bool) {
	_, list, _ := strings.Cut(usage, "commands:\n")
	for line := range strings.Lines(list) {
		if !strings.HasPrefix(line, "  ") {
			return
		}
		if f := strings.Fields(line); len(f) > 0 && !yield(f[0]) {
			return
		}
	}
}

// common holds the flags every calculating command shares: parsed values only. What a run
// opens from them is its session's.
type common struct {
	config     string
	now        string
	ldapGroups string
	strict     bool
	ignoreExp  bool
	verbose    bool
	cpuprofile string
	memprofile string
	warnErrors bool
	// allowEmptyPeople accepts a people source that yields nobody.
	allowEmptyPeople bool
	// allowOutside lets group files be symlinks resolving outside the config tree.
	allowOutside bool
	// full ignores the predictive state (plan and apply).
	full bool
	// readsTargets is set by plan and apply against the real systems (not --state): only they
	// load the predictive state.
	readsTargets bool
}

// session is what one run of a calculating command opens from its flags: the logger, the
// warning count, the CPU profile, the backends with their connection pools and the
// predictive state they share. Commands make one once their flags are checked, and defer
// its close.
type session struct {
	flags    *common
	warnings *warningPrinter
	logger   *slog.Logger
	// stopProfile flushes the CPU profile.
	stopProfile func()
	backends    *backends.Set
	aad         closer
	// The predictive state, loaded once per run (predictiveState).
	predLoaded bool
	pred       *cache.Predictive
	predErr    error
	ext        cmdExt
}

type closer interface{ Close() }

func newSession(c *common) *session { return &session{flags: c} }

func (s *session) close() {
	if s.stopProfile != nil {
		s.stopProfile()
	}
	if s.flags.memprofile != "" {
		// The allocation profile: where the run allocated (alloc_space, alloc_objects), the
		// figures that decide its garbage collection and page faults.
		if f, err := os.Create(s.flags.memprofile); err == nil {
			runtime.GC() // the profile is as of the last collection: include the whole run
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	if s.backends != nil {
		s.backends.Close()
	}
	if s.aad != nil {
		s.aad.Close()
	}
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "`PATH` of the entitlements config file (entitlements.yaml)")
	fs.StringVar(&c.now, "now", "", "today's date for expirations, `YYYY-MM-DD` (default: the current UTC date)")
	fs.StringVar(&c.ldapGroups, "ldap-groups", "", "YAML snapshot `FILE` of LDAP groups for ldap_group rules and LDAP filters (offline)")
	fs.BoolVar(&c.strict, "strict", false, "also validate files that nothing uses, and fail on usernames, managers and filter entries that name nobody")
	fs.BoolVar(&c.ignoreExp, "ignore-expirations", false, "treat nothing as expired")
	fs.BoolVar(&c.verbose, "v", false, "verbose: debug log and one line per write on stderr, timings and request counters in plan and apply output")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile (pprof) of the run to `FILE`")
	fs.StringVar(&c.memprofile, "memprofile", "", "write an allocation profile (pprof: where the run allocated) to `FILE`")
	fs.BoolVar(&c.warnErrors, "warnings-as-errors", false, "exit 1 when loading produced any warning")
	fs.BoolVar(&c.allowOutside, "allow-symlinks-outside", false, "read group files, people data, manager map and config that are symlinks resolving outside the config tree (refused by default)")
	fs.BoolVar(&c.allowEmptyPeople, "allow-empty-people", false, "accept a people source that yields no people (by default the run fails: every group would lose every member)")
}

func (s *session) options(stderr io.Writer) (calc.Options, error) {
	c := s.flags
	if c.config == "" {
		return calc.Options{}, errors.New("--config is required")
	}
	level := slog.LevelWarn
	if c.verbose {
		level = slog.LevelDebug
	}
	s.logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	s.warnings = &warningPrinter{w: stderr}
	opt := calc.Options{
		Strict:               c.strict,
		IgnoreExpirations:    c.ignoreExp,
		AllowEmptyPeople:     c.allowEmptyPeople,
		AllowSymlinksOutside: c.allowOutside,
		Logger:               s.logger,
		OnWarning:            s.warnings.print,
		Types:                backends.Types(),
	}
	if c.now != "" {
		t, err := validate.ParseNow(c.now)
		if err != nil {
			return opt, fmt.Errorf("--now: %w", err)
		}
		opt.Now = t
	}
	if c.ldapGroups != "" {
		snap, err := calc.LoadLDAPSnapshot(c.ldapGroups)
		if err != nil {
			return opt, err
		}
		opt.LDAPGroups = snap
	}
	// LDAP people sources and ldap_group rules read the directory through the same
	// connection pools that the LDAP provider uses for plan and apply.
	if err := s.openBackends(); err != nil {
		return opt, err
	}
	return ldapcalc.Options(s.backends.LDAP(), opt), nil
}

func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) bool {
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs)
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return false
	}
	return true
}

// load runs Load and prints errors; ok is false when the caller should exit non-zero.
func load(ctx context.Context, s *session, stderr io.Writer) (*calc.Repo, int) {
	c := s.flags
	opt, err := s.options(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements: %v\n", err)
		return nil, exitUsage
	}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "entitlements: %v\n", err)
			return nil, exitUsage
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "entitlements: %v\n", err)
			return nil, exitUsage
		}
		s.stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
	}
	repo, err := calc.Load(ctx, c.config, opt)
	if err != nil {
		printErr(stderr, err)
		return nil, exitError
	}
	if c.warnErrors && s.warnings.count > 0 {
		fmt.Fprintf(stderr, "%d warning(s), treated as errors (--warnings-as-errors)\n", s.warnings.count)
		return nil, exitError
	}
	return repo, exitOK
}

// calculate loads and calculates; res is nil when the caller should exit with code.
func calculate(ctx context.Context, s *session, stderr io.Writer) (*calc.Repo, *calc.Result, int) {
	repo, code := load(ctx, s, stderr)
	if repo == nil {
		return nil, nil, code
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		printErr(stderr, err)
		return nil, nil, exitError
	}
	return repo, res, exitOK
}

func printErr(stderr io.Writer, err error) {
	var list validate.List
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(stderr, e.Error())
		}
		fmt.Fprintf(stderr, "%d error(s)\n", len(list))
		if errors.Is(err, calc.ErrNoPeople) {
			fmt.Fprintln(stderr, "(pass --allow-empty-people if an empty people source is intended)")
		}
		return
	}
	fmt.Fprintf(stderr, "entitlements: %v\n", err)
}

func cmdCalc(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calc", flag.ContinueOnError)
	var c common
	c.register(fs)
	format := fs.String("format", "json", "output format: json")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *format != "json" {
		fmt.Fprintf(stderr, "entitlements calc: unknown --format %q (json)\n", *format)
		return exitUsage
	}
	s := newSession(&c)
	defer s.close()
	_, res, code := calculate(ctx, s, stderr)
	if res == nil {
		return code
	}
	if err := res.WriteJSON(stdout); err != nil {
		fmt.Fprintf(stderr, "entitlements calc: writing output: %v\n", err)
		return exitError
	}
	if c.verbose {
		t := res.Timings
		fmt.Fprintf(stderr, "groups=%d load=%s validate=%s calculate=%s\n", len(res.Groups),
			t.Load.Round(time.Microsecond), t.Validate.Round(time.Microsecond), t.Calculate.Round(time.Microsecond))
	}
	return exitOK
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var c common
	c.register(fs)
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	s := newSession(&c)
	defer s.close()
	repo, code := load(ctx, s, stderr)
	if repo == nil {
		return code
	}
	fmt.Fprintf(stdout, "%s: OK\n", c.config)
	return exitOK
}
