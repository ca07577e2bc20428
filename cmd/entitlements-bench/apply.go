package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
	"github.com/entitlements-go/entitlements/runner"
	"github.com/entitlements-go/entitlements/validate"
)

// The apply benchmark shows that a large apply finishes without being refused, in the time
// its plan said, and survives a stop: it applies --changes membership changes per service to
// the fakes, which enforce the services' write limits, with the providers' write budgets at
// their defaults, on a simulated clock shared by the clients and the fakes (hours of pacing
// take seconds). The runs are those of a pipeline, in process, each with its own backends as
// a new process would have: `plan --out PLANFILE` (the estimate), `apply PLANFILE` stopped
// mid-way (its context cancelled when the clock reaches --kill-at of the estimate, as SIGINT
// would), `apply --resume PLANFILE` from the journal, and a last `plan`, which must be empty.

// The changes per service are spread over groups, changesPerGroup each (half additions, half
// removals): a reorganisation that touches a few hundred teams, not one member everywhere.
const changesPerGroup = 10

type applyOptions struct {
	people, changes int
	seed            int64
	killAt          float64 // fraction of the estimate at which the first apply is stopped
	budgetState     bool    // keep the GitHub write windows across the runs (StateDir)
	dir             string
	log             io.Writer
}

// applyTarget is one target's figures over the whole apply (both runs).
type applyTarget struct {
	Type string `json:"type"`
	// Changes are the members the plan adds and removes.
	Changes int `json:"changes"`
	// Writes are the requests the provider's estimate prices.
	Writes     int     `json:"writes"`
	PredictedS float64 `json:"predicted_s"`
	SimulatedS float64 `json:"simulated_s"`
	Requests   int64   `json:"requests"`
	LimitHits  int64   `json:"limit_hits"`
	Converged  bool    `json:"converged"`
}

type applyResult struct {
	People int `json:"people"`
	// ChangesPerService are the membership changes made on each service (GitHub teams, Azure
	// AD groups); Changes those of every target.
	ChangesPerService int     `json:"changes_per_service"`
	Changes           int     `json:"changes"`
	PredictedS        float64 `json:"predicted_s"`
	SimulatedS        float64 `json:"simulated_s"`
	Requests          int64   `json:"requests"`
	LimitHits         int64   `json:"limit_hits"`
	Resumes           int     `json:"resumes"`
	Converged         bool    `json:"converged"`
	// StoppedAtS is the simulated time at which the first apply was stopped; Stopped and
	// Resumed are the summaries of the two runs (runner.Outcome.Summary).
	StoppedAtS float64                 `json:"stopped_at_s"`
	Stopped    string                  `json:"stopped"`
	Resumed    string                  `json:"resumed"`
	Targets    map[string]*applyTarget `json:"targets"`
	Skipped    map[string]string       `json:"skipped,omitempty"`
	Notes      []string                `json:"notes"`
}

func cmdApplyBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("entitlements-bench --apply", flag.ContinueOnError)
	fs.Bool("apply", true, "large-apply benchmark against fakes that enforce the write limits, on a simulated clock")
	n := fs.Int("people", 5000, "number of people in the generated repo")
	changes := fs.Int("changes", 2000, "membership changes per service: on GitHub teams and, built with -tags aad, on Azure AD groups; half additions, half removals, 10 per group")
	killAt := fs.Float64("kill-at", 0.5, "stop the first apply when the simulated clock reaches this share of the plan's estimate (0 < x < 1), then resume it from its journal")
	budgetState := fs.Bool("budget-state", true, "keep the GitHub write windows across the stop and the resume (github.Options.StateDir); false: the resumed apply starts with empty windows")
	format := fs.String("format", "text", "output format: text or json")
	dir := fs.String("dir", "", "work here and keep the repo, plan file, journal and audit log (default: a temporary directory, removed after)")
	seed := fs.Int64("seed", 1, "generator seed")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "entitlements-bench: unknown --format %q (text, json)\n", *format)
		return exitUsage
	}
	if *n < 10 {
		fmt.Fprintln(stderr, "entitlements-bench: --people must be at least 10")
		return exitUsage
	}
	if *changes < 2 {
		fmt.Fprintln(stderr, "entitlements-bench: --changes must be at least 2 (one addition, one removal)")
		return exitUsage
	}
	if !(*killAt > 0 && *killAt < 1) {
		fmt.Fprintln(stderr, "entitlements-bench: --kill-at must be between 0 and 1 (a share of the estimated apply duration)")
		return exitUsage
	}
	work := *dir
	if work == "" {
		tmp, err := os.MkdirTemp("", "entitlements-apply-")
		if err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
			return exitError
		}
		defer os.RemoveAll(tmp)
		work = tmp
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
		return exitError
	}
	res, err := runApplyBench(ctx, applyOptions{people: *n, changes: *changes, seed: *seed, killAt: *killAt,
		budgetState: *budgetState, dir: work, log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
		return exitError
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		writeApplyText(stdout, res)
	}
	return exitOK
}

// applyGraph is the Graph side of the apply benchmark (binaries built with -tags aad):
// fakegraph on the benchmark's clock.
type applyGraph struct {
	url string
	// open is the opener of a run's Azure AD backend: with the provider's write pacing on
	// the clock (paced), or without (the setup).
	open   func(paced bool) aadOpen
	limits func(on bool) // the fake's write limits, off while the state is set up
	close  func()
}

func runApplyBench(ctx context.Context, o applyOptions) (*applyResult, error) {
	res := &applyResult{People: o.people, ChangesPerService: o.changes, Targets: map[string]*applyTarget{}, Skipped: map[string]string{}}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("the apply benchmark needs git: each apply writes the GitRepo audit log")
	}
	repoDir := filepath.Join(o.dir, "repo")
	st, err := synth.Write(repoDir, synth.Options{People: o.people, Seed: o.seed})
	if err != nil {
		return nil, err
	}
	uids, err := synthUIDs(filepath.Join(repoDir, "people.yaml"))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.log, "generated %d people, %d files\n", st.People, st.Files)

	// One simulated clock for the clients and the fakes, from the repo's reference day.
	clk := newFakeClock(synth.DefaultNow)
	gh := fakegithub.New(fakegithub.Options{AutoAccept: true, RateLimit: 1 << 30, Now: clk.Now})
	defer gh.Close()
	if err := seedSynthOrg(gh, uids, repoDir); err != nil {
		return nil, err
	}
	// The OUs of the groups the benchmark changes, one per service.
	changed := []string{synth.OUGitHub}
	upns := make([]string, len(uids))
	for i, u := range uids {
		upns[i] = u + "@corp.example.com"
	}
	graph, skip := startApplyGraph(upns, clk)
	graphURL := ""
	if skip != "" {
		res.Skipped["aad"] = skip
		fmt.Fprintf(o.log, "AZURE AD SKIPPED: %s\n", skip)
	} else {
		defer graph.close()
		graphURL = graph.url
		changed = append(changed, synth.OUAAD)
	}

	// LDAP OUs are calculated, never planned (no slapd): the writes measured are GitHub's
	// and Graph's.
	remote := filepath.Join(o.dir, "audit.git")
	if out, err := exec.CommandContext(ctx, "git", "init", "--quiet", "--bare", remote).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git init: %v: %s", err, out)
	}
	cfgPath := filepath.Join(repoDir, "config.yaml")
	if err := rewriteSynthConfig(cfgPath, "", gh.URL(), graphURL, remote, filepath.Join(o.dir, "audit-checkout")); err != nil {
		return nil, err
	}
	if err := setApplyCommitMessage(cfgPath); err != nil {
		return nil, err
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(repoDir); err != nil { // the people file name is relative to it
		return nil, err
	}
	defer os.Chdir(wd)
	now, err := validate.ParseNow(synth.DefaultNow.Format("2006-01-02"))
	if err != nil {
		return nil, err
	}

	// The changes: per service, members to remove (put in place by the setup) and members to
	// add, chosen against the calculated groups so that each is one membership change.
	contractors, err := synthContractors(filepath.Join(repoDir, "internal", "contractors.txt"))
	if err != nil {
		return nil, err
	}
	calcRes, err := calculateRepo(ctx, cfgPath, now)
	if err != nil {
		return nil, err
	}
	edits := map[string][]*groupEdit{} // OU → its edits
	for _, ou := range changed {
		if edits[ou], err = pickEdits(calcRes, ou, o.changes, uids, contractors, repoDir); err != nil {
			return nil, err
		}
		for _, e := range edits[ou] {
			if err := e.write(e.removes); err != nil {
				return nil, err
			}
		}
	}

	// The setup: the repo (with the members to remove) applied fast, the limits and the
	// write budgets off; it is not measured.
	t0 := time.Now()
	setup := planRun{config: cfgPath, now: now, apply: true,
		github: func(g *github.Options) {
			g.Now, g.Sleep = clk.Now, clk.Sleep
			g.WriteConcurrency, g.NoWritePacing = 8, true
		}}
	if graph != nil {
		setup.aad = graph.open(false)
	}
	if _, _, err := runPlan(ctx, setup); err != nil {
		return nil, fmt.Errorf("the setup apply failed: %w", err)
	}
	fmt.Fprintf(o.log, "applied the initial state in %s\n", time.Since(t0).Round(time.Millisecond))
	for _, es := range edits {
		for _, e := range es {
			if err := e.write(e.adds); err != nil {
				return nil, err
			}
		}
	}
	gh.SetSecondaryLimits(true)
	if graph != nil {
		graph.limits(true)
	}

	// The measured runs: the providers' defaults, on the clock.
	stateDir := filepath.Join(o.dir, "state")
	measured := planRun{config: cfgPath, now: now,
		github: func(g *github.Options) {
			g.Now, g.Sleep = clk.Now, clk.Sleep
			if o.budgetState {
				g.StateDir = stateDir
			}
		}}
	if graph != nil {
		measured.aad = graph.open(true)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, err
	}
	ar := &applyRuns{clk: clk, run: measured, targets: res.Targets}

	// plan --out PLANFILE: the estimate.
	saved, err := ar.planOut(ctx, filepath.Join(o.dir, "plan.json"), edits, o.changes)
	if err != nil {
		return nil, err
	}
	for _, t := range res.Targets {
		res.PredictedS += t.PredictedS
		res.Changes += t.Changes
	}
	if res.PredictedS == 0 {
		return nil, errors.New("the plan's estimate is 0 s: nothing to stop mid-way")
	}
	fmt.Fprintf(o.log, "planned %d membership changes, estimated apply duration %s\n", res.Changes, seconds(res.PredictedS))

	// apply PLANFILE, stopped mid-way, then apply --resume PLANFILE.
	gh.ResetStats()
	start := clk.Now()
	stopAt := start.Add(time.Duration(o.killAt * res.PredictedS * float64(time.Second)))
	jpath := filepath.Join(o.dir, "plan.json.journal")
	out, err := ar.apply(ctx, saved, jpath, false, stopAt)
	if err != nil {
		return nil, err
	}
	if out.Status != runner.Stopped {
		return nil, fmt.Errorf("the first apply was not stopped at %s: %s", stopAt.Sub(start), out.Summary())
	}
	res.StoppedAtS, res.Stopped = clk.Now().Sub(start).Seconds(), out.Summary()
	fmt.Fprintf(o.log, "first apply stopped at %s (simulated): %s\n", seconds(res.StoppedAtS), res.Stopped)
	// A resume that does not finish (a write budget that runs out, as MaxWait does when the
	// windows were lost) is a result, not an error: the last plan says what is left.
	out, err = ar.apply(ctx, saved, jpath, true, time.Time{})
	if err != nil {
		return nil, err
	}
	res.Resumes, res.Resumed = 1, out.Summary()
	res.SimulatedS = clk.Now().Sub(start).Seconds()
	fmt.Fprintf(o.log, "resumed apply: %s; %s simulated in all\n", res.Resumed, seconds(res.SimulatedS))
	ghStats := gh.Stats()

	// plan: nothing left to do.
	if res.Converged, err = ar.final(ctx); err != nil {
		return nil, err
	}
	var ghRequests, ghHits int64
	for _, t := range res.Targets {
		res.Requests += t.Requests
		res.LimitHits += t.LimitHits
		if t.Type == "github_org" || t.Type == "github_team" {
			ghRequests += t.Requests
			ghHits += t.LimitHits
		}
	}
	res.Notes = []string{
		"predicted_s is the plan's estimate (Plan.EstimatedDuration; per target TargetPlan.Estimate), as `plan` prints it",
		"simulated_s is the simulated time from the start of the first apply to the end of the resumed one; per target, from the end of the target applied before it to its last outcome, in both runs",
		"requests and limit_hits are the clients' counters over both apply runs (each reads its targets again before writing, as apply PLANFILE does); limit_hits counts secondary-limit, rate-limit and 429 answers",
		fmt.Sprintf("the changes: per service, %d membership changes over groups of the synthetic repo, %d per group, half additions (a person added to the group file), half removals (a person the setup put in, taken out of the file)", o.changes, changesPerGroup),
		fmt.Sprintf("fakegithub answered %d REST and GraphQL requests and %d secondary limits to the two apply runs", ghStats.REST+ghStats.GraphQL, ghStats.SecondaryLimitHits),
	}
	if !o.budgetState {
		res.Notes = append(res.Notes, "--budget-state=false: the resumed apply started with empty GitHub write windows")
	}
	if int64(ghStats.REST+ghStats.GraphQL) != ghRequests || int64(ghStats.SecondaryLimitHits) > ghHits {
		return nil, fmt.Errorf("the GitHub clients counted %d requests and %d limit hits, fakegithub %d and %d", ghRequests, ghHits,
			ghStats.REST+ghStats.GraphQL, ghStats.SecondaryLimitHits)
	}
	return res, nil
}

// setApplyCommitMessage names this benchmark in the audit log's commits.
func setApplyCommitMessage(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const e2e = "commit_message: entitlements-bench --e2e\n"
	if !bytes.Contains(b, []byte(e2e)) {
		return fmt.Errorf("%s has no %q (rewriteSynthConfig changed?)", path, strings.TrimSpace(e2e))
	}
	return os.WriteFile(path, bytes.Replace(b, []byte(e2e), []byte("commit_message: entitlements-bench --apply\n"), 1), 0o644)
}

// calculateRepo calculates the repo (its LDAP OUs are dummies: no directory is read).
func calculateRepo(ctx context.Context, cfgPath string, now time.Time) (*calc.Result, error) {
	run, err := openRun(ctx, planRun{config: cfgPath, now: now})
	defer run.close()
	return run.res, run.withLog(err)
}

// synthContractors lists the people of internal/contractors.txt: a group of the synthetic repo
// without "contractors = all" leaves them out, so a contractor added to it is no change.
func synthContractors(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "username = "); ok {
			out[u] = true
		}
	}
	return out, sc.Err()
}

// groupEdit is what the benchmark does to one group file: the setup adds removes to it, the
// change takes them out again and adds adds.
type groupEdit struct {
	path          string
	original      []byte
	removes, adds []string
}

// write sets the file to its original content plus a "username = " line per member.
func (e *groupEdit) write(members []string) error {
	var b bytes.Buffer
	b.Write(e.original)
	if len(e.original) > 0 && e.original[len(e.original)-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, m := range members {
		fmt.Fprintf(&b, "username = %s\n", m)
	}
	return os.WriteFile(e.path, b.Bytes(), 0o644)
}

// pickEdits spreads n membership changes over the groups of ou, changesPerGroup per group
// (more when the OU has too few groups), the groups evenly spaced in key order: half of each
// group's changes remove people (who are no members of it now), half add people (neither
// members nor to be removed). Contractors are never picked (see synthContractors).
func pickEdits(res *calc.Result, ou string, n int, uids []string, contractors map[string]bool, repoDir string) ([]*groupEdit, error) {
	var groups []*calc.Group
	for _, g := range res.Groups {
		if g.OU == ou {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("the synthetic repo has no group in %s", ou)
	}
	var pool []string
	for _, u := range uids {
		if !contractors[u] {
			pool = append(pool, u)
		}
	}
	per := max(changesPerGroup, (n+len(groups)-1)/len(groups))
	count := (n + per - 1) / per
	var out []*groupEdit
	for i := range count {
		g := groups[i*len(groups)/count]
		c := min(per, n-i*per)
		members := map[string]bool{}
		for _, m := range g.Members {
			members[m] = true
		}
		var picked []string
		for k := 0; k < len(pool) && len(picked) < c; k++ {
			// A prime stride from a different start per group: people from all over the org.
			u := pool[(i*7919+k*104729)%len(pool)]
			if !members[u] && !slices.Contains(picked, u) {
				picked = append(picked, u)
			}
		}
		if len(picked) < c {
			return nil, fmt.Errorf("%s: only %d people are not members, %d changes asked for", g.Key, len(picked), c)
		}
		path := g.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(repoDir, path)
		}
		orig, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, &groupEdit{path: path, original: orig, removes: picked[:c/2], adds: picked[c/2:]})
	}
	return out, nil
}

// applyRuns are the measured runs of one benchmark: the clock, the run settings, and the
// figures they fill in per target.
type applyRuns struct {
	clk     *fakeClock
	run     planRun
	targets map[string]*applyTarget
}

// measuredTypes are the target types whose figures the benchmark reports.
var measuredTypes = []string{"github_org", "github_team", "aad"}

// planOut is `plan --out PLANFILE`: the plan, held to the edits (each OU changes exactly as
// many members as the benchmark edited), written and read back as a plan file; it fills in
// the targets' estimates.
func (a *applyRuns) planOut(ctx context.Context, path string, edits map[string][]*groupEdit, n int) (saved *deploy.SavedPlan, err error) {
	run, err := openRun(ctx, a.run)
	defer run.close()
	defer func() { err = run.withLog(err) }()
	if err != nil {
		return nil, err
	}
	plan, err := runner.Plan(ctx, run.repo, run.res, a.options(run, nil))
	if err == nil {
		err = plan.Err()
	}
	if err != nil {
		return nil, err
	}
	for _, t := range plan.Targets {
		if !slices.Contains(measuredTypes, t.Type) {
			continue
		}
		at := &applyTarget{Type: t.Type, Changes: memberChanges(t), Converged: true}
		if e := t.Estimate; e != nil {
			at.Writes, at.PredictedS = e.Total(), e.Duration.Seconds()
		}
		if want := n * boolInt(len(edits[t.OU]) > 0); at.Changes != want {
			return nil, fmt.Errorf("the plan of %s has %d membership changes, the benchmark made %d", t.OU, at.Changes, want)
		}
		a.targets[t.OU] = at
	}
	for ou := range edits {
		if a.targets[ou] == nil {
			return nil, fmt.Errorf("the plan has no target %s", ou)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	_, err = plan.Save(deploy.InputsOf(run.repo)).WriteTo(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return deploy.ReadPlan(bytes.NewReader(b))
}

// apply is `apply PLANFILE` (resume false) or `apply --resume PLANFILE`, in a run of its own.
// A non-zero stopAt stops it (its context cancelled) when the clock reaches it. It adds the
// run's simulated time, requests and limit hits to the targets.
func (a *applyRuns) apply(ctx context.Context, saved *deploy.SavedPlan, journalPath string, resume bool, stopAt time.Time) (out *runner.Outcome, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !stopAt.IsZero() {
		a.clk.at(stopAt, cancel)
	}
	run, err := openRun(ctx, a.run)
	defer run.close()
	defer func() { err = run.withLog(err) }()
	if err != nil {
		return nil, err
	}
	times := &targetTimes{clk: a.clk, next: run.logger.Handler(), last: map[string]time.Time{}}
	opt := a.options(run, slog.New(times))
	opt.Saved, opt.Journal, opt.Resume = saved, journalPath, resume
	what := "apply"
	if resume {
		what = "apply --resume"
	}
	plan, err := runner.Plan(ctx, run.repo, run.res, opt)
	if err == nil {
		err = plan.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	times.begin()
	out, err = runner.Apply(ctx, run.repo, run.res, plan, opt)
	if err != nil && !(out != nil && out.Status == runner.Stopped && errors.Is(err, context.Canceled)) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if out.Status == runner.Failed {
		return nil, fmt.Errorf("%s: %s: %w", what, out.Summary(), out.Err())
	}
	sim := times.durations()
	for i, t := range plan.Targets {
		at := a.targets[t.OU]
		if at == nil {
			continue
		}
		c := t.Counters
		// A run that did not fail has a report (runner.Outcome.Status).
		if r := out.Report.Targets[i]; r != nil && r.Counters != nil {
			c = r.Counters // the read's and the writes'
		}
		req, hits := clientCounters(t.Type, c)
		at.Requests += req
		at.LimitHits += hits
		at.SimulatedS += sim[t.OU].Seconds()
	}
	return out, nil
}

// final is the last `plan`: converged when no measured target has a change left.
func (a *applyRuns) final(ctx context.Context) (converged bool, err error) {
	run, err := openRun(ctx, a.run)
	defer run.close()
	defer func() { err = run.withLog(err) }()
	if err != nil {
		return false, err
	}
	plan, err := runner.Plan(ctx, run.repo, run.res, a.options(run, nil))
	if err == nil {
		err = plan.Err()
	}
	if err != nil {
		return false, err
	}
	converged = true
	for _, t := range plan.Targets {
		if at := a.targets[t.OU]; at != nil {
			at.Converged = len(t.Changes) == 0
			converged = converged && at.Converged
		}
	}
	return converged, nil
}

// options are the runner's options of a measured run: the removal guard off (the benchmark
// removes on purpose), the audit log written.
func (a *applyRuns) options(run *benchRun, logger *slog.Logger) runner.Options {
	if logger == nil {
		logger = run.logger
	}
	return runner.Options{Backends: run.set.Registry, Force: true, Logger: logger}
}

// clientCounters are a target's requests and limit answers from its provider's counters.
func clientCounters(typ string, c map[string]int64) (requests, limitHits int64) {
	switch typ {
	case "github_org", "github_team":
		return c["rest_requests"] + c["graphql_requests"], c["rate_limited"]
	}
	return 0, 0
}

// memberChanges are the members a target's plan adds and removes.
func memberChanges(t *deploy.TargetPlan) int {
	n := 0
	for _, c := range t.Changes {
		n += len(c.Add) + len(c.Remove)
	}
	return n
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// targetTimes is the runner's log handler of an apply run: it notes the simulated time of the
// last record that names each target (its "ou"). deploy.Apply writes the targets one after
// another and logs every outcome of a target ("write", with its ou) when the target is done,
// so a target took from the end of the one before it (or the start) to its last record.
// Records go on to next as they would without it.
type targetTimes struct {
	clk   *fakeClock
	next  slog.Handler
	start time.Time

	mu    sync.Mutex
	order []string
	last  map[string]time.Time
}

// begin marks the start of the apply: records before it (the plan's) are forgotten.
func (h *targetTimes) begin() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start, h.order = h.clk.Now(), nil
	clear(h.last)
}

func (h *targetTimes) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h *targetTimes) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "ou" {
			return true
		}
		h.mu.Lock()
		ou := a.Value.String()
		if _, ok := h.last[ou]; !ok {
			h.order = append(h.order, ou)
		}
		h.last[ou] = h.clk.Now()
		h.mu.Unlock()
		return false
	})
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

// WithAttrs and WithGroup hand derived loggers to next: the records timed are those logged
// on the runner's logger itself.
func (h *targetTimes) WithAttrs(as []slog.Attr) slog.Handler { return h.next.WithAttrs(as) }
func (h *targetTimes) WithGroup(name string) slog.Handler    { return h.next.WithGroup(name) }

// durations are the targets' simulated times.
func (h *targetTimes) durations() map[string]time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]time.Duration{}
	prev := h.start
	for _, ou := range h.order {
		t := h.last[ou]
		out[ou] = t.Sub(prev)
		prev = t
	}
	return out
}

// seconds prints a number of seconds as a duration.
func seconds(s float64) string {
	return time.Duration(math.Round(s) * float64(time.Second)).String()
}

// deviation is how far simulated is from predicted, in percent ("-" without a prediction).
func deviation(predicted, simulated float64) string {
	if predicted == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(simulated-predicted)/predicted)
}

func writeApplyText(w io.Writer, r *applyResult) {
	fmt.Fprintf(w, "apply benchmark: %d people; %d membership changes per service (%d per group, half additions, half removals); write budgets at their defaults; simulated clock\n",
		r.People, r.ChangesPerService, changesPerGroup)
	fmt.Fprintf(w, "first apply stopped at %s: %s; resumed from its journal: %s\n", seconds(r.StoppedAtS), r.Stopped, r.Resumed)
	for _, k := range slices.Sorted(maps.Keys(r.Skipped)) {
		fmt.Fprintf(w, "SKIPPED %s: %s\n", k, r.Skipped[k])
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "NO"
	}
	fmt.Fprintf(w, "\n%-16s %-12s %7s %6s %11s %11s %7s %8s %10s %9s\n", "target", "type", "changes", "writes", "predicted", "simulated", "diff", "requests", "limit hits", "converged")
	writes := 0
	for _, ou := range slices.Sorted(maps.Keys(r.Targets)) {
		t := r.Targets[ou]
		writes += t.Writes
		fmt.Fprintf(w, "%-16s %-12s %7d %6d %11s %11s %7s %8d %10d %9s\n", ou, t.Type, t.Changes, t.Writes, seconds(t.PredictedS), seconds(t.SimulatedS),
			deviation(t.PredictedS, t.SimulatedS), t.Requests, t.LimitHits, yes(t.Converged))
	}
	fmt.Fprintf(w, "%-16s %-12s %7d %6d %11s %11s %7s %8d %10d %9s\n", "total", "", r.Changes, writes, seconds(r.PredictedS), seconds(r.SimulatedS),
		deviation(r.PredictedS, r.SimulatedS), r.Requests, r.LimitHits, yes(r.Converged))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
