package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/journal"
	"github.com/entitlements-go/entitlements/providers"
)

// Status is how an apply ended.
type Status uint8

// The statuses of an apply.
const (
	// Done: every change of the plan is in place (or skipped by configuration).
	Done Status = iota
	// Stopped: the run ended before its end (its context was cancelled or timed out, a
	// provider's run budget ran out); an apply with a journal can be resumed.
	Stopped
	// Failed: a target could not be applied (refused, unreadable) or changes failed.
	Failed
)

func (s Status) String() string { return [...]string{"done", "stopped", "failed"}[s] }

// Summary is the outcome in one line: "done", "stopped (resumable: N of M done)" (without a
// journal: "stopped (N of M done)") or "failed (N of M done)".
func (o *Outcome) Summary() string {
	switch o.Status {
	case Done:
		return "done"
	case Stopped:
		if o.Run > 0 {
			return fmt.Sprintf("stopped (resumable: %d of %d done)", o.Made, o.Planned)
		}
		return fmt.Sprintf("stopped (%d of %d done)", o.Made, o.Planned)
	}
	return fmt.Sprintf("failed (%d of %d done)", o.Made, o.Planned)
}

// Resume continues an apply of the saved plan that stopped, from the journal it left: it plans
// (Plan with Options.Resume) and applies what is left. The plan is returned also when it is
// refused (its targets' errors say why).
func Resume(ctx context.Context, repo *calc.Repo, res *calc.Result, saved *deploy.SavedPlan, journalPath string, opt Options) (*deploy.Plan, *Outcome, error) {
	opt.Saved, opt.Journal, opt.Resume = saved, journalPath, true
	plan, err := Plan(ctx, repo, res, opt)
	if err != nil {
		return plan, &Outcome{Status: Failed}, err
	}
	out, err := Apply(ctx, repo, res, plan, opt)
	return plan, out, err
}

// settle computes the status and the counts once the run is over.
func (o *Outcome) settle(ctx context.Context, plan *deploy.Plan, saved *deploy.SavedPlan) {
	planned := map[string]int{}
	for _, t := range plan.Targets {
		planned[t.OU] = len(t.Changes)
	}
	if saved != nil {
		for _, t := range saved.Targets {
			planned[t.OU] = len(t.Changes)
		}
	}
	o.Planned, o.Made, o.EarlierMade = 0, 0, 0
	refused, failed, stopped := false, false, ctx.Err() != nil
	for i, t := range plan.Targets {
		o.Planned += planned[t.OU]
		if t.Err != nil {
			refused = true
			continue
		}
		// What a resume's fresh plan no longer has was made by earlier runs.
		o.EarlierMade += max(0, planned[t.OU]-len(t.Changes))
		if o.Report == nil || o.Report.Targets[i] == nil {
			continue
		}
		tr := o.Report.Targets[i]
		if tr.Err != nil {
			failed = true
			stopped = stopped || isStop(tr.Err)
		}
		for _, oc := range tr.Outcomes {
			switch {
			case oc.Status.OK() || oc.Status == providers.Skipped:
				o.Made++
			default:
				failed = true
				stopped = stopped || isStop(oc.Err)
			}
		}
	}
	o.Made += o.EarlierMade
	switch {
	case o.Report == nil || refused:
		o.Status = Failed
	case stopped:
		o.Status = Stopped
	case failed || o.Made < o.Planned:
		o.Status = Failed
	default:
		o.Status = Done
	}
}

func isStop(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, providers.ErrStopped)
}

// fileJournal records an apply in a journal file: one record per change and one per member it
// adds or removes, all of a target's start records in one synced append.
type fileJournal struct{ w *journal.Writer }

func (j fileJournal) Start(ou string, changes []*providers.Change) error {
	var recs []journal.Record
	for _, c := range changes {
		recs = append(recs, records(ou, c, journal.Start, nil, true)...)
	}
	return j.w.Append(recs...)
}

func (j fileJournal) Finish(ou string, outs []providers.Outcome) error {
	var recs []journal.Record
	for _, o := range outs {
		ev := journal.Done
		if !o.Status.OK() && o.Status != providers.Skipped {
			ev = journal.Failed
		}
		recs = append(recs, records(ou, o.Change, ev, o.Err, false)...)
	}
	return j.w.Append(recs...)
}

func records(ou string, c *providers.Change, ev string, err error, before bool) []journal.Record {
	r := journal.Record{Event: ev, Target: ou, Group: c.DN, Op: c.Kind.String()}
	if c.Kind == providers.UpdatePerson {
		r.Member = c.Person
	}
	if err != nil {
		r.Err = err.Error()
	}
	if before && c.Current != nil && (c.Kind == providers.DeleteGroup || len(c.AttrsChanged) > 0) {
		r.Before = &journal.Group{Description: c.Current.Description, Members: c.Current.Members, Attrs: c.Current.Attrs}
	}
	out := []journal.Record{r}
	for _, m := range c.Add {
		out = append(out, journal.Record{Event: ev, Target: ou, Group: c.DN, Op: "add-member", Member: m})
	}
	for _, m := range c.Remove {
		out = append(out, journal.Record{Event: ev, Target: ou, Group: c.DN, Op: "remove-member", Member: m})
	}
	return out
}

func openJournal(path, planID string, resume bool) (*journal.Writer, error) {
	if !resume {
		return journal.Create(path, planID)
	}
	w, _, err := journal.Open(path, planID)
	return w, err
}

func readJournal(path, planID string) (*journal.Log, error) {
	log, err := journal.Read(path)
	if err != nil {
		return nil, err
	}
	if log.Header.Plan != planID {
		return nil, &journal.PlanError{Path: path, Journal: log.Header.Plan, Plan: planID}
	}
	return log, nil
}

// startedOf lists the changes a journal says were started.
func startedOf(log *journal.Log) []deploy.Started {
	var out []deploy.Started
	for _, r := range log.Records {
		if r.Event != journal.Start {
			continue
		}
		k, ok := kindOf(r.Op)
		if !ok {
			continue // a member's record: its change has a record of its own
		}
		s := deploy.Started{OU: r.Target, DN: r.Group, Kind: k}
		if b := r.Before; b != nil {
			s.Before = &providers.Group{DN: r.Group, Description: b.Description, Members: b.Members, Attrs: b.Attrs}
		}
		out = append(out, s)
	}
	return out
}

func kindOf(op string) (providers.ChangeKind, bool) {
	for k := providers.CreateContainer; k <= providers.UpdatePerson; k++ {
		if k.String() == op {
			return k, true
		}
	}
	return 0, false
}
