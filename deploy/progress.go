package deploy

import (
	"time"

	"github.com/entitlements-go/entitlements/providers"
)

// Progress reports the read of one target while Build runs, for interfaces that show work in
// flight (the CLI draws it on a terminal). Build calls Options.Progress when a target's read
// starts (Done false, Read 0), again each time its provider reports how far the read has come
// (Done false; see providers.Target.ReportRead), and once when the read ends (Done true). The
// calls come from the goroutines that read targets, so calls for different targets may be
// concurrent; those for one target come in order.
type Progress struct {
	OU, Type string
	// Desired is the number of groups calculated for the target.
	Desired int
	// Read is the number of groups read from the target: so far while Done is false, in
	// all once it is true.
	Read int
	// Total is the number of groups the running read will have read when it ends, when its
	// provider knows that in advance; 0 otherwise (and once Done).
	Total int
	// Done is set on the last call; Elapsed is then the read time and Err the reason it
	// failed or was refused. While the read runs, Elapsed is the time it has taken so far.
	Done    bool
	Elapsed time.Duration
	Err     error
}

func (o *Options) progress(p Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}

// watchRead routes the provider's reports during tp's read to Options.Progress; the
// returned function stops it (reads only: an apply that reads is not a read of the plan).
func (o *Options) watchRead(tp *TargetPlan, desired int, start time.Time) (stop func()) {
	if o.Progress == nil {
		return func() {}
	}
	tp.target.Progress = func(rp providers.ReadProgress) {
		o.Progress(Progress{OU: tp.OU, Type: tp.Type, Desired: desired, Read: rp.Groups, Total: rp.Total,
			Elapsed: time.Since(start)})
	}
	return func() { tp.target.Progress = nil }
}

func (tp *TargetPlan) progress(desired int, elapsed time.Duration) Progress {
	p := Progress{OU: tp.OU, Type: tp.Type, Desired: desired, Done: true, Elapsed: elapsed, Err: tp.Err}
	if tp.state != nil {
		p.Read = len(tp.state.Groups)
	}
	return p
}
