package github

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/entitlements-go/entitlements/providers"
)

// userResult is the outcome of one API write for one user (or one team write).
type userResult struct {
	status providers.Status
	err    error  // for Failed and Unknown
	warn   string // for Skipped, or a note on an applied write
}

func applied() userResult { return userResult{status: providers.Applied} }
func already() userResult { return userResult{status: providers.AlreadyInState} }
func skipped(format string, a ...any) userResult {
	return userResult{status: providers.Skipped, warn: fmt.Sprintf(format, a...)}
}
func failed(err error) userResult { return userResult{status: providers.Failed, err: err} }

// writeFailure classifies a failed write: Unknown when its outcome was not seen.
func writeFailure(err error, format string, a ...any) userResult {
	err = fmt.Errorf("%s: %w", fmt.Sprintf(format, a...), err)
	if unseen(err) {
		return userResult{status: providers.Unknown, err: err}
	}
	return failed(err)
}

// Warnings carries the per-user warnings of a change whose status is OK or Skipped (users
// left out, invitations GitHub refused, ...). Outcome.Err holds it for such changes, so the
// deploy log shows them without turning the change into a failure.
type Warnings []string

func (w Warnings) Error() string { return strings.Join(w, "; ") }

// outcome folds the results of a change's writes into one Outcome: any failure fails the
// change, any unseen write makes it Unknown, only skipped writes make it Skipped, and no
// write at all means it was already in state.
func outcome(c *providers.Change, rs []userResult) providers.Outcome {
	var errs []error
	var warns Warnings
	var nFailed, nUnknown, nSkipped, nApplied int
	for _, r := range rs {
		switch r.status {
		case providers.Failed:
			nFailed++
			errs = append(errs, r.err)
		case providers.Unknown:
			nUnknown++
			errs = append(errs, r.err)
		case providers.Skipped:
			nSkipped++
		case providers.Applied:
			nApplied++
		}
		if r.warn != "" {
			warns = append(warns, r.warn)
		}
	}
	o := providers.Outcome{Change: c}
	switch {
	case nFailed > 0:
		o.Status = providers.Failed
	case nUnknown > 0:
		o.Status = providers.Unknown
	case nApplied > 0:
		o.Status = providers.Applied
	case nSkipped > 0:
		o.Status = providers.Skipped
	default:
		o.Status = providers.AlreadyInState
	}
	if len(errs) > 0 {
		if len(warns) > 0 {
			errs = append(errs, warns)
		}
		o.Err = errors.Join(errs...)
	} else if len(warns) > 0 {
		o.Err = warns
	}
	return o
}

// deleted classifies the answer to a DELETE: a 404 means it was already gone.
func deleted(err error, format string, args ...any) userResult {
	switch {
	case err == nil:
		return applied()
	case httpStatus(err) == http.StatusNotFound:
		return already()
	}
	return writeFailure(err, format, args...)
}

// forEach runs fn(0..n-1) on at most limit goroutines. Writes already wait for the host's
// write slots; bounding the goroutines too keeps a 600-write apply at a handful of them
// instead of one parked goroutine per write.
func forEach(n, limit int, fn func(i int)) {
	limit = max(1, min(limit, n))
	if limit == 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
