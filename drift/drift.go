// Package drift finds the changes made to the targets outside the tool: for every target it
// compares what the service holds now (a real read, never the predictive state's trust) with
// the state the tool last applied (the predictive state: cache.LoadPredictive of its
// directory or of a checkout of the GitRepo audit log), and reports, per group, who was
// added or removed, which groups were created or deleted, and, where the service records it
// (providers.ModificationReader: LDAP's modifiersName and modifyTimestamp), by whom and when
// the group was last modified.
//
// Separately, the report carries the plan of the current definitions against the same read
// (Report.Plan): what plan and apply would write. The two answer different questions: drift
// is "someone changed access behind the tool's back", the plan is "the repository wants
// changes". A group can be in both (a member removed by hand whom the definitions still
// want is drift, and the plan adds them back).
//
// Drift is read-only: it writes nothing to the targets, the audit log or the state.
package drift

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/guard"
	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/providers"
)

// ErrNoLastApplied is returned by Detect when there is no last applied state to compare
// with (none given, or one that holds no group: nothing was applied with it yet). Drift
// cannot be known then; it is never reported as "no drift".
var ErrNoLastApplied = errors.New("no last applied state: drift cannot be known without the state the tool last applied")

// ErrNeverApplied is wrapped by the error of a target whose groups the last applied state
// does not hold while the service holds some: the target was never applied with this state
// (a new OU, or a state directory of another installation), so what was applied is unknown.
var ErrNeverApplied = errors.New("the last applied state holds no group of this target (never applied with this state?)")

// Options configure Detect. Zero fields take the documented defaults.
type Options struct {
	// Backends are the backend types with providers that read the real systems. Build them
	// without a predictive state (backends.Options.Predictive and the providers' own
	// Predictive left nil): a provider that trusts the last applied state instead of
	// reading a group would hide exactly the drift this package looks for. Required.
	Backends *backend.Registry
	// LastApplied is the state the tool last applied (cache.LoadPredictive). Required:
	// without it, Detect returns ErrNoLastApplied.
	LastApplied *cache.Predictive
	// Guard and Force are the removal guard of the plan of the definitions (Report.Plan):
	// a refusal is shown with the plan's changes; it is no error of the drift report.
	// Default guard.Default().
	Guard *guard.Guard
	Force bool
	// ReadConcurrency bounds the targets read at once. Default 4.
	ReadConcurrency int
	// Progress, when set, is told how each target's read goes (deploy.Options.Progress).
	Progress func(deploy.Progress)
	// Logger receives the providers' warnings. Default: discard.
	Logger *slog.Logger
}

// ErrNoBackends is returned when Options.Backends is nil.
var ErrNoBackends = errors.New("drift: Options.Backends is required")

// Status says what is known of a target.
type Status uint8

// The statuses of a target.
const (
	// Clean: the service holds exactly what was last applied.
	Clean Status = iota
	// Drifted: the service holds something else (Target.Groups says what).
	Drifted
	// Unknown: the target could not be compared (Target.Err says why): its read failed, or
	// the last applied state holds none of its groups (ErrNeverApplied).
	Unknown
	// NotCompared: the target keeps no group state to compare (a derived target such as
	// member_of writes person attributes, which the last applied state does not record).
	NotCompared
)

// String is the status as the JSON report spells it.
func (s Status) String() string {
	return [...]string{"no_drift", "drift", "unknown", "not_compared"}[s]
}

// Kind says how a group drifted.
type Kind uint8

// The kinds of drift of a group.
const (
	// Changed: the group exists and was last applied, with other members.
	Changed Kind = iota
	// Created: the group exists but was never applied (created outside the tool, or it
	// existed before the tool managed it).
	Created
	// Deleted: the group was applied and no longer exists.
	Deleted
)

// String is the kind as the JSON report spells it.
func (k Kind) String() string { return [...]string{"changed", "created", "deleted"}[k] }

// Group is one group that differs from what was last applied.
type Group struct {
	DN   string
	Kind Kind
	// Added are the members the service holds that were not applied (every member of a
	// Created group); Removed those applied that the service no longer holds (every member
	// of a Deleted group). Sorted; case-insensitive comparison, spelled as each side has them.
	Added, Removed []string
	// Modified is who last modified the group and when, where the service records it (LDAP);
	// zero otherwise, and for a deleted group. When the group was modified several times
	// since the last apply, this is the last of them.
	Modified providers.Modification
}

// Target is what was found for one target (one OU key).
type Target struct {
	OU, Type string
	Status   Status
	// Err says why the target is Unknown (or NotCompared).
	Err error
	// Groups are the groups that drifted, by DN.
	Groups []*Group
	// Compared is the number of groups compared (in the last applied state, the service, or
	// both).
	Compared int
	// Unverified are the groups of the last applied state that the provider did not read: no
	// longer defined, of a provider that reads only defined groups (GitHub teams without
	// delete_teams). Whether they still exist is not known; they are no drift.
	Unverified []string
	// AttributionErr is why who and when could not be read (the drift itself is known).
	AttributionErr error
}

// Report is the outcome of Detect.
type Report struct {
	// Targets in the plan's order (processing order of the config).
	Targets []*Target
	// Plan is the plan of the current definitions against the state read: what plan and
	// apply would write now. It is not drift.
	Plan *deploy.Plan
	// LastApplied is the number of groups of the last applied state.
	LastApplied int
}

// Drifted reports whether any target drifted. A report can have drift and errors.
func (r *Report) Drifted() bool {
	for _, t := range r.Targets {
		if t.Status == Drifted {
			return true
		}
	}
	return false
}

// Err joins the errors of the targets whose drift is unknown: a report with an error does
// not say "no drift" of them.
func (r *Report) Err() error {
	var errs []error
	for _, t := range r.Targets {
		if t.Status == Unknown {
			errs = append(errs, fmt.Errorf("%s: %w", t.OU, t.Err))
		}
	}
	return errors.Join(errs...)
}

// Totals counts the drift of a report.
type Totals struct {
	// Targets that drifted, Groups that drifted, of them Created and Deleted.
	Targets, Groups, Created, Deleted int
	// Added and Removed count memberships (of every drifted group).
	Added, Removed int
}

// Totals counts the drift of every target.
func (r *Report) Totals() Totals {
	var t Totals
	for _, tg := range r.Targets {
		if tg.Status == Drifted {
			t.Targets++
		}
		for _, g := range tg.Groups {
			t.Groups++
			t.Added += len(g.Added)
			t.Removed += len(g.Removed)
			switch g.Kind {
			case Created:
				t.Created++
			case Deleted:
				t.Deleted++
			}
		}
	}
	return t
}

// Detect reads every target and compares it with the last applied state. It writes
// nothing. The error is ErrNoLastApplied (before anything is read), a missing Backends, or
// the context's; a target that cannot be compared is reported Unknown (see Report.Err).
func Detect(ctx context.Context, repo *calc.Repo, res *calc.Result, opt Options) (*Report, error) {
	if opt.Backends == nil {
		return nil, ErrNoBackends
	}
	if opt.LastApplied == nil {
		return nil, ErrNoLastApplied
	}
	if opt.LastApplied.Len() == 0 {
		return nil, fmt.Errorf("%w (the state holds no group: nothing was applied with it yet)", ErrNoLastApplied)
	}
	cfg := repo.Config()
	plan, err := deploy.Build(ctx, res, cfg, deploy.Options{Backends: opt.Backends, Guard: opt.Guard, Force: opt.Force,
		ReadConcurrency: opt.ReadConcurrency, Logger: opt.Logger, Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	rep := &Report{Plan: plan, LastApplied: opt.LastApplied.Len()}
	last := assign(opt.LastApplied.Entries(), res, cfg)
	calculated := map[string][]string{} // by normalised DN: the calculated members
	for _, g := range res.Groups {
		if g.DN != "" {
			calculated[dn.Normalize(g.DN)] = g.Members
		}
	}
	for _, tp := range plan.Targets {
		t := &Target{OU: tp.OU, Type: tp.Type}
		rep.Targets = append(rep.Targets, t)
		if b, ok := opt.Backends.Lookup(tp.Type); ok && b.Derive != nil {
			t.Status, t.Err = NotCompared, errors.New("a derived target (person attributes): the last applied state records no group of it")
			continue
		}
		st := tp.Current()
		if st == nil {
			t.Status, t.Err = Unknown, tp.Err
			if t.Err == nil {
				t.Err = errors.New("its state was not read")
			}
			continue
		}
		pt := &providers.Target{OU: cfg.OU(tp.OU)}
		compare(t, tp, pt, st, last[tp.OU], calculated)
		if t.Status == Drifted {
			attribute(ctx, t, tp, pt)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rep, nil
}

// assign sorts the entries of the last applied state by target: a calculated group's entry
// goes to the group's OU, any other entry to the OU whose base is its parent (a group
// applied once and defined no more). Entries of no target (dummy OUs, OUs removed from the
// config) are left out.
func assign(entries []*cache.PredictiveEntry, res *calc.Result, cfg *config.Config) map[string]map[string]*cache.PredictiveEntry {
	ouOf := map[string]string{}
	for _, g := range res.Groups {
		if g.DN != "" {
			ouOf[dn.Normalize(g.DN)] = g.OU
		}
	}
	byBase := map[string]string{}
	for _, ou := range cfg.SortedOUs() {
		if ou.Base != "" && !ou.Spec.CalculateOnly {
			byBase[dn.Normalize(ou.Base)] = ou.Key
		}
	}
	out := map[string]map[string]*cache.PredictiveEntry{}
	for _, e := range entries {
		k := dn.Normalize(e.DN)
		ou, ok := ouOf[k]
		if !ok {
			parent, isDN := dn.ParentKey(e.DN)
			if ou, ok = byBase[parent]; !isDN || !ok {
				continue
			}
		}
		if out[ou] == nil {
			out[ou] = map[string]*cache.PredictiveEntry{}
		}
		out[ou][k] = e
	}
	return out
}

// compare fills t from the state read (st) and the target's entries of the last applied
// state (last). Members are compared case-insensitively. Members that the definitions name
// but the provider does not manage (GitHub's ignored users, LDAP people without an entry:
// calculated, left out of Desired) are left out of the last applied side, which records
// the calculated members: the service never holds them, and that is no drift.
func compare(t *Target, tp *deploy.TargetPlan, pt *providers.Target, st *providers.State, last map[string]*cache.PredictiveEntry, calculated map[string][]string) {
	if len(last) == 0 && len(st.Groups) > 0 {
		t.Status, t.Err = Unknown, ErrNeverApplied
		return
	}
	desired := map[string]*providers.Group{}
	for _, d := range tp.Desired() {
		desired[providers.Key(d.DN)] = d
	}
	// A provider that deletes groups reads its whole target: a group it did not find is
	// gone. Others may read only the defined groups.
	readsAll := false
	if dp, ok := tp.Provider().(providers.DeletePolicy); ok {
		readsAll = dp.DeletesGroups(pt)
	}
	keys := slices.Collect(maps.Keys(last))
	for k := range st.Groups {
		if last[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		e, cur := last[k], st.Groups[k]
		var was []string
		if e != nil {
			was = managed(e.Members, calculated[k], desired[k])
		}
		switch {
		case e != nil && cur != nil:
			added, removed := setDiff(cur.Members, was)
			if len(added) > 0 || len(removed) > 0 {
				t.Groups = append(t.Groups, &Group{DN: cur.DN, Kind: Changed, Added: added, Removed: removed})
			}
		case cur != nil:
			added, _ := setDiff(cur.Members, nil)
			t.Groups = append(t.Groups, &Group{DN: cur.DN, Kind: Created, Added: added})
		case !readsAll && desired[k] == nil:
			t.Unverified = append(t.Unverified, e.DN)
			continue
		default:
			_, removed := setDiff(nil, was)
			t.Groups = append(t.Groups, &Group{DN: e.DN, Kind: Deleted, Removed: removed})
		}
		t.Compared++
	}
	if len(t.Groups) > 0 {
		t.Status = Drifted
	}
}

// managed is the members of a last applied entry that the provider manages: without those
// the definitions name (calculated) but the provider left out of its desired group.
func managed(members, calculated []string, desired *providers.Group) []string {
	if desired == nil || len(calculated) == 0 {
		return members
	}
	keep := lowerSet(desired.Members)
	unmanaged := map[string]bool{}
	for _, m := range calculated {
		if l := strings.ToLower(m); !keep[l] {
			unmanaged[l] = true
		}
	}
	if len(unmanaged) == 0 {
		return members
	}
	return slices.DeleteFunc(slices.Clone(members), func(m string) bool { return unmanaged[strings.ToLower(m)] })
}

// setDiff returns the members of now that are not in was and those of was that are not in
// now, case-insensitively, each sorted and without duplicates.
func setDiff(now, was []string) (added, removed []string) {
	n, w := lowerSet(now), lowerSet(was)
	for _, m := range now {
		if !w[strings.ToLower(m)] {
			added = append(added, m)
		}
	}
	for _, m := range was {
		if !n[strings.ToLower(m)] {
			removed = append(removed, m)
		}
	}
	return sortedUnique(added), sortedUnique(removed)
}

func sortedUnique(s []string) []string {
	slices.SortFunc(s, func(a, b string) int {
		if c := strings.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return slices.CompactFunc(s, strings.EqualFold)
}

func lowerSet(s []string) map[string]bool {
	out := make(map[string]bool, len(s))
	for _, m := range s {
		out[strings.ToLower(m)] = true
	}
	return out
}

// attribute asks the target's provider who last modified the groups that drifted and still
// exist, when its service records it.
func attribute(ctx context.Context, t *Target, tp *deploy.TargetPlan, pt *providers.Target) {
	mr, ok := tp.Provider().(providers.ModificationReader)
	if !ok {
		return
	}
	var dns []string
	for _, g := range t.Groups {
		if g.Kind != Deleted {
			dns = append(dns, g.DN)
		}
	}
	if len(dns) == 0 {
		return
	}
	mods, err := mr.LastModified(ctx, pt, dns)
	if err != nil {
		t.AttributionErr = err
		return
	}
	for _, g := range t.Groups {
		if m, ok := mods[providers.Key(g.DN)]; ok {
			g.Modified = m
		}
	}
}
