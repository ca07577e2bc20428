package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/entitlements-go/entitlements/guard"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
	"github.com/entitlements-go/entitlements/review"
)

type planFlags struct {
	common
	format     string
	state      string
	force      bool
	maxShare   float64
	maxDeleted int
	maxGroup   float64
	maxTotal   float64
	maxPeople  float64
}

func (p *planFlags) register(fs *flag.FlagSet) {
	p.common.register(fs)
	fs.StringVar(&p.format, "format", "text", "output format: text, json or markdown")
	fs.BoolVar(&p.full, "full", false, "read every group from its provider, ignoring the predictive state of ENTITLEMENTS_PREDICTIVE_STATE_DIR")
	fs.StringVar(&p.state, "state", "", "plan against an in-memory fake provider seeded from this state file (canonical calc JSON) instead of the real systems")
	fs.BoolVar(&p.force, "force", false, "disable the removal guard for this run")
	g := guard.Default()
	fs.Float64Var(&p.maxShare, "max-removal-share", g.MaxRemovalShare, "refuse a target plan removing more than this share of its memberships")
	fs.IntVar(&p.maxDeleted, "max-deleted-groups", g.MaxDeletedGroups, "refuse a target plan deleting more groups than this")
	fs.Float64Var(&p.maxGroup, "max-group-removal-share", g.MaxGroupRemovalShare, "refuse a target plan removing more than this share of one group's members")
	fs.Float64Var(&p.maxPeople, "max-people-loss-share", g.MaxPeopleLossShare, "refuse the targets of a run when more than this share of the people holding memberships now are missing from the people data (0: the --max-removal-share value)")
	fs.Float64Var(&p.maxTotal, "max-total-removal-share", g.MaxTotalRemovalShare, "refuse the targets of a run that together remove more than this share of all memberships (0: the --max-removal-share value)")
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return planOrApply(ctx, "plan", args, stdout, stderr)
}

func cmdApply(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return planOrApply(ctx, "apply", args, stdout, stderr)
}

func planOrApply(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) int {
	return planOrApplyExt(ctx, mode, args, stdout, stderr, &cmdExt{})
}

// planOrApplyExt is plan and apply with provider settings from ext (the e2e benchmark runs
// the CLI's own plan this way); ext receives the predictive state the run loaded.
func planOrApplyExt(ctx context.Context, mode string, args []string, stdout, stderr io.Writer, ext *cmdExt) int {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	var pf planFlags
	pf.common.ext = *ext
	defer func() { *ext = pf.common.ext }()
	pf.register(fs)
	var rf reviewFlags
	rf.register(fs, mode)
	if !rf.parse(fs, mode, args, stderr) {
		return exitUsage
	}
	if pf.format != "text" && pf.format != "json" && pf.format != "markdown" {
		fmt.Fprintf(stderr, "entitlements %s: unknown --format %q (text, json, markdown)\n", mode, pf.format)
		return exitUsage
	}
	saved, err := rf.readSaved()
	if err != nil {
		fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
		return exitError
	}
	defer pf.stop()
	prog := newProgress(stderr)
	prog.begin("calculating")
	repo, res, code := calculate(ctx, &pf.common, prog.wrap(stderr))
	prog.end()
	if res == nil {
		return code
	}
	reg, err := targetBackends(pf.state, &pf.common)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
		return exitUsage
	}
	g := guard.Guard{MaxRemovalShare: pf.maxShare, MinRemovals: guard.Default().MinRemovals,
		MaxDeletedGroups: pf.maxDeleted, MaxGroupRemovalShare: pf.maxGroup, MaxTotalRemovalShare: pf.maxTotal,
		MaxPeopleLossShare: pf.maxPeople}
	opt := deploy.Options{Backends: reg, Guard: &g, Force: pf.force,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	if prog != nil {
		opt.Progress = prog.target
	}
	prog.begin("reading targets")
	plan, err := deploy.Build(ctx, res, repo.Config(), opt)
	prog.end()
	if err != nil {
		fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
		return exitError
	}
	if saved != nil {
		if err := plan.Restrict(saved, deploy.InputsOf(repo)); err != nil {
			// Not the plan that was reviewed: nothing of it is applied, and the auditors
			// are never set up (they would record targets that were not applied).
			fmt.Fprintf(stderr, "entitlements %s: %s: %v\n", mode, rf.planFile, err)
			return exitError
		}
	}
	if err := writePlan(stdout, pf.format, plan); err != nil {
		fmt.Fprintf(stderr, "entitlements %s: writing output: %v\n", mode, err)
		return exitError
	}
	if pf.format == "text" {
		writePredictiveLine(stdout, &pf.common)
	}
	if err := rf.writeSaved(ctx, plan, repo); err != nil {
		fmt.Fprintf(stderr, "entitlements %s: writing plan file: %v\n", mode, err)
		return exitError
	}
	failed := plan.Err() != nil
	if mode == "apply" && saved == nil && !rf.yes {
		in, tty := stdinTerminal()
		if err := confirm(plan, in, tty, stderr); err != nil {
			fmt.Fprintf(stderr, "\nentitlements apply: %v\n", err)
			return exitError
		}
	}
	var auditErr error
	if mode == "apply" {
		var rep *deploy.Report
		rep, auditErr = auditedApply(ctx, repo.Config(), res, plan, opt, opt.Logger, stderr)
		if rep != nil {
			review.WriteReport(stdout, rep)
			failed = failed || rep.Err() != nil
		}
	}
	if failed || auditErr != nil {
		if err := plan.Err(); err != nil {
			fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
			if hint := guardHint(plan); hint != "" {
				fmt.Fprintf(stderr, "entitlements %s: %s\n", mode, hint)
			}
		}
		if auditErr != nil {
			fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, auditErr)
		}
		return exitError
	}
	if n, _ := pendingChanges(plan); rf.detailed && n > 0 {
		return exitChanges
	}
	return exitOK
}

// targetBackends is the registry of backends whose providers plan and apply. With a state
// file every target type is served by one fake provider, so the bundled example plans with no
// servers at all.
func targetBackends(state string, c *common) (*backend.Registry, error) {
	if state != "" {
		fp, err := fake.LoadState(state)
		if err != nil {
			return nil, err
		}
		return backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil }), nil
	}
	return realBackends(c)
}

// jsonFormatVersion is the version of the JSON documents the CLI prints (plan, explain). It
// changes when a key changes meaning or disappears; new keys do not change it.
const jsonFormatVersion = review.PlanJSONVersion

// overrideFlag names the flag that lifts the limit a guard refusal hit (the library's error
// knows nothing of flags).
func overrideFlag(err error) string {
	var ge *guard.Error
	if !errors.As(err, &ge) {
		return ""
	}
	flag := map[guard.Limit]string{
		guard.LimitShare:   "--max-removal-share",
		guard.LimitDeleted: "--max-deleted-groups",
		guard.LimitGroup:   "--max-group-removal-share",
		guard.LimitTotal:   "--max-total-removal-share",
		guard.LimitPeople:  "--max-people-loss-share",
	}[ge.Limit]
	if flag == "" {
		return "override with --force"
	}
	return "override with " + flag + " or --force"
}

// guardHint is one line naming the flags for every refusal of the plan.
func guardHint(plan *deploy.Plan) string {
	seen := map[string]bool{}
	var hints []string
	for _, t := range plan.Targets {
		if h := overrideFlag(t.Err); h != "" && !seen[h] {
			seen[h] = true
			hints = append(hints, h)
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return "refused by the removal guard: " + strings.Join(hints, "; ")
}
