package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// estimating is the fake provider with a write budget: each change is one write taking per.
type estimating struct {
	*fake.Provider
	per time.Duration
}

func (e estimating) Estimate(changes []*providers.Change) providers.Estimate {
	return providers.Estimate{Writes: map[string]int{"group": len(changes)}, Duration: time.Duration(len(changes)) * e.per}
}

// runEstimating runs plan or apply against the example's state through estimating.
func runEstimating(t *testing.T, per time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	p := estimating{realTargets(t), per}
	var out, errb bytes.Buffer
	ext := &cmdExt{providers: func(*config.OU) (providers.Provider, error) { return p, nil }}
	code = planOrApplyExt(context.Background(), args[0], args[1:], &out, &errb, ext)
	return code, out.String(), errb.String()
}

// Issue 25.2: plan prints each target's estimate (text) and carries it (JSON, a new key:
// same version); --max-apply-duration refuses a plan whose estimate exceeds it, with the
// estimate, writing no plan file and applying nothing.
func TestCLIPlanEstimate(t *testing.T) {
	base := []string{"--config", exampleConfig, "--now", "2026-01-01"}
	code, stdout, stderr := runEstimating(t, time.Minute, append([]string{"plan"}, base...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	mustContain(t, "plan", stdout, "Estimate: apps (ldap): 4 writes (group 4), about 4m0s\n",
		"Estimate: pizza_teams (ldap): 1 writes (group 1), about 1m0s\n", "Estimated apply duration: about 5m0s\n")

	code, stdout, stderr = runEstimating(t, time.Minute, append([]string{"plan", "--format", "json"}, base...)...)
	if code != exitOK {
		t.Fatalf("json: exit %d\n%s", code, stderr)
	}
	var doc struct {
		Version int `json:"version"`
		Plan    struct {
			Targets []struct {
				OU       string `json:"ou"`
				Estimate *struct {
					Writes  map[string]int `json:"writes"`
					Seconds int64          `json:"apply_seconds"`
				} `json:"estimate"`
			} `json:"targets"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if doc.Version != jsonFormatVersion || len(doc.Plan.Targets) != 2 {
		t.Fatalf("version %d, %d targets", doc.Version, len(doc.Plan.Targets))
	}
	for i, want := range []int64{240, 60} {
		e := doc.Plan.Targets[i].Estimate
		if e == nil || e.Seconds != want || e.Writes["group"] != int(want/60) {
			t.Errorf("%s: estimate %+v, want %ds", doc.Plan.Targets[i].OU, e, want)
		}
	}

	// No estimating provider: no estimate line, no key.
	if _, stdout, _ := runReal(t, realTargets(t), append([]string{"plan", "--format", "json"}, base...)...); strings.Contains(stdout, `"estimate"`) {
		t.Errorf("an estimate without an estimating provider:\n%s", stdout)
	}

	// The plan file carries the estimates, and show prints them as plan did.
	saved := filepath.Join(t.TempDir(), "saved.json")
	if code, _, stderr := runEstimating(t, time.Minute, append([]string{"plan", "--out", saved}, base...)...); code != exitOK {
		t.Fatalf("plan --out: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := runCLI(t, "show", saved); code != exitOK ||
		!strings.Contains(stdout, "Estimate: apps (ldap): 4 writes (group 4), about 4m0s\n") || !strings.Contains(stdout, "Estimated apply duration: about 5m0s\n") {
		t.Errorf("show: exit %d\n%s\n%s", code, stdout, stderr)
	}

	planFile := filepath.Join(t.TempDir(), "p.json")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"plan over", append([]string{"plan", "--max-apply-duration", "4m", "--out", planFile}, base...), exitError,
			"entitlements plan: the estimated apply duration, about 5m0s, exceeds --max-apply-duration 4m0s (no plan file written)"},
		{"apply over", append([]string{"apply", "--max-apply-duration", "299s", "--yes"}, base...), exitError,
			"entitlements apply: the estimated apply duration, about 5m0s, exceeds --max-apply-duration 4m59s (nothing was applied)"},
		{"plan within", append([]string{"plan", "--max-apply-duration", "5m"}, base...), exitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runEstimating(t, time.Minute, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, tc.code, tc.want, stdout, stderr)
			}
			if strings.Contains(stdout, "Apply") {
				t.Errorf("applied:\n%s", stdout)
			}
			if _, err := os.Stat(planFile); !os.IsNotExist(err) {
				t.Errorf("plan file written: %v", err)
			}
		})
	}
}
