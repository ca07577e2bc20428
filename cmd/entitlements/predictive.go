package main

import (
	"fmt"
	"io"
	"os"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
)

// predictiveEnv names the predictive state directory (spec providers §2.2): a flat directory
// of files named by DN, or a checkout of the GitRepo audit log.
const predictiveEnv = "ENTITLEMENTS_PREDICTIVE_STATE_DIR"

// cmdExt holds what plan and apply share beyond the flags: the predictive state (loaded
// once per command, shared by every provider that consults it) and the provider settings
// the e2e benchmark injects (fake endpoints, credentials); nil hooks leave the defaults.
type cmdExt struct {
	predictiveDir string // overrides the environment variable
	predLoaded    bool
	pred          *cache.Predictive
	predErr       error

	githubHook func(*github.Options)
	aadHook    any // func(*aad.Options) in binaries built with -tags aad
	// providers, when set, serves every target of a real (not --state) plan or apply: tests
	// run the audited path with an in-memory provider.
	providers providers.Factory
}

// predictiveState loads the predictive state for a command that reads the real targets,
// unless --full is given or none is configured. A directory that does not exist is an error
// (a typo must not silently turn it off).
func (c *common) predictiveState() (*cache.Predictive, error) {
	if c.full || !c.readsTargets {
		return nil, nil
	}
	e := &c.ext
	if !e.predLoaded {
		e.predLoaded = true
		dir := e.predictiveDir
		if dir == "" {
			dir = os.Getenv(predictiveEnv)
		}
		if dir != "" {
			e.pred, e.predErr = cache.LoadPredictive(dir)
		}
	}
	return e.pred, e.predErr
}

// writePredictiveLine says how many groups were trusted from the predictive state.
func writePredictiveLine(w io.Writer, c *common) {
	if c.full || c.ext.pred == nil {
		return
	}
	fmt.Fprintf(w, "Predictive state: %d of %d cached group(s) trusted without reading them (--full reads every group)\n",
		c.ext.pred.Hits(), c.ext.pred.Len())
}
