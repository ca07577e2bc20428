package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBenchApplyContract runs the apply benchmark on a small repo with enough changes to fill
// GitHub's hourly budget (600 writes: 450 in the first hour, the rest after it), and checks its
// JSON contract and what it exists to show: with the write windows kept across the stop and
// the resume, no limit is hit, the targets converge and the apply takes the time the plan
// said; without them, the resumed run bursts into GitHub's secondary limit. Without -tags aad
// the targets are GitHub's only, and the benchmark says Azure AD was skipped.
func TestBenchApplyContract(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a repo, starts fakes and applies it")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	keys := []string{"predicted_s", "simulated_s", "requests", "limit_hits", "converged"}
	for _, tc := range []struct {
		name        string
		budgetState bool
	}{
		{"windows kept", true},
		{"windows lost", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--apply", "--people", "200", "--changes", "600", "--format", "json", "--dir", t.TempDir()}
			if !tc.budgetState {
				args = append(args, "--budget-state=false")
			}
			code, stdout, stderr := runBench(t, args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			for _, k := range append(keys, "resumes", "targets", "stopped_at_s", "stopped", "resumed") {
				if _, ok := out[k]; !ok {
					t.Errorf("no %q", k)
				}
			}
			targets, _ := out["targets"].(map[string]any)
			want := []string{"github/org", "github/teams"}
			if skipped, _ := out["skipped"].(map[string]any); skipped["aad"] == nil {
				want = append(want, "aad/groups")
			}
			if len(targets) != len(want) {
				t.Errorf("targets %v, want %v", targets, want)
			}
			for _, ou := range want {
				tv, ok := targets[ou].(map[string]any)
				if !ok {
					t.Fatalf("no target %s:\n%s", ou, stdout)
				}
				for _, k := range keys {
					if _, ok := tv[k]; !ok {
						t.Errorf("target %s lacks %q", ou, k)
					}
				}
			}
			teams := targets["github/teams"].(map[string]any)
			num := func(m map[string]any, k string) float64 { return m[k].(float64) }
			predicted, simulated := num(out, "predicted_s"), num(out, "simulated_s")
			// 600 writes at the defaults: an hour for the first 450, 1 s apart after.
			if predicted != 3600+149 || num(teams, "changes") != 600 || num(teams, "predicted_s") != predicted {
				t.Errorf("predicted %v s, teams %v", predicted, teams)
			}
			if math.Abs(num(out, "stopped_at_s")-predicted/2) > 1 || !strings.HasPrefix(out["stopped"].(string), "stopped (resumable: ") ||
				num(out, "resumes") != 1 {
				t.Errorf("stopped at %v s: %v, resumes %v", out["stopped_at_s"], out["stopped"], out["resumes"])
			}
			if tc.budgetState {
				if num(out, "limit_hits") != 0 || out["converged"] != true || out["resumed"] != "done" ||
					math.Abs(simulated-predicted) > 0.1*predicted || num(teams, "simulated_s") != simulated {
					t.Errorf("limit hits %v, converged %v, resumed %v, simulated %v s of %v s predicted (teams %v s)",
						out["limit_hits"], out["converged"], out["resumed"], simulated, predicted, teams["simulated_s"])
				}
			} else if num(out, "limit_hits") == 0 || num(teams, "limit_hits") != num(out, "limit_hits") {
				t.Errorf("a resume without the windows hit no limit: %v (teams %v)", out["limit_hits"], teams["limit_hits"])
			}
			if num(out, "requests") < 600 || num(teams, "requests") < 600 {
				t.Errorf("requests %v (teams %v): fewer than the writes", out["requests"], teams["requests"])
			}
		})
	}
}

// The text format is a table: one row per target and a total, with the estimate against the
// simulated duration.
func TestApplyText(t *testing.T) {
	var b strings.Builder
	writeApplyText(&b, &applyResult{People: 5000, ChangesPerService: 2000, Changes: 2000, PredictedS: 14599, SimulatedS: 14600,
		Requests: 2558, Resumes: 1, Converged: true, StoppedAtS: 7299.5, Stopped: "stopped (resumable: 100 of 200 done)", Resumed: "done",
		Targets: map[string]*applyTarget{
			"github/org":   {Type: "github_org", Requests: 108, Converged: true},
			"github/teams": {Type: "github_team", Changes: 2000, Writes: 2000, PredictedS: 14599, SimulatedS: 14600, Requests: 2450, Converged: true},
		},
		Skipped: map[string]string{"aad": "no Azure AD"}})
	got := b.String()
	for _, want := range []string{
		"5000 people; 2000 membership changes per service",
		"stopped at 2h1m40s: stopped (resumable: 100 of 200 done); resumed from its journal: done",
		"SKIPPED aad: no Azure AD",
		"github/org       github_org         0      0          0s          0s       -      108          0       yes",
		"github/teams     github_team     2000   2000     4h3m19s     4h3m20s   +0.0%     2450          0       yes",
		"total                            2000   2000     4h3m19s     4h3m20s   +0.0%     2558          0       yes",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
}

// The clock moves only when waited on, to where the longest wait ends; an event inside a wait
// stops the clock at its time and, when it ends the wait's context, ends the wait there.
func TestFakeClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newFakeClock(t0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var fired []string
	c.at(t0.Add(90*time.Second), cancel)
	c.at(t0.Add(30*time.Second), func() { fired = append(fired, "30s") })
	c.at(t0.Add(30*time.Second), func() { fired = append(fired, "30s again") })
	for _, step := range []struct {
		d    time.Duration
		want time.Duration // the clock after the wait
		err  error
	}{
		{-time.Second, 0, nil},
		{20 * time.Second, 20 * time.Second, nil},
		{20 * time.Second, 40 * time.Second, nil}, // runs both events at 30 s
		{time.Minute, 90 * time.Second, context.Canceled},
		{time.Minute, 90 * time.Second, context.Canceled}, // a wait on an ended context does not move the clock
	} {
		err := c.Sleep(ctx, step.d)
		if got := c.Now().Sub(t0); got != step.want || !errors.Is(err, step.err) {
			t.Fatalf("Sleep(%s): clock at %s (%v), want %s (%v)", step.d, got, err, step.want, step.err)
		}
	}
	if strings.Join(fired, ",") != "30s,30s again" {
		t.Fatalf("events run: %v", fired)
	}
}
