package main

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// TestBenchE2EContract runs the e2e benchmark on a tiny repo and checks its JSON contract and
// the properties it exists to show: a no-op cold plan, a predictive plan without member reads,
// and a change run that reads only what changed.
func TestBenchE2EContract(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and applies a repo")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	code, stdout, stderr := runBench(t, "--e2e", "--people", "60", "--latency", "1ms", "--format", "json", "--dir", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	keys := []string{"wall_ms", "requests", "connections", "ldap_searches", "predictive_hits", "member_reads", "changes", "targets"}
	runs := map[string]map[string]any{}
	for _, run := range []string{"cold", "predictive", "change"} {
		r, ok := out[run].(map[string]any)
		if !ok {
			t.Fatalf("no %q object:\n%s", run, stdout)
		}
		for _, k := range keys {
			if _, ok := r[k]; !ok {
				t.Errorf("%s lacks %q", run, k)
			}
		}
		for ou, tv := range r["targets"].(map[string]any) {
			for _, k := range keys[:len(keys)-1] {
				if _, ok := tv.(map[string]any)[k]; !ok {
					t.Errorf("%s target %s lacks %q", run, ou, k)
				}
			}
		}
		runs[run] = r
	}
	num := func(run, k string) float64 { return runs[run][k].(float64) }
	if num("cold", "changes") != 0 || num("cold", "predictive_hits") != 0 || num("cold", "member_reads") == 0 {
		t.Errorf("cold run: %v", runs["cold"])
	}
	if num("predictive", "changes") != 0 || num("predictive", "member_reads") != 0 || num("predictive", "predictive_hits") == 0 {
		t.Errorf("predictive run: %v", runs["predictive"])
	}
	if num("change", "changes") == 0 || num("change", "member_reads") == 0 || num("change", "member_reads") >= num("cold", "member_reads") {
		t.Errorf("change run: %v", runs["change"])
	}
	for run, r := range runs {
		for host, h := range r["hosts"].(map[string]any) {
			hm := h.(map[string]any)
			if hm["connections"].(float64) > hm["pool"].(float64) {
				t.Errorf("%s: %s opened %v connections, pool %v", run, host, hm["connections"], hm["pool"])
			}
		}
	}
}
