package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/drift"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/review"
)

// driftFlags are the flags of drift: the calculating ones, and its own.
type driftFlags struct {
	common
	format   string
	stateDir string
	detailed bool
}

func cmdDrift(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return driftExt(ctx, args, stdout, stderr, &cmdExt{})
}

// noLastApplied says what drift needs and how to give it.
const noLastApplied = "the last applied state is unknown, so drift cannot be known: set " + predictiveEnv +
	" to the predictive state directory (the checkout of the GitRepo audit log, as apply leaves it, works as it is)"

// driftExt is drift with provider settings from ext (tests serve the targets from memory).
func driftExt(ctx context.Context, args []string, stdout, stderr io.Writer, ext *cmdExt) int {
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	var df driftFlags
	df.common.register(fs)
	fs.StringVar(&df.format, "format", "text", "output format: text, json or markdown (for an alerting issue)")
	fs.StringVar(&df.stateDir, "state-dir", "", "state `DIR` of the change cursors plan and apply keep between runs (must be a directory)")
	fs.BoolVar(&df.detailed, "detailed-exitcode", false, "exit 0 when there is no drift, 2 when there is, 1 on error")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if df.format != "text" && df.format != "json" && df.format != "markdown" {
		fmt.Fprintf(stderr, "entitlements drift: unknown --format %q (text, json, markdown)\n", df.format)
		return exitUsage
	}
	if df.stateDir != "" {
		// The change cursors kept there let a provider ask its service what changed since the
		// last run instead of reading every group, which makes this read cheap; without
		// them every target is read whole, which gives the same report.
		if fi, err := os.Stat(df.stateDir); err != nil || !fi.IsDir() {
			termsafe.Fprintf(stderr, "entitlements drift: --state-dir %s is not a directory\n", df.stateDir)
			return exitUsage
		}
	}
	// The last applied state is read here, before anything else, and only here: the
	// providers must read every group from their services (full), since one that trusted
	// this state would hide exactly the drift looked for.
	df.full = true
	dir := os.Getenv(predictiveEnv)
	if dir == "" {
		fmt.Fprintf(stderr, "entitlements drift: %s\n", noLastApplied)
		return exitError
	}
	last, err := cache.LoadPredictive(dir)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements drift: %v\n", err)
		return exitError
	}
	s := newSession(&df.common)
	s.ext = *ext
	defer s.close()
	prog := newProgress(stderr)
	prog.begin("calculating")
	repo, res, code := calculate(ctx, s, prog.wrap(stderr))
	prog.end()
	if res == nil {
		return code
	}
	reg, err := targetBackends("", s)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements drift: %v\n", err)
		return exitError
	}
	opt := drift.Options{Backends: reg, LastApplied: last}
	if df.verbose {
		opt.Logger = s.logger
	}
	if prog != nil {
		opt.Progress = prog.target
	}
	prog.begin("reading targets")
	rep, err := drift.Detect(ctx, repo, res, opt)
	prog.end()
	if errors.Is(err, drift.ErrNoLastApplied) {
		termsafe.Fprintf(stderr, "entitlements drift: %s: %v\n", dir, err)
		return exitError
	}
	if err != nil {
		fmt.Fprintf(stderr, "entitlements drift: %v\n", err)
		return exitError
	}
	switch df.format {
	case "json":
		err = review.WriteDriftJSON(stdout, rep)
	case "markdown":
		err = review.WriteDriftMarkdown(stdout, rep, review.MarkdownOptions{})
	default:
		review.WriteDriftText(stdout, rep, review.DriftTextOptions{Plan: review.PlanTextOptions{RefusalHint: overrideFlag, Verbose: df.verbose}})
	}
	if err != nil {
		fmt.Fprintf(stderr, "entitlements drift: writing output: %v\n", err)
		return exitError
	}
	if err := rep.Err(); err != nil {
		// The report says "unknown" of these targets; a run that could not compare every
		// target never exits as if it had found no drift.
		fmt.Fprintf(stderr, "entitlements drift: the drift of %d target(s) is unknown: %v\n", unknownTargets(rep), err)
		return exitError
	}
	if df.detailed && rep.Drifted() {
		return exitChanges
	}
	return exitOK
}

func unknownTargets(rep *drift.Report) int {
	n := 0
	for _, t := range rep.Targets {
		if t.Status == drift.Unknown {
			n++
		}
	}
	return n
}
