// Package runner is a whole deployment run as a library: plan every target, hold the plan to
// a saved one when there is one, and apply it inside the auditors' lifecycle, in the order
// that keeps the audit log true to what was written:
//
//  1. Plan: read every target and compute its changes (deploy.Build), then, when a reviewed
//     plan file is applied, hold the fresh plan to it (deploy.Plan.Restrict): exactly those
//     changes, or a refusal.
//  2. Apply: set every auditor up before anything is written (a failure writes nothing),
//     apply (deploy.Apply), then commit every auditor even when applying failed or was
//     interrupted, so that the log says what was written before the interruption.
//
// A simulated run (providers that are not the real systems, such as the CLI's --state file)
// never runs auditors: their repositories are the predictive state of the next real run, and
// must not record writes that were never made.
//
// cmd/entitlements is this package plus flags, printing and exit codes.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/guard"
)

// Options configure a run. Zero fields take the documented defaults.
type Options struct {
	// Backends are the backend types with their providers (see package backends). Required.
	Backends *backend.Registry
	// Simulated says that the providers are not the real systems (a state file, a test): the
	// run writes to them only, never to an audit log. Default false.
	Simulated bool
	// Saved is a reviewed plan (plan --out): Plan holds the fresh plan to it, so that Apply
	// writes exactly what was reviewed or refuses. Default: none.
	Saved *deploy.SavedPlan
	// AllowPartial applies the targets of Saved that still match it when others do not.
	// Default false: a saved plan is applied whole or not at all (every target's state is
	// checked against the plan before the first write; see ErrNotWhole).
	AllowPartial bool
	// Guard is the removal guard. Default guard.Default(); Force switches it off.
	Guard *guard.Guard
	Force bool
	// ReadConcurrency bounds the targets read at once. Default 4.
	ReadConcurrency int
	// Progress, when set, is told how each target's read goes (deploy.Options.Progress).
	Progress func(deploy.Progress)
	// Logger receives one line per write and the auditors' warnings. Default: discard.
	Logger *slog.Logger
	// Audit configures the auditors (the git binary, the environment). Default: audit's.
	Audit audit.Options
	// Journal is the file where Apply records every write it starts and finishes (package
	// journal), so that a run that stops can be resumed. It needs Saved (a journal belongs to
	// one plan file) and must not exist unless Resume is set. Default: none.
	Journal string
	// Resume continues an apply of Saved that stopped, from its Journal: Plan holds the
	// fresh plan to Saved with deploy.Plan.Resume (targets may have moved, by the journal's
	// own writes only), and Apply appends to the journal. Default false.
	Resume bool
}

// ErrNotWhole is wrapped by the error of Plan, and by the error of every target that was
// not refused itself, when a saved plan cannot be applied whole (Options.AllowPartial).
var ErrNotWhole = errors.New("a saved plan is applied whole or not at all")

// ErrJournalNeedsPlan is returned when Options.Journal or Options.Resume is set without
// Options.Saved.
var ErrJournalNeedsPlan = errors.New("runner: a journal (Options.Journal, Options.Resume) needs a saved plan (Options.Saved)")

// ErrNoBackends is returned when Options.Backends is nil.
var ErrNoBackends = errors.New("runner: Options.Backends is required")

func (o Options) deploy() deploy.Options {
	return deploy.Options{Backends: o.Backends, Guard: o.Guard, Force: o.Force,
		ReadConcurrency: o.ReadConcurrency, Logger: o.Logger, Progress: o.Progress}
}

// Plan reads every target of the calculated repo and computes its changes; with
// Options.Saved, it holds them to the saved plan (targets whose state or changes moved since
// are refused, and a plan file whose targets are not the config's refuses the whole run with
// a *deploy.TargetsError). Unless Options.AllowPartial, a saved plan of which a target is
// refused or fails is not applied at all: every other target gets an error wrapping
// ErrNotWhole, and so does the returned error. Plan writes nothing.
func Plan(ctx context.Context, repo *calc.Repo, res *calc.Result, opt Options) (*deploy.Plan, error) {
	if opt.Backends == nil {
		return nil, ErrNoBackends
	}
	if (opt.Journal != "" || opt.Resume) && opt.Saved == nil {
		return nil, ErrJournalNeedsPlan
	}
	var started []deploy.Started
	if opt.Resume {
		log, err := readJournal(opt.Journal, opt.Saved.ID())
		if err != nil {
			return nil, err
		}
		started = startedOf(log)
	}
	plan, err := deploy.Build(ctx, res, repo.Config(), opt.deploy())
	if err != nil {
		return nil, err
	}
	if opt.Saved != nil {
		if opt.Resume {
			_, err = plan.Resume(opt.Saved, deploy.InputsOf(repo), started)
		} else {
			err = plan.Restrict(opt.Saved, deploy.InputsOf(repo))
		}
		if err != nil {
			return plan, err
		}
		if !opt.AllowPartial {
			if err := wholeOrNothing(plan); err != nil {
				return plan, err
			}
		}
	}
	return plan, nil
}

// wholeOrNothing gives every target of plan an error when one has an error.
func wholeOrNothing(plan *deploy.Plan) error {
	var failed []string
	for _, t := range plan.Targets {
		if t.Err != nil {
			failed = append(failed, t.OU)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	names := strings.Join(failed, ", ")
	for _, t := range plan.Targets {
		if t.Err == nil {
			t.Err = fmt.Errorf("not applied: %w, and %s cannot be", ErrNotWhole, names)
		}
	}
	return fmt.Errorf("%w: %s cannot be applied, so nothing of the plan is", ErrNotWhole, names)
}

// Outcome is what Apply did.
type Outcome struct {
	// Status says whether the plan is in place (Done), the run stopped before its end and
	// can be resumed (Stopped), or changes failed (Failed).
	Status Status
	// Planned is the number of changes of the plan (of the saved plan, when there is one,
	// including those of targets refused); Made those in place after the run, made by it or,
	// when resuming, by earlier runs (EarlierMade of them).
	Planned, Made, EarlierMade int
	// Run is the number of the apply in its journal (1 for the first, 0 without a journal).
	Run int
	// Report has the outcome of every change (nil when nothing was applied: the auditors
	// could not be set up).
	Report *deploy.Report
	// Audit has what each auditor recorded, in config order (none for a simulated run).
	Audit []AuditRecord
	// Simulated repeats Options.Simulated: nothing but the simulated providers was written.
	Simulated bool
}

// AuditRecord is what one auditor recorded: the commits it pushed (none when the log already
// matched the run).
type AuditRecord struct {
	Auditor string
	Commits []string
}

// Err is every failure of the run: the plan's refused or failed targets, and the changes
// that failed or may have failed.
func (o *Outcome) Err() error {
	if o == nil || o.Report == nil {
		return nil
	}
	return o.Report.Err()
}

// Apply writes the plan. The auditors of the config are set up first (a failure writes
// nothing and is returned), then every applicable change is written, then every auditor
// commits, also when a write failed or ctx ended. The error is the auditors' (setup or
// commit) or the context's; the outcome's Err has the providers' failures.
func Apply(ctx context.Context, repo *calc.Repo, res *calc.Result, plan *deploy.Plan, opt Options) (*Outcome, error) {
	out := &Outcome{Simulated: opt.Simulated}
	aopt := deploy.ApplyOptions{Logger: opt.Logger}
	if (opt.Journal != "" || opt.Resume) && opt.Saved == nil {
		return out, ErrJournalNeedsPlan
	}
	// Every return from here on has a status: the caller prints it.
	defer func() { out.settle(ctx, plan, opt.Saved) }()
	if opt.Journal != "" {
		w, err := openJournal(opt.Journal, opt.Saved.ID(), opt.Resume)
		if err != nil {
			return out, fmt.Errorf("%w (nothing was applied)", err)
		}
		defer w.Close()
		out.Run = w.Run()
		aopt.Journal = fileJournal{w}
	}
	if opt.Simulated {
		rep, err := deploy.Apply(ctx, plan, aopt)
		out.Report = rep
		if ctx.Err() != nil {
			return out, err
		}
		return out, nil
	}
	ao := opt.Audit
	if ao.Logger == nil {
		ao.Logger = opt.Logger
	}
	set, err := audit.New(repo.Config().Auditors, ao)
	if err != nil {
		return out, fmt.Errorf("auditors: %w (nothing was applied)", err)
	}
	defer set.Close()
	if err := set.Setup(ctx); err != nil {
		return out, fmt.Errorf("%w (nothing was applied)", err)
	}
	// Apply's error says only that ctx ended (or repeats the report's failures); the report
	// holds what was applied before that.
	rep, _ := deploy.Apply(ctx, plan, aopt)
	out.Report = rep
	// The record is written even when the run was interrupted: it must say what was applied
	// before the interruption.
	recs, err := set.Commit(context.WithoutCancel(ctx), audit.NewRun(res, plan, rep))
	for i, a := range set {
		if i < len(recs) {
			out.Audit = append(out.Audit, AuditRecord{Auditor: a.Description(), Commits: recs[i].Commits})
		}
	}
	if err != nil {
		return out, err
	}
	return out, ctx.Err()
}
