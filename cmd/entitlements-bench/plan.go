package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/guard"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/ldap/ldapcalc"
	"github.com/entitlements-go/entitlements/review"
	"github.com/entitlements-go/entitlements/runner"
	"github.com/entitlements-go/entitlements/validate"
)

// aadOpen opens the Azure AD backend of one run against the benchmark's fakegraph, with the
// run's logger and predictive state; done releases its connections. It is nil in binaries
// built without -tags aad.
type aadOpen func(logger *slog.Logger, pred *cache.Predictive) (bs []backend.Backend, done func())

// planRun is one `entitlements plan` (or `apply --force --yes`) of the e2e and apply benchmarks.
type planRun struct {
	config string
	now    time.Time
	// apply applies the plan, the removal guard off: the benchmark's setup.
	apply bool
	// predictiveDir is the predictive state (a checkout of the audit log); "" reads every
	// group, as --full does.
	predictiveDir string
	// cpuprofile, when set, receives a CPU profile of the load, calculation and plan.
	cpuprofile string
	// github and aad set the providers up for the fakes: endpoints, credentials, write pacing.
	github func(*github.Options)
	aad    aadOpen
}

// benchRun is one process of entitlements as the benchmark makes it, in process: its own
// backends (registries, connection pools and, for GitHub, write windows) and its calculation.
type benchRun struct {
	repo   *calc.Repo
	res    *calc.Result
	set    *backends.Set
	pred   *cache.Predictive
	logger *slog.Logger
	// log is what the CLI prints on stderr (warnings, the providers' log at its default
	// level), shown when the run fails.
	log     bytes.Buffer
	closers []func()
}

// openRun makes the first library calls of `entitlements plan` and `apply`, in their order:
// the predictive state, the backends (backends.Open with the Azure AD one), the calculation
// reading LDAP through the backends' pools. close releases what it opened, also after an
// error.
func openRun(ctx context.Context, r planRun) (*benchRun, error) {
	b := &benchRun{}
	b.logger = slog.New(slog.NewTextHandler(&b.log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if r.predictiveDir != "" {
		pred, err := cache.LoadPredictive(r.predictiveDir)
		if err != nil {
			return b, err
		}
		b.pred = pred
	}
	var extra []backend.Backend
	if r.aad != nil {
		bs, done := r.aad(b.logger, b.pred)
		b.closers = append(b.closers, done)
		extra = bs
	}
	bopt := backends.Options{Logger: b.logger, Predictive: b.pred}
	if r.github != nil {
		r.github(&bopt.GitHub)
	}
	set, err := backends.Open(bopt, extra...)
	if err != nil {
		return b, err
	}
	b.set = set
	b.closers = append(b.closers, func() { set.Close() })
	opt := ldapcalc.Options(set.LDAP(), calc.Options{Types: backends.Types(), Now: r.now, Logger: b.logger,
		OnWarning: func(w validate.Warning) { fmt.Fprintf(&b.log, "warning: %s (%s:%d)\n", w.Msg, w.Path, w.Line) }})
	if r.cpuprofile != "" {
		f, err := os.Create(r.cpuprofile)
		if err != nil {
			return b, err
		}
		b.closers = append(b.closers, func() { f.Close() })
		if err := pprof.StartCPUProfile(f); err != nil {
			return b, err
		}
		b.closers = append(b.closers, pprof.StopCPUProfile)
	}
	if b.repo, err = calc.Load(ctx, r.config, opt); err != nil {
		return b, err
	}
	b.res, err = b.repo.Calculate(ctx)
	return b, err
}

// close releases what openRun opened, last first.
func (b *benchRun) close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

// withLog adds the tail of the run's log to a failure.
func (b *benchRun) withLog(err error) error {
	if err != nil && b.log.Len() > 0 {
		return fmt.Errorf("%w\n%s", err, tail(b.log.String(), 30))
	}
	return err
}

// runPlan makes the run in process, with the library calls that cmd/entitlements makes for
// plan and apply against the real systems: openRun's, runner.Plan, and for apply
// runner.Apply, which writes the config's audit log. out is what the CLI prints on stdout:
// the plan as JSON (--format json), or for apply the text plan and report. pred is the
// predictive state it used, for its hit count.
func runPlan(ctx context.Context, r planRun) (out []byte, pred *cache.Predictive, err error) {
	run, err := openRun(ctx, r)
	defer run.close()
	defer func() { err = run.withLog(err) }()
	if err != nil {
		return nil, nil, err
	}
	repo, res, pred := run.repo, run.res, run.pred
	g := guard.Default()
	ropt := runner.Options{Backends: run.set.Registry, Guard: &g, Force: r.apply, Audit: audit.Options{Logger: run.logger}}
	plan, err := runner.Plan(ctx, repo, res, ropt)
	if err != nil {
		return nil, nil, err
	}
	if err := plan.Err(); err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	if !r.apply {
		if err := review.WritePlanJSON(&b, plan); err != nil {
			return nil, nil, err
		}
		return b.Bytes(), pred, nil
	}
	review.WritePlanText(&b, plan, review.PlanTextOptions{})
	o, err := runner.Apply(ctx, repo, res, plan, ropt)
	if o != nil && o.Report != nil {
		review.WriteReport(&b, o.Report, review.ReportOptions{Plan: plan})
	}
	if err == nil && o != nil {
		err = o.Err()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w\n%s", err, tail(b.String(), 30))
	}
	return b.Bytes(), pred, nil
}
