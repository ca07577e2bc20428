package main

import (
	"fmt"
	"io"
	"os"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/providers"
)

// predictiveEnv names the predictive state directory (spec providers §2.2): a flat directory
// of files named by DN, or a checkout of the GitRepo audit log.
const predictiveEnv = "ENTITLEMENTS_PREDICTIVE_STATE_DIR"

// cmdExt is what tests inject into plan and apply (planOrApplyExt).
type cmdExt struct {
	// providers, when set, serves every target of a real (not --state) plan or apply: tests
	// run the audited path with an in-memory provider.
	providers providers.Factory
}

// predictiveState loads the predictive state for a command that reads the real targets,
// unless --full is given or none is configured; once per run, shared by every provider that
// consults it. A directory that does not exist is an error (a typo must not silently turn it
// off).
func (s *session) predictiveState() (*cache.Predictive, error) {
	if s.flags.full || !s.flags.readsTargets {
		return nil, nil
	}
	if !s.predLoaded {
		s.predLoaded = true
		if dir := os.Getenv(predictiveEnv); dir != "" {
			s.pred, s.predErr = cache.LoadPredictive(dir)
		}
	}
	return s.pred, s.predErr
}

// writePredictiveLine says how many groups were trusted from the predictive state.
func writePredictiveLine(w io.Writer, s *session) {
	if s.flags.full || s.pred == nil {
		return
	}
	fmt.Fprintf(w, "Predictive state: %d of %d cached group(s) trusted without reading them (--full reads every group)\n",
		s.pred.Hits(), s.pred.Len())
}
