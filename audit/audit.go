// Package audit runs the auditors of a config repo around an apply: the reference's
// `auditors:` hooks. The one auditor class implemented is GitRepo (the git repository audit
// log of entitlements-gitrepo-auditor-plugin), whose files also serve as the predictive state
// of the next run (cache.LoadPredictive reads its nested tree directly).
//
// Lifecycle, driven by the caller (as the reference's auditors):
//
//  1. Setup of every auditor, in order, before anything is written; the first failure
//     aborts the run before any change is applied (Set.Setup).
//  2. The providers apply their changes.
//  3. Commit of every auditor, always, even when applying failed, with the whole run: the
//     calculated groups, the planned changes, which of them succeeded and whether a
//     provider failed (Set.Commit). A failing auditor is reported and the others still run.
//  4. The caller reports the providers' errors first, then the auditors' (Set.Commit returns
//     them joined), and the run fails if either failed.
//
// `plan` never builds the auditors' repositories: only Setup touches a checkout, and only
// apply calls it.
package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/providers"
)

// Auditor is one audit hook.
type Auditor interface {
	// Description names the auditor in messages ("GitRepo git@github.com:org/log.git").
	Description() string
	// Setup prepares the auditor before any change is applied.
	Setup(ctx context.Context) error
	// Commit records a run. It is called after apply whether or not apply succeeded.
	Commit(ctx context.Context, run *Run) (Record, error)
	// Close releases what Setup acquired (key material on disk). Safe to call more than once
	// and without Setup.
	Close() error
}

// Record is what one auditor's Commit recorded.
type Record struct {
	// Commits are the ids of the commits made and pushed, oldest first: none when the log
	// already matched the run (or nothing could be recorded).
	Commits []string
}

// Group is a calculated group as the audit log records it.
type Group struct {
	DN       string
	Members  []string
	Metadata map[string]any
}

// Action is a planned change that touches membership: a create, a delete, or an update whose
// member sets differ (case-insensitively). Description-only and attribute-only updates are
// not actions (a sync commit records them), nor are changes of person attributes.
type Action struct {
	Kind providers.ChangeKind // CreateGroup, UpdateGroup or DeleteGroup
	DN   string
	// Existing are the members the provider read before apply (update, delete).
	Existing []string
	// Succeeded is true when every outcome of the change was applied or already in state.
	Succeeded bool
}

// Run is what the auditors see of one apply.
type Run struct {
	// Groups are every calculated group with a DN.
	Groups []*Group
	// Actions by normalised DN.
	Actions map[string]*Action
	// Confirmed holds the normalised DNs of groups whose existence a provider confirmed in this
	// run (the read found them, or a create succeeded). Only those may get an empty file: an
	// empty group that no provider saw might not exist.
	Confirmed map[string]bool
	// Unapplied holds the normalised DNs of groups with a change that is not an action
	// (attributes or description only) and was not applied: their files are left as they
	// are, or the next run would trust a state that was never reached.
	Unapplied map[string]bool
	// ProviderErr is set when a provider failed (a target could not be planned, or a change
	// failed or may have failed) or a managed OU is no target of the plan. The sync commit is
	// then skipped.
	ProviderErr error
}

// NewRun assembles a Run from a calculation, its plan and the apply report (nil when
// nothing was applied).
func NewRun(res *calc.Result, plan *deploy.Plan, rep *deploy.Report) *Run {
	run := &Run{Actions: map[string]*Action{}, Confirmed: map[string]bool{}, Unapplied: map[string]bool{}}
	for _, g := range res.Groups {
		if g.DN == "" {
			continue
		}
		run.Groups = append(run.Groups, &Group{DN: g.DN, Members: g.Members, Metadata: g.Metadata})
	}
	var errs []error
	if err := plan.Err(); err != nil {
		errs = append(errs, err)
	}
	// A group of a managed OU that is no target of the plan was not applied: recording its
	// desired state would tell the next predictive plan that it was. It counts as a failed
	// target, so the sync commit (the only one that writes files of groups without an
	// action) is skipped, and it has no action the valid commit could record.
	planned := map[string]bool{}
	for _, t := range plan.Targets {
		planned[t.OU] = true
	}
	var missing []string
	for _, g := range res.Groups {
		if g.DN != "" && g.Type != "dummy" && !planned[g.OU] && !slices.Contains(missing, g.OU) {
			missing = append(missing, g.OU)
		}
	}
	for _, ou := range missing {
		errs = append(errs, fmt.Errorf("%s: not in the plan: nothing was applied to it", ou))
	}
	ok := map[*providers.Change]bool{}
	seen := map[*providers.Change]bool{}
	if rep != nil {
		if err := rep.Err(); err != nil {
			errs = append(errs, err)
		}
		for _, t := range rep.Targets {
			for _, o := range t.Outcomes {
				if prev, dup := ok[o.Change]; dup {
					ok[o.Change] = prev && o.Status.OK()
				} else {
					ok[o.Change] = o.Status.OK()
				}
				seen[o.Change] = true
			}
		}
	}
	run.ProviderErr = errors.Join(errs...)
	for _, t := range plan.Targets {
		if st := t.Current(); st != nil {
			for k := range st.Groups {
				run.Confirmed[k] = true
			}
		}
		if t.Err != nil {
			continue
		}
		for _, c := range t.Changes {
			a := &Action{Kind: c.Kind, DN: c.DN, Succeeded: seen[c] && ok[c]}
			switch c.Kind {
			case providers.CreateGroup:
				if a.Succeeded {
					run.Confirmed[providers.Key(c.DN)] = true
				}
			case providers.DeleteGroup:
				a.Existing = c.Current.Members
			case providers.UpdateGroup:
				if len(c.Add) == 0 && len(c.Remove) == 0 {
					if !a.Succeeded {
						run.Unapplied[dn.Normalize(c.DN)] = true
					}
					continue
				}
				a.Existing = c.Current.Members
			default:
				continue
			}
			run.Actions[dn.Normalize(c.DN)] = a
		}
	}
	return run
}

// Set is the auditors of a run, in configuration order.
type Set []Auditor

// Options configure the auditors built by New.
type Options struct {
	// Getenv reads the environment (HOME for the default known_hosts). Default os.LookupEnv.
	Getenv func(string) (string, bool)
	// Logger receives the auditors' warnings (sync changes, skipped host-key checks).
	// Default: discard.
	Logger *slog.Logger
	// Git is the git binary. Default "git" (looked up in PATH).
	Git string
}

func (o Options) withDefaults() Options {
	if o.Getenv == nil {
		o.Getenv = lookupEnv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Git == "" {
		o.Git = "git"
	}
	return o
}

// New builds the auditors of a config's `auditors:` entries (config.Config.Auditors). It checks their settings and
// touches nothing on disk or on the network. An unknown auditor_class is an error: a run that
// is expected to leave an audit record must not silently leave none.
func New(entries []config.Value, opt Options) (Set, error) {
	opt = opt.withDefaults()
	var out Set
	var errs []error
	for i, e := range entries {
		class := strings.TrimSpace(e.Get("auditor_class").Text())
		switch class {
		case "GitRepo", "Entitlements::Auditor::GitRepo":
			a, err := newGitRepo(e, opt)
			if err != nil {
				errs = append(errs, fmt.Errorf("auditor %d (GitRepo): %w", i+1, err))
				continue
			}
			out = append(out, a)
		case "":
			errs = append(errs, fmt.Errorf("auditor %d has no auditor_class", i+1))
		default:
			errs = append(errs, fmt.Errorf("auditor %d: auditor_class %q is not supported (supported: GitRepo)", i+1, class))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Setup sets up every auditor in order and stops at the first failure: nothing may be
// applied then.
func (s Set) Setup(ctx context.Context) error {
	for _, a := range s {
		if err := a.Setup(ctx); err != nil {
			return fmt.Errorf("audit %s setup failed (nothing was applied): %w", a.Description(), err)
		}
	}
	return nil
}

// Commit runs every auditor's Commit, even after one failed, and returns what each
// recorded (in the order of s) and their errors (with a count when more than one failed).
func (s Set) Commit(ctx context.Context, run *Run) ([]Record, error) {
	recs := make([]Record, len(s))
	var errs []error
	for i, a := range s {
		rec, err := a.Commit(ctx, run)
		recs[i] = rec
		if err != nil {
			errs = append(errs, fmt.Errorf("Audit %s failed: %w", a.Description(), err))
		}
	}
	if len(errs) > 1 {
		errs = append(errs, fmt.Errorf("there were %d audit failures", len(errs)))
	}
	return recs, errors.Join(errs...)
}

// Close closes every auditor.
func (s Set) Close() error {
	var errs []error
	for _, a := range s {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}
