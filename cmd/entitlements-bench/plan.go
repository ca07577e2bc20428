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

// planRun is one `entitlements plan` (or `apply --force --yes`) of the e2e benchmark.
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

// runPlan makes the run in process, with the library calls that cmd/entitlements makes for
// plan and apply against the real systems, in its order: the predictive state, the backends
// (backends.Open with the Azure AD one), the calculation reading LDAP through the backends'
// pools, runner.Plan, and for apply runner.Apply, which writes the config's audit log. out is
// what the CLI prints on stdout: the plan as JSON (--format json), or for apply the text plan
// and report. pred is the predictive state it used, for its hit count.
func runPlan(ctx context.Context, r planRun) (out []byte, pred *cache.Predictive, err error) {
	// What the CLI prints on stderr (warnings, the providers' log at its default level),
	// shown when the run fails.
	var log bytes.Buffer
	defer func() {
		if err != nil && log.Len() > 0 {
			err = fmt.Errorf("%w\n%s", err, tail(log.String(), 30))
		}
	}()
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if r.predictiveDir != "" {
		if pred, err = cache.LoadPredictive(r.predictiveDir); err != nil {
			return nil, nil, err
		}
	}
	var extra []backend.Backend
	if r.aad != nil {
		bs, done := r.aad(logger, pred)
		defer done()
		extra = bs
	}
	bopt := backends.Options{Logger: logger, Predictive: pred}
	if r.github != nil {
		r.github(&bopt.GitHub)
	}
	set, err := backends.Open(bopt, extra...)
	if err != nil {
		return nil, nil, err
	}
	defer set.Close()
	opt := ldapcalc.Options(set.LDAP(), calc.Options{Types: backends.Types(), Now: r.now, Logger: logger,
		OnWarning: func(w validate.Warning) { fmt.Fprintf(&log, "warning: %s (%s:%d)\n", w.Msg, w.Path, w.Line) }})
	if r.cpuprofile != "" {
		f, err := os.Create(r.cpuprofile)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, nil, err
		}
		defer pprof.StopCPUProfile()
	}
	repo, err := calc.Load(ctx, r.config, opt)
	if err != nil {
		return nil, nil, err
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		return nil, nil, err
	}
	g := guard.Default()
	ropt := runner.Options{Backends: set.Registry, Guard: &g, Force: r.apply, Audit: audit.Options{Logger: logger}}
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
