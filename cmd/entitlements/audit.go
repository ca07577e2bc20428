package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/termsafe"
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
	recs, err := set.Commit(context.WithoutCancel(ctx), audit.NewRun(res, plan, rep))
	// Say what each auditor recorded; one that failed says nothing here (its error does).
	for i, a := range set {
		switch n := len(recs[i].Commits); {
		case n > 0:
			termsafe.Fprintf(stderr, "audit log: %s: %d commit(s) pushed (%s)\n", a.Description(), n, shortIDs(recs[i].Commits))
		case err == nil:
			termsafe.Fprintf(stderr, "audit log: %s: nothing to commit (the log matched this run)\n", a.Description())
		}
	}
	return rep, err
}

// shortIDs abbreviates commit ids for a message.
func shortIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id[:min(len(id), 12)]
	}
	return strings.Join(out, ", ")
}
