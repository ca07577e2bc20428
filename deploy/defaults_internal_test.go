package deploy

import (
	"log/slog"
	"testing"

	"github.com/entitlements-go/entitlements/guard"
)

// Zero options take the documented defaults: a zero read concurrency would deadlock Build
// (found by mutation testing, where it showed only as a hang).
func TestWithDefaults(t *testing.T) {
	for _, n := range []int{0, -1} {
		o := Options{ReadConcurrency: n}.withDefaults()
		if o.ReadConcurrency != 4 || o.Logger == nil || o.Guard == nil || *o.Guard != guard.Default() {
			t.Errorf("ReadConcurrency %d: %+v", n, o)
		}
	}
	g := guard.Guard{MaxRemovalShare: 0.5}
	l := slog.Default()
	if o := (Options{ReadConcurrency: 2, Guard: &g, Logger: l}).withDefaults(); o.ReadConcurrency != 2 || o.Guard != &g || o.Logger != l {
		t.Errorf("set values replaced: %+v", o)
	}
}
