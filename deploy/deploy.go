// Package deploy turns a calculation into changes on real systems: it reads every target's
// current state through its provider (in parallel, in bulk), diffs it against the calculated
// groups with the shared providers.Diff, checks the removal guard, and applies the changes in
// a safe order. Nothing is written by Build; only Apply writes.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/guard"
	"github.com/entitlements-go/entitlements/providers"
)

// Options configure Build. Zero fields take the documented defaults.
type Options struct {
	// Backends are the backend types: the factory of each type's providers, and the planner
	// of derived types. OUs whose type is calculate-only (dummy) are not targets; an OU whose
	// type has no factory here is reported as a target that cannot be planned.
	Backends *backend.Registry
	// Guard is the removal guard. Default guard.Default(); Force disables it.
	Guard *guard.Guard
	Force bool
	// ReadConcurrency bounds targets read at once. Default 4.
	ReadConcurrency int
	// Logger receives one line per write (through ApplyOptions). Default: discard.
	Logger *slog.Logger
	// Progress, when set, is told when each target's read starts, how far it has come (when
	// its provider reports that) and when it ends (see Progress).
	Progress func(Progress)
}

// ApplyOptions configure Apply. Apply writes through the providers the plan was built with
// (Options.Backends of Build); it needs no factories of its own.
type ApplyOptions struct {
	// Logger receives one line per write. Default: discard.
	Logger *slog.Logger
	// Journal, when set, is told of every target's changes before they are sent and of
	// their outcomes after (see Journal). Default: none.
	Journal Journal
}

// ApplyOptions returns the options of Apply that match o (its Logger).
func (o Options) ApplyOptions() ApplyOptions { return ApplyOptions{Logger: o.Logger} }

func (o Options) withDefaults() Options {
	if o.Guard == nil {
		g := guard.Default()
		o.Guard = &g
	}
	if o.ReadConcurrency <= 0 {
		o.ReadConcurrency = 4
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// TargetPlan is the plan of one target (one OU key).
type TargetPlan struct {
	OU, Type string
	Changes  []*providers.Change
	// Err is set when the target cannot be planned (failed read, refused by the guard, invalid
	// desired state). Nothing is written to such a target.
	Err      error
	ReadTime time.Duration
	// Fingerprint identifies the current state the changes were computed from (see
	// Fingerprint); "" when the target could not be read. A saved plan is applied to a target
	// only while its state still has this fingerprint.
	Fingerprint string
	// Counters are the provider's request counters after the read (searches, requests,
	// connections opened, ...). Providers that share a client report shared totals.
	Counters map[string]int64
	// Estimate is what applying the changes will cost (writes by kind, duration under the
	// provider's write budgets), when the provider is a providers.Estimator; nil otherwise,
	// and for targets without changes or with an error.
	Estimate *providers.Estimate

	provider providers.Provider
	derive   providers.Deriver // derived types (member_of)
	current  int               // derived targets: the values people hold now
	target   *providers.Target
	state    *providers.State
	desired  []*providers.Group
}

// Plan is the set of changes for every target.
type Plan struct {
	Targets []*TargetPlan
	// CalcTime is the calculation time (load + validate + calculate) of the result planned.
	CalcTime time.Duration
}

// Totals counts the changes that can be applied (of targets without an error) by kind, except
// the changes whose every write another target's change makes (see Covered).
func (p *Plan) Totals() map[providers.ChangeKind]int {
	out := map[providers.ChangeKind]int{}
	for _, t := range p.Targets {
		if t.Err != nil {
			continue
		}
		for _, c := range t.Changes {
			if !c.OnlyCovered() {
				out[c.Kind]++
			}
		}
	}
	return out
}

// Covered counts the changes (of targets without an error) that changes of other targets make
// entirely (providers.Change.OnlyCovered): removing a user from a GitHub org removes them from
// its teams. Apply sends nothing for them unless a covering change fails.
func (p *Plan) Covered() int {
	n := 0
	for _, t := range p.Targets {
		if t.Err != nil {
			continue
		}
		for _, c := range t.Changes {
			if c.OnlyCovered() {
				n++
			}
		}
	}
	return n
}

// Empty reports whether the plan has no change at all, in any target (a refused target's
// changes count: they are wanted, only not made). A plan can be empty and still have an
// error (a target that could not be read): check Err too.
func (p *Plan) Empty() bool {
	for _, t := range p.Targets {
		if len(t.Changes) > 0 {
			return false
		}
	}
	return true
}

// FailedTargets counts the targets that cannot be applied (failed read, refused by the guard,
// invalid desired state, no provider).
func (p *Plan) FailedTargets() int {
	n := 0
	for _, t := range p.Targets {
		if t.Err != nil {
			n++
		}
	}
	return n
}

// Err joins the errors of every target.
func (p *Plan) Err() error {
	var errs []error
	for _, t := range p.Targets {
		if t.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.OU, t.Err))
		}
	}
	return errors.Join(errs...)
}

// Build reads every target and computes its changes. A target whose read fails is reported
// with its error and planned with no changes: a failed read is never taken for "empty".
func Build(ctx context.Context, res *calc.Result, cfg *config.Config, opt Options) (*Plan, error) {
	opt = opt.withDefaults()
	plan := &Plan{CalcTime: res.Timings.Load + res.Timings.Validate + res.Timings.Calculate}
	byOU := map[string][]*calc.Group{}
	for _, g := range res.Groups {
		byOU[g.OU] = append(byOU[g.OU], g)
	}
	for _, ou := range cfg.SortedOUs() {
		if ou.Spec.CalculateOnly {
			continue
		}
		var b backend.Backend
		ok := false
		if opt.Backends != nil {
			b, ok = opt.Backends.Lookup(ou.Type)
		}
		if !ok || b.New == nil {
			plan.Targets = append(plan.Targets, &TargetPlan{OU: ou.Key, Type: ou.Type,
				Err: fmt.Errorf("no provider is available for backend type %q", ou.Type)})
			continue
		}
		tp := &TargetPlan{OU: ou.Key, Type: ou.Type, target: &providers.Target{OU: ou}, derive: b.Derive}
		p, err := b.New(ou)
		if err != nil {
			tp.Err = fmt.Errorf("building provider: %w", err)
		}
		tp.provider = p
		plan.Targets = append(plan.Targets, tp)
	}
	sem := make(chan struct{}, opt.ReadConcurrency)
	var wg sync.WaitGroup
	for _, tp := range plan.Targets {
		if tp.Err != nil || tp.provider == nil || tp.derive != nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			opt.progress(Progress{OU: tp.OU, Type: tp.Type, Desired: len(byOU[tp.OU])})
			stop := opt.watchRead(tp, len(byOU[tp.OU]), start)
			tp.Err = planGroups(ctx, tp, byOU[tp.OU], opt)
			stop()
			tp.ReadTime = time.Since(start)
			opt.progress(tp.progress(len(byOU[tp.OU]), tp.ReadTime))
		}()
	}
	wg.Wait()
	// Derived targets come last: they derive from the groups of other targets, and must not
	// write anything when one of those could not be planned (failed read, refused by the guard).
	var people []providers.Person
	for _, tp := range plan.Targets {
		if tp.Err != nil || tp.provider == nil || tp.derive == nil {
			continue
		}
		if people == nil {
			people = peopleOf(res)
		}
		start := time.Now()
		tp.Err = planDerived(tp, cfg, plan, byOU, people)
		if tp.Err == nil && !opt.Force {
			if err := opt.Guard.CheckPeople(tp.OU, tp.current, tp.Changes); err != nil {
				tp.Err = err
			}
		}
		tp.ReadTime = time.Since(start)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !opt.Force {
		globalGuard(plan, res, opt.Guard)
	}
	cover(plan)
	estimate(plan)
	return plan, nil
}

// estimate asks the providers that can say what their apply will cost, in plan order (a
// provider whose targets share a write budget adds each target's writes to the previous
// ones'), once covers are known: covered removals cost nothing.
func estimate(plan *Plan) {
	for _, tp := range plan.Targets {
		if est, ok := tp.provider.(providers.Estimator); ok && tp.Err == nil && len(tp.Changes) > 0 {
			e := est.Estimate(tp.Changes)
			tp.Estimate = &e
		}
	}
}

// EstimatedDuration is the sum of the targets' estimated apply durations (targets are applied
// one after another).
func (p *Plan) EstimatedDuration() time.Duration {
	var d time.Duration
	for _, t := range p.Targets {
		if t.Estimate != nil {
			d += t.Estimate.Duration
		}
	}
	return d
}

// cover lets the providers whose changes make changes of other targets (providers.Coverer)
// mark them, once every target's plan and error are final: only a target that will be applied
// covers others. A covered removal stays in its change (the guard counted it: the access is
// lost all the same); Apply does not send it while its covering change succeeds.
func cover(plan *Plan) {
	for _, a := range plan.Targets {
		cv, ok := a.provider.(providers.Coverer)
		if !ok || a.Err != nil || len(a.Changes) == 0 {
			continue
		}
		for _, b := range plan.Targets {
			if b != a && b.state != nil && len(b.Changes) > 0 {
				b.Changes = cv.Cover(a.target, a.Changes, b.target, b.provider, b.Changes)
			}
		}
	}
}

// Refused reports whether err is a refusal of the removal guard (the target's changes are
// planned but not applied).
func Refused(err error) bool {
	var ge *guard.Error
	return errors.As(err, &ge)
}

// globalGuard runs the guard's run-wide checks over every target that could be planned and
// refuses every target that removes anything when they fail.
func globalGuard(plan *Plan, res *calc.Result, g *guard.Guard) {
	var targets []guard.RunTarget
	for _, tp := range plan.Targets {
		switch {
		case tp.derive != nil && tp.provider != nil && (tp.Err == nil || Refused(tp.Err)):
			targets = append(targets, guard.RunTarget{OU: tp.OU, Changes: tp.Changes, Derived: true, DerivedTotal: tp.current})
		case tp.state != nil:
			targets = append(targets, guard.RunTarget{OU: tp.OU, Changes: tp.Changes, Current: tp.state})
		}
	}
	dir := res.People()
	ge, refused := g.CheckRun(targets, func(uid string) bool { _, ok := dir.Lookup(uid); return ok })
	if ge == nil {
		return
	}
	for _, tp := range plan.Targets {
		if tp.Err == nil && slices.Contains(refused, tp.OU) {
			e := *ge
			e.OU = tp.OU
			tp.Err = &e
		}
	}
}

func planGroups(ctx context.Context, tp *TargetPlan, groups []*calc.Group, opt Options) error {
	desired := make([]*providers.Group, 0, len(groups))
	var bad []string
	for _, g := range groups {
		d := &providers.Group{DN: g.DN, CN: g.CN, Description: g.Description, Members: g.Members, Metadata: g.Metadata, File: g.File}
		if ds, ok := tp.provider.(providers.Desirer); ok {
			if err := ds.Desire(tp.target, d); err != nil {
				bad = append(bad, err.Error())
				continue
			}
		}
		desired = append(desired, d)
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	var st *providers.State
	var err error
	if dr, ok := tp.provider.(providers.DesiredReader); ok {
		st, err = dr.ReadDesired(ctx, tp.target, desired)
	} else {
		st, err = tp.provider.Read(ctx, tp.target)
	}
	if c, ok := tp.provider.(providers.Counter); ok {
		tp.Counters = c.Counters()
	}
	if err != nil {
		return fmt.Errorf("reading current state (nothing will be written to this target): %w", err)
	}
	tp.state, tp.desired = st, desired
	tp.Fingerprint = Fingerprint(st)
	// A provider that does not say it deletes groups never deletes one: a missing policy must
	// not turn into deleting every group without a file.
	deletes := false
	if dp, ok := tp.provider.(providers.DeletePolicy); ok {
		deletes = dp.DeletesGroups(tp.target)
	}
	tp.Changes = providers.Diff(tp.OU, desired, st, providers.DiffOptions{DeleteGroups: deletes})
	if !opt.Force {
		if err := opt.Guard.Check(tp.OU, st, tp.Changes); err != nil {
			return err
		}
	}
	return nil
}

// planDerived plans a derived target from the calculated groups of its sources.
func planDerived(tp *TargetPlan, cfg *config.Config, plan *Plan, byOU map[string][]*calc.Group, people []providers.Person) error {
	sources, err := tp.derive.Sources(tp.target.OU, cfg)
	if err != nil {
		return err
	}
	for _, other := range plan.Targets {
		if other.Err != nil && slices.Contains(sources, other.OU) {
			return fmt.Errorf("not planned because target %s, whose groups it lists, could not be planned", other.OU)
		}
	}
	var in providers.DerivedInput
	in.People = people
	for _, k := range sources {
		var gs []*providers.Group
		for _, g := range byOU[k] {
			if !g.Mirror {
				gs = append(gs, &providers.Group{DN: g.DN, CN: g.CN, Members: g.Members})
			}
		}
		slices.SortFunc(gs, func(a, b *providers.Group) int { return strings.Compare(a.DN, b.DN) })
		in.Groups = append(in.Groups, gs...)
	}
	dp, err := tp.derive.Plan(tp.target.OU, in)
	if err != nil {
		return err
	}
	tp.Changes, tp.current, tp.Fingerprint = dp.Changes, dp.Current, dp.Fingerprint
	return nil
}

// peopleOf lists the people of the calculation for derived targets, in uid order.
func peopleOf(res *calc.Result) []providers.Person {
	dir := res.People()
	uids := dir.UIDs()
	out := make([]providers.Person, len(uids))
	for i, uid := range uids {
		id, _ := dir.Lookup(uid)
		out[i] = providers.Person{UID: uid, Attrs: dir.Person(id).Attrs}
	}
	return out
}

// Report is the outcome of Apply.
type Report struct {
	Targets []*TargetReport
}

// TargetReport is the outcome of one target.
type TargetReport struct {
	OU        string
	Outcomes  []providers.Outcome
	Err       error // planning error, or a failed container creation
	ApplyTime time.Duration
	Counters  map[string]int64
}

// Err joins every failure.
func (r *Report) Err() error {
	var errs []error
	for _, t := range r.Targets {
		if t.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.OU, t.Err))
		}
		for _, o := range t.Outcomes {
			if o.Status.Failure() {
				errs = append(errs, fmt.Errorf("%s: %s: %s: %w", t.OU, o.Change, o.Status, o.Err))
			}
		}
	}
	return errors.Join(errs...)
}

// Apply writes a plan, target by target in processing order (containers before groups, LDAP
// groups before member_of; a target whose removals other targets cover after those targets),
// through the providers Build bound to it. A covered removal (providers.Change.Covered) is not
// sent when its covering change succeeded, and is sent when it did not; a change left with
// nothing to send has the outcome providers.Covered. A failing change or target does not stop
// the others; every failure is in the report. Targets whose plan has an error are not
// touched. The error is nil only when every change of every target is in place (it is the
// report's Err, or the context's when the run was cancelled).
func Apply(ctx context.Context, plan *Plan, opt ApplyOptions) (*Report, error) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	rep := &Report{Targets: make([]*TargetReport, len(plan.Targets))}
	done := map[*providers.Change]providers.Status{} // outcomes so far, for covered removals
	for _, i := range applyOrder(plan) {
		tp := plan.Targets[i]
		tr := &TargetReport{OU: tp.OU, Err: tp.Err}
		rep.Targets[i] = tr
		if tp.Err != nil || len(tp.Changes) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			tr.Err = fmt.Errorf("not applied: %w", err)
			continue
		}
		start := time.Now()
		changes := tp.Changes
		if opt.Journal != nil {
			// Every change is announced, covered ones too: the record must hold whatever
			// may reach the system before any of it is sent.
			if err := opt.Journal.Start(tp.OU, changes); err != nil {
				tr.Err = fmt.Errorf("not applied: %w", err)
				continue
			}
		}
		if changes[0].Kind == providers.CreateContainer {
			pr, ok := tp.provider.(providers.Preparer)
			if !ok {
				tr.Err = fmt.Errorf("the container does not exist and the provider cannot create it (no group was written)")
				continue
			}
			if err := pr.Prepare(ctx, tp.target); err != nil {
				tr.Err = fmt.Errorf("creating the container (no group was written): %w", err)
				opt.finish(tp.OU, []providers.Outcome{{Change: changes[0], Status: providers.Unknown, Err: err}})
				continue
			}
			opt.Logger.Info("created container", "ou", tp.OU)
			tr.Outcomes = append(tr.Outcomes, providers.Outcome{Change: changes[0], Status: providers.Applied})
			changes = changes[1:]
		}
		var outs []providers.Outcome
		if tp.derive != nil {
			pw, ok := tp.provider.(providers.PersonWriter)
			if !ok {
				tr.Err = fmt.Errorf("provider cannot write person attributes")
				continue
			}
			outs = pw.WritePeople(ctx, tp.target, changes)
		} else {
			send, covered, orig := uncover(changes, done)
			outs = covered
			if len(send) > 0 {
				for _, o := range tp.provider.Apply(ctx, tp.target, send) {
					if c := orig[o.Change]; c != nil {
						o.Change = c
					}
					outs = append(outs, o)
				}
			}
			pos := make(map[*providers.Change]int, len(changes))
			for j, c := range changes {
				pos[c] = j
			}
			slices.SortStableFunc(outs, func(a, b providers.Outcome) int { return pos[a.Change] - pos[b.Change] })
		}
		for _, o := range outs {
			done[o.Change] = o.Status
			level := slog.LevelInfo
			switch {
			case o.Status.Failure():
				level = slog.LevelError
			case o.Status == providers.Skipped:
				level = slog.LevelWarn
			}
			attrs := []any{"ou", tp.OU, "change", o.Change.Describe(), "status", o.Status.String()}
			if o.Err != nil {
				attrs = append(attrs, "err", o.Err)
			}
			opt.Logger.Log(ctx, level, "write", attrs...)
		}
		tr.Outcomes = append(tr.Outcomes, outs...)
		opt.finish(tp.OU, tr.Outcomes)
		tr.ApplyTime = time.Since(start)
		if c, ok := tp.provider.(providers.Counter); ok {
			tr.Counters = c.Counters()
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, errors.Join(err, rep.Err())
	}
	return rep, rep.Err()
}

// finish records outcomes in the journal. A record that cannot be written only makes a resume
// re-read what it says (start records decide what a resume accepts), so it is logged, not
// fatal.
func (o ApplyOptions) finish(ou string, outs []providers.Outcome) {
	if o.Journal == nil || len(outs) == 0 {
		return
	}
	if err := o.Journal.Finish(ou, outs); err != nil {
		o.Logger.Error("journal", "ou", ou, "err", err)
	}
}

// applyOrder is the order in which Apply writes the targets: the plan's order, except that a
// target whose changes are covered by changes of other targets comes after those targets, so
// that their outcomes are known when it is applied.
func applyOrder(plan *Plan) []int {
	owner := map[*providers.Change]int{}
	for i, t := range plan.Targets {
		for _, c := range t.Changes {
			owner[c] = i
		}
	}
	var order []int
	state := make([]uint8, len(plan.Targets)) // 0 new, 1 visiting, 2 placed
	var visit func(i int)
	visit = func(i int) {
		if state[i] != 0 {
			return // placed, or a cycle of covers (none exists: it is then applied in plan order)
		}
		state[i] = 1
		for _, c := range plan.Targets[i].Changes {
			for _, cv := range c.Covered {
				if j, ok := owner[cv.By]; ok && j != i {
					visit(j)
				}
			}
		}
		state[i] = 2
		order = append(order, i)
	}
	for i := range plan.Targets {
		visit(i)
	}
	return order
}

// uncover takes the covered removals whose covering change succeeded (done) out of the changes
// to send. A change left with nothing to send gets the outcome Covered; a change that still
// sends something is sent as a copy without them, and orig maps the copy to the change of the
// plan (outcomes name the plan's changes).
func uncover(changes []*providers.Change, done map[*providers.Change]providers.Status) (send []*providers.Change, covered []providers.Outcome, orig map[*providers.Change]*providers.Change) {
	orig = map[*providers.Change]*providers.Change{}
	for _, c := range changes {
		made := map[string]bool{}
		for _, cv := range c.Covered {
			if st, ok := done[cv.By]; ok && st.OK() {
				made[strings.ToLower(cv.Member)] = true
			}
		}
		if len(made) == 0 {
			send = append(send, c)
			continue
		}
		var rest []string
		for _, m := range c.Remove {
			if !made[strings.ToLower(m)] {
				rest = append(rest, m)
			}
		}
		if len(rest) == 0 && len(c.Add) == 0 && !c.DescriptionChanged && len(c.AttrsChanged) == 0 && c.Kind == providers.UpdateGroup {
			covered = append(covered, providers.Outcome{Change: c, Status: providers.Covered})
			continue
		}
		cp := *c
		cp.Remove, cp.Covered = rest, nil
		send = append(send, &cp)
		orig[&cp] = c
	}
	return send, covered, orig
}
