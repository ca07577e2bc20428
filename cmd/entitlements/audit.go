package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
)

// auditedApply applies a plan inside the auditors' lifecycle (spec semantics §13.8): every
// auditor is set up before anything is written (a failure applies nothing), the plan is
// applied, then every auditor commits, even when applying failed. It returns the report (nil
// when nothing was applied) and the auditors' error, which the caller reports after the
// providers' errors. plan never comes here: only apply touches the audit repositories.
func auditedApply(ctx context.Context, cfg *config.Config, res *calc.Result, plan *deploy.Plan, opt deploy.Options,
	logger *slog.Logger, stderr io.Writer) (*deploy.Report, error) {
	set, err := audit.New(cfg.Auditors, audit.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("auditors: %w (nothing was applied)", err)
	}
	defer set.Close()
	if err := set.Setup(ctx); err != nil {
		return nil, err
	}
	// Apply's error says only that ctx ended; the report holds what was applied before that.
	rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
	// The audit record is written even when the run was interrupted: it must say what was
	// applied before the interruption.
	if err := set.Commit(context.WithoutCancel(ctx), audit.NewRun(res, plan, rep)); err != nil {
		return rep, err
	}
	if len(set) > 0 {
		fmt.Fprintf(stderr, "audit log: %d auditor(s) committed\n", len(set))
	}
	return rep, nil
}
