package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/guard"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/journal"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/review"
	"github.com/entitlements-go/entitlements/runner"
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
	maxApply   time.Duration
}

func (p *planFlags) register(fs *flag.FlagSet) {
	p.common.register(fs)
	fs.StringVar(&p.format, "format", "text", "output format: text, json or markdown")
	fs.BoolVar(&p.full, "full", false, "read every group from its provider, ignoring the predictive state of ENTITLEMENTS_PREDICTIVE_STATE_DIR")
	fs.StringVar(&p.state, "state", "", "simulate: plan and apply against an in-memory copy of the state `FILE` (canonical calc JSON) instead of the real systems; writes nothing, never audits")
	fs.BoolVar(&p.force, "force", false, "disable the removal guard for this run")
	g := guard.Default()
	fs.Float64Var(&p.maxShare, "max-removal-share", g.MaxRemovalShare, "refuse a target plan removing more than this share of its memberships")
	fs.IntVar(&p.maxDeleted, "max-deleted-groups", g.MaxDeletedGroups, "refuse a target plan deleting more groups than this")
	fs.Float64Var(&p.maxGroup, "max-group-removal-share", g.MaxGroupRemovalShare, "refuse a target plan removing more than this share of one group's members")
	fs.Float64Var(&p.maxPeople, "max-people-loss-share", g.MaxPeopleLossShare, "refuse the targets of a run when more than this share of the people holding memberships now are missing from the people data (0: the --max-removal-share value)")
	fs.DurationVar(&p.maxApply, "max-apply-duration", 0, "refuse a plan whose estimated apply duration (from the services' write budgets) exceeds `D`, e.g. 2h, so that a pipeline can split it (0: no limit)")
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

// planOrApplyExt is plan and apply with what tests inject (ext).
func planOrApplyExt(ctx context.Context, mode string, args []string, stdout, stderr io.Writer, ext *cmdExt) int {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	var pf planFlags
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
	if saved != nil {
		// The plan file says how it was made: apply runs the same way.
		if err := useSettings(ctx, fs, rf.planFile, saved.Settings); err != nil {
			for _, l := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(stderr, "entitlements %s: %s\n", mode, l)
			}
			return exitUsage
		}
	}
	if rf.out != "" {
		pinNow(fs)
	}
	// A run against a --state file is a simulation: it writes nothing but the in-memory
	// copy of the file, never an audit log or a state directory, and says so first and last.
	// The note goes where it cannot break a parseable document: stdout for text, stderr for
	// json and markdown.
	pf.readsTargets = pf.state == ""
	if !pf.readsTargets {
		note := stdout
		if pf.format != "text" {
			note = stderr
		}
		fmt.Fprintln(note, simulatedNote)
		defer fmt.Fprintln(note, simulatedNote)
	}
	// apply PLANFILE journals its writes so that a stopped run can be resumed; a simulation
	// writes no file, so it has no journal and nothing to resume.
	journaled := mode == "apply" && saved != nil && pf.readsTargets
	if rf.resume && !journaled {
		fmt.Fprintf(stderr, "entitlements %s: --resume: %s is a simulated plan (--state): it keeps no journal, apply it again instead\n", mode, rf.planFile)
		return exitUsage
	}
	if journaled && rf.resume {
		if _, err := os.Lstat(rf.journalPath()); errors.Is(err, os.ErrNotExist) {
			termsafe.Fprintf(stderr, "entitlements %s: --resume: no journal %s: no apply of %s ran here to resume (apply %s without --resume starts one; --journal names another journal)\n",
				mode, rf.journalPath(), rf.planFile, rf.planFile)
			return exitError
		}
	}
	if journaled && !rf.resume {
		if _, err := os.Lstat(rf.journalPath()); err == nil {
			fmt.Fprintf(stderr, "entitlements %s: %s\n", mode, journalExists(&rf))
			return exitError
		}
	}
	s := newSession(&pf.common)
	s.ext = *ext
	defer s.close()
	prog := newProgress(stderr)
	prog.begin("calculating")
	repo, res, code := calculate(ctx, s, prog.wrap(stderr))
	prog.end()
	if res == nil {
		return code
	}
	reg, err := targetBackends(pf.state, s)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
		return exitUsage
	}
	g := guard.Guard{MaxRemovalShare: pf.maxShare, MinRemovals: guard.Default().MinRemovals,
		MaxDeletedGroups: pf.maxDeleted, MaxGroupRemovalShare: pf.maxGroup, MaxTotalRemovalShare: pf.maxTotal,
		MaxPeopleLossShare: pf.maxPeople}
	// One log line per write only with -v: the report says what was written, and every
	// failure, once. The auditors' warnings are always shown.
	opt := runner.Options{Backends: reg, Simulated: !pf.readsTargets, Saved: saved, AllowPartial: rf.allowPartial,
		Guard: &g, Force: pf.force, Audit: audit.Options{Logger: s.logger}}
	if journaled {
		opt.Journal, opt.Resume = rf.journalPath(), rf.resume
	}
	if pf.verbose {
		opt.Logger = s.logger
	}
	if prog != nil {
		opt.Progress = prog.target
	}
	prog.begin("reading targets")
	plan, err := runner.Plan(ctx, repo, res, opt)
	prog.end()
	if errors.Is(err, runner.ErrNotWhole) {
		// Show why: the plan with every target's error.
		writePlan(stdout, pf.format, plan, pf.verbose)
		fmt.Fprintf(stderr, "entitlements %s: %s: nothing was applied: %v (--allow-partial applies the targets that still match)\n",
			mode, rf.planFile, err)
		return exitError
	}
	if err != nil {
		if plan != nil && saved != nil {
			// Not the plan that was reviewed: nothing of it is applied, and the auditors
			// are never set up (they would record targets that were not applied).
			fmt.Fprintf(stderr, "entitlements %s: %s: %v\n", mode, rf.planFile, err)
		} else {
			fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
		}
		return exitError
	}
	if err := writePlan(stdout, pf.format, plan, pf.verbose); err != nil {
		fmt.Fprintf(stderr, "entitlements %s: writing output: %v\n", mode, err)
		return exitError
	}
	if pf.format == "text" {
		writeEstimates(stdout, plan)
		writePredictiveLine(stdout, s)
	}
	if d := plan.EstimatedDuration(); pf.maxApply > 0 && d > pf.maxApply {
		what := "nothing was applied"
		if mode == "plan" {
			what = "no plan file written"
		}
		fmt.Fprintf(stderr, "entitlements %s: the estimated apply duration, about %s, exceeds --max-apply-duration %s (%s); split the change into smaller ones\n",
			mode, d.Round(time.Second), pf.maxApply, what)
		return exitError
	}
	if rf.out != "" && plan.Err() != nil && !rf.allowPartial {
		// Applied, such a file would write only part of what the config says.
		fmt.Fprintf(stderr, "entitlements %s: plan file %s not written: %d target(s) failed or refused (--allow-partial writes it; applying it then writes the other targets only)\n",
			mode, rf.out, plan.FailedTargets())
	} else if err := rf.writeSaved(ctx, plan, repo, fs); err != nil {
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
	var out *runner.Outcome
	if mode == "apply" {
		out, auditErr = runner.Apply(ctx, repo, res, plan, opt)
		writeAuditRecords(stderr, out, auditErr)
		if out.Report != nil {
			review.WriteReport(stdout, out.Report, review.ReportOptions{Plan: plan, Verbose: pf.verbose})
			failed = failed || out.Err() != nil
			// GitHub's per-item refusals (a blocked user, an organization given as a member)
			// in one table, with what to do about each.
			if items := github.ItemErrors(out.Err()); len(items) > 0 {
				if err := github.WriteFailureSummary(termsafe.NewWriter(stderr), items); err != nil {
					fmt.Fprintf(stderr, "entitlements %s: writing the failure summary: %v\n", mode, err)
				}
			}
		}
		if errors.Is(auditErr, journal.ErrExists) {
			// Another apply created the journal since the check above.
			auditErr = errors.New(journalExists(&rf))
		}
		// The last line says how the run ended: done, stopped (resumable), failed.
		defer fmt.Fprintf(stdout, "Apply %s\n", out.Summary())
	}
	stopped := out != nil && out.Status == runner.Stopped && (auditErr == nil || isStop(auditErr))
	if stopped {
		if journaled {
			termsafe.Fprintf(stderr, "entitlements %s: stopped; continue with: entitlements apply --resume %s\n", mode, resumeArgs(&rf))
		}
		auditErr = nil // the context's error: the summary says it
	}
	if failed || auditErr != nil {
		if err := plan.Err(); err != nil {
			if pf.format == "text" {
				// The plan on stdout says why, with the flag that lifts a refusal.
				fmt.Fprintf(stderr, "entitlements %s: %s\n", mode, notWritten(plan))
			} else {
				fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
				if hint := guardHint(plan); hint != "" {
					fmt.Fprintf(stderr, "entitlements %s: %s\n", mode, hint)
				}
			}
		}
		if auditErr != nil {
			fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, auditErr)
		}
		if stopped {
			return exitStopped
		}
		return exitError
	}
	if n, _ := pendingChanges(plan); rf.detailed && n > 0 {
		return exitChanges
	}
	return exitOK
}

// writeEstimates prints what applying each target will cost, for the targets whose provider
// can say (the estimate comes from the services' documented write budgets).
func writeEstimates(w io.Writer, plan *deploy.Plan) {
	n := 0
	for _, t := range plan.Targets {
		if t.Estimate != nil && t.Estimate.Total() > 0 {
			termsafe.Fprintf(w, "Estimate: %s (%s): %s\n", t.OU, t.Type, t.Estimate.String())
			n++
		}
	}
	if n > 1 {
		fmt.Fprintf(w, "Estimated apply duration: about %s\n", plan.EstimatedDuration().Round(time.Second))
	}
}

// journalExists says that apply PLANFILE ran before: its journal is there to be resumed.
func journalExists(rf *reviewFlags) string {
	return fmt.Sprintf("journal %s exists: an apply of %s already ran; continue it with apply --resume %s (or remove the journal to apply the plan again from the start)",
		rf.journalPath(), rf.planFile, resumeArgs(rf))
}

// resumeArgs are the arguments of the apply that resumes this one.
func resumeArgs(rf *reviewFlags) string {
	if rf.journal != "" {
		return "--journal " + rf.journal + " " + rf.planFile
	}
	return rf.planFile
}

// isStop reports whether err says that the run was stopped (interrupted), not that it failed.
func isStop(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// notWritten names the targets of a plan that failed or were refused.
func notWritten(plan *deploy.Plan) string {
	var names []string
	for _, t := range plan.Targets {
		if t.Err != nil {
			names = append(names, t.OU)
		}
	}
	return fmt.Sprintf("%d target(s) failed or refused (see the plan), nothing written to them: %s", len(names), strings.Join(names, ", "))
}

// simulatedNote opens and closes the output of a run against a --state file.
const simulatedNote = "simulated: nothing was written"

// writeAuditRecords says what each auditor recorded; one that failed says nothing here (its
// error does), and "nothing to commit" is said only of a run whose auditors all succeeded.
func writeAuditRecords(w io.Writer, out *runner.Outcome, err error) {
	for _, r := range out.Audit {
		switch n := len(r.Commits); {
		case n > 0:
			termsafe.Fprintf(w, "audit log: %s: %d commit(s) pushed (%s)\n", r.Auditor, n, shortIDs(r.Commits))
		case err == nil:
			termsafe.Fprintf(w, "audit log: %s: nothing to commit (the log matched this run)\n", r.Auditor)
		}
	}
}

// shortIDs abbreviates commit ids for a message.
func shortIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[:min(len(id), 12)]
	}
	return strings.Join(out, ", ")
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
