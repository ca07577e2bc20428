package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// JSON documents carry their format version, and a plan's own object holds nothing that
// varies between runs: two runs against the same state print the same "plan" (timings and
// counters live under "timings").
func TestJSONVersionAndStablePlan(t *testing.T) {
	args := []string{"plan", "--config", exampleConfig, "--now", "2026-01-01", "--state", "../../examples/state.json", "--format", "json"}
	var plans [2]json.RawMessage
	for i := range plans {
		code, stdout, stderr := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc struct {
			Version int             `json:"version"`
			Plan    json.RawMessage `json:"plan"`
			Timings struct {
				CalcMS  *int64                     `json:"calculation_ms"`
				Targets map[string]json.RawMessage `json:"targets"`
			} `json:"timings"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Version != jsonFormatVersion || doc.Timings.CalcMS == nil || len(doc.Timings.Targets) != 2 {
			t.Fatalf("version %d, timings %+v", doc.Version, doc.Timings)
		}
		if bytes.Contains(doc.Plan, []byte("_ms")) || bytes.Contains(doc.Plan, []byte("counters")) {
			t.Errorf("timings inside the plan object: %s", doc.Plan)
		}
		plans[i] = doc.Plan
	}
	if !bytes.Equal(plans[0], plans[1]) {
		t.Errorf("two runs printed different plans:\n%s\n%s", plans[0], plans[1])
	}

	code, stdout, _ := runCLI(t, "explain", "--config", exampleConfig, "--now", "2026-01-01", "--group", "apps/wiki", "--person", "bob", "--format", "json")
	var ex struct {
		Version int    `json:"version"`
		Group   string `json:"group"`
	}
	if err := json.Unmarshal([]byte(stdout), &ex); err != nil || code != exitOK || ex.Version != jsonFormatVersion || ex.Group != "apps/wiki" {
		t.Errorf("explain json: exit %d, %+v, %v", code, ex, err)
	}
}
