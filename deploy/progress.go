package deploy

import "time"

// Progress reports the read of one target while Build runs, for interfaces that show work in
// flight (the CLI draws it on a terminal). Build calls Options.Progress once when a target's
// read starts (Done false) and once when it ends, from the goroutines that read targets, so
// calls for different targets may be concurrent.
type Progress struct {
	OU, Type string
	// Desired is the number of groups calculated for the target.
	Desired int
	// Done is set on the second call; Read is then the number of groups read from the
	// target, Elapsed the read time and Err the reason it failed or was refused.
	Done    bool
	Read    int
	Elapsed time.Duration
	Err     error
}

func (o *Options) progress(p Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}

func (tp *TargetPlan) progress(desired int, elapsed time.Duration) Progress {
	p := Progress{OU: tp.OU, Type: tp.Type, Desired: desired, Done: true, Elapsed: elapsed, Err: tp.Err}
	if tp.state != nil {
		p.Read = len(tp.state.Groups)
	}
	return p
}
