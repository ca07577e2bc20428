// Command entitlements-bench is the benchmark harness of entitlements-go. It generates a
// production-shaped synthetic repo and times the engine on it, so that every speed claim of
// the README comes with a command anyone can rerun:
//
//	go run ./cmd/entitlements-bench [--people N] [--dir DIR] [--seed N] [--floor RUNS] [--diff RUNS] [--cli PATH]
//	go run -tags aad ./cmd/entitlements-bench --e2e [--people N] [--latency D] [--format text|json] [--dir DIR] [--changes N]
//	go run ./cmd/entitlements-bench --apply [--people N] [--changes N] [--kill-at X] [--format text|json] [--dir DIR]
//
// It is a command of its own, not a subcommand of entitlements, because it starts slapd and
// fake GitHub and Graph servers: the shipped CLI links none of that.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/entitlements-go/entitlements/validate"
)

func main() {
	// SIGTERM unwinds like Ctrl-C: the servers the benchmark started are stopped and its
	// temporary directory is removed.
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

// exit codes, as entitlements': 0 done, 1 the generation or a measured run failed, 2 usage.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run dispatches on --e2e and --apply: the end-to-end plan benchmark and the large-apply
// benchmark have flags of their own.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "--" {
			break
		}
		switch a {
		case "--e2e", "-e2e", "--e2e=true", "-e2e=true":
			return cmdE2E(ctx, args, stdout, stderr)
		case "--apply", "-apply", "--apply=true", "-apply=true":
			return cmdApplyBench(ctx, args, stdout, stderr)
		}
	}
	return cmdPhases(ctx, args, stdout, stderr)
}

// commandDoc is the help of one mode, in entitlements' help layout: what it does, how it is
// called, an example.
type commandDoc struct {
	summary, synopsis, example string
}

var commandDocs = map[string]commandDoc{
	"entitlements-bench": {"generate a synthetic repo and time load, validate and calculate (--e2e: the end-to-end plan benchmark; --apply: the large-apply benchmark)",
		"entitlements-bench [--people N] [--dir DIR] [--seed N] [--floor RUNS] [--diff RUNS] [--cli PATH] | --e2e [flags] | --apply [flags]",
		"go run ./cmd/entitlements-bench --people 50000 --floor 3 --diff 3"},
	"entitlements-bench --e2e": {"end-to-end plan benchmark: apply a synthetic repo to local LDAP, GitHub and Graph servers, then time the CLI's plan cold, predictive and after a change",
		"entitlements-bench --e2e [--people N] [--latency DURATION] [--format text|json] [--dir DIR] [--changes N] [--cpuprofile-dir DIR]",
		"go run -tags aad ./cmd/entitlements-bench --e2e --people 2000 --latency 50ms --format json"},
	"entitlements-bench --apply": {"large-apply benchmark: apply --changes membership changes per service to fakes that enforce the write limits, " +
		"with the write budgets at their defaults, on a simulated clock; stop the apply mid-way, resume it from its journal, plan again; " +
		"print the estimate against the simulated duration, requests, limit answers and whether the targets converged " +
		"(GitHub teams; Azure AD groups too when built with -tags aad)",
		"entitlements-bench --apply [--people N] [--changes N] [--kill-at X] [--budget-state=false] [--format text|json] [--dir DIR] [--seed N]",
		"go run ./cmd/entitlements-bench --apply --people 5000 --changes 2000 --format json"},
}

// usageFor is a FlagSet's -h output: what the mode does, the usage line, the flags, an example.
func usageFor(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		d := commandDocs[fs.Name()]
		fmt.Fprintf(w, "%s: %s\n\nusage: %s\n\nflags:\n", fs.Name(), d.summary, d.synopsis)
		fs.PrintDefaults()
		fmt.Fprintf(w, "\nexample:\n  %s\n", d.example)
	}
}

// parseFlags parses args; help that was asked for (-h, --help) goes to stdout with exit 0, a
// usage error to stderr with exit 2. ok is false when the caller should return code.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.Usage = usageFor(fs)
	if wantsHelp(args) {
		fs.SetOutput(stdout)
		fs.Usage()
		return exitOK, false
	}
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return exitUsage, false
	}
	return exitOK, true
}

// wantsHelp reports whether the arguments ask for help (-h, -help, --help before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printErr prints a load or calculation error as entitlements does: every validation error on
// a line of its own, then their count.
func printErr(stderr io.Writer, err error) {
	var list validate.List
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(stderr, e.Error())
		}
		fmt.Fprintf(stderr, "%d error(s)\n", len(list))
		return
	}
	fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
}
