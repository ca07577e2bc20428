package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

type planFlags struct {
	common
	format     string
	state      string
	force      bool
	maxShare   float64
	maxDeleted int
	maxGroup   float64
	maxTotal   float64
}

func (p *planFlags) register(fs *flag.FlagSet) {
	p.common.register(fs)
	fs.StringVar(&p.format, "format", "text", "output format: text or json")
	fs.BoolVar(&p.full, "full", false, "read every group from its provider, ignoring the predictive state of ENTITLEMENTS_PREDICTIVE_STATE_DIR")
	fs.StringVar(&p.state, "state", "", "plan against an in-memory fake provider seeded from this state file (canonical calc JSON) instead of the real systems")
	fs.BoolVar(&p.force, "force", false, "disable the removal guard for this run")
	g := providers.DefaultGuard()
	fs.Float64Var(&p.maxShare, "max-removal-share", g.MaxRemovalShare, "refuse a target plan removing more than this share of its memberships")
	fs.IntVar(&p.maxDeleted, "max-deleted-groups", g.MaxDeletedGroups, "refuse a target plan deleting more groups than this")
	fs.Float64Var(&p.maxGroup, "max-group-removal-share", g.MaxGroupRemovalShare, "refuse a target plan removing more than this share of one group's members")
	fs.Float64Var(&p.maxTotal, "max-total-removal-share", g.MaxTotalRemovalShare, "refuse the targets of a run that together remove more than this share of all memberships (0: the --max-removal-share value)")
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return planOrApply(ctx, "plan", args, stdout, stderr)
}

func cmdApply(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return planOrApply(ctx, "apply", args, stdout, stderr)
}

func planOrApply(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	var pf planFlags
	pf.register(fs)
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if pf.format != "text" && pf.format != "json" {
		fmt.Fprintf(stderr, "entitlements %s: unknown --format %q (text, json)\n", mode, pf.format)
		return exitUsage
	}
	defer pf.stop()
	prog := newProgress(stderr)
	prog.begin("calculating")
	repo, res, code := calculate(ctx, &pf.common, prog.wrap(stderr))
	prog.end()
	if res == nil {
		return code
	}
	factories, err := providerFactories(pf.state, repo.Config(), &pf.common)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
		return exitUsage
	}
	guard := providers.Guard{MaxRemovalShare: pf.maxShare, MinRemovals: providers.DefaultGuard().MinRemovals,
		MaxDeletedGroups: pf.maxDeleted, MaxGroupRemovalShare: pf.maxGroup, MaxTotalRemovalShare: pf.maxTotal}
	opt := deploy.Options{Providers: factories, Guard: &guard, Force: pf.force,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	if prog != nil {
		opt.Progress = prog.target
	}
	prog.begin("reading targets")
	plan, err := deploy.Build(ctx, res, repo.Config(), opt)
	prog.end()
	if err != nil {
		fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
		return exitError
	}
	if pf.format == "json" {
		writePlanJSON(stdout, plan)
	} else {
		writePlanText(stdout, plan)
	}
	failed := plan.Err() != nil
	if mode == "apply" {
		rep := deploy.Apply(ctx, plan, opt)
		writeReport(stdout, rep)
		failed = failed || rep.Err() != nil
	}
	if failed {
		if err := plan.Err(); err != nil {
			fmt.Fprintf(stderr, "entitlements %s: %v\n", mode, err)
			if hint := guardHint(plan); hint != "" {
				fmt.Fprintf(stderr, "entitlements %s: %s\n", mode, hint)
			}
		}
		return exitError
	}
	return exitOK
}

// providerFactories wires the concrete providers by backend type. With a state file every
// type is served by one fake provider, so the bundled example plans with no servers at all.
func providerFactories(state string, cfg *config.Config, c *common) (map[string]deploy.Factory, error) {
	if state != "" {
		fp, err := fake.LoadState(state)
		if err != nil {
			return nil, err
		}
		f := func(*config.OU) (providers.Provider, error) { return fp, nil }
		out := map[string]deploy.Factory{}
		for _, ou := range cfg.OUs {
			if ou.Type != "dummy" {
				out[ou.Type] = f
			}
		}
		return out, nil
	}
	return realFactories(c), nil
}

func writePlanText(w io.Writer, plan *deploy.Plan) {
	for _, t := range plan.Targets {
		refused := deploy.Refused(t.Err)
		if t.Err != nil && !refused {
			fmt.Fprintf(w, "%s (%s): ERROR: %v\n", t.OU, t.Type, t.Err)
			continue
		}
		if refused {
			// The changes are shown so that the operator can judge the refusal.
			fmt.Fprintf(w, "%s (%s): REFUSED: %v; %s\n", t.OU, t.Type, t.Err, overrideFlag(t.Err))
			fmt.Fprintf(w, "%s (%s): %d change(s) refused, not applied:\n", t.OU, t.Type, len(t.Changes))
		} else if len(t.Changes) == 0 {
			fmt.Fprintf(w, "%s (%s): no changes\n", t.OU, t.Type)
			continue
		} else {
			fmt.Fprintf(w, "%s (%s): %d change(s)\n", t.OU, t.Type, len(t.Changes))
		}
		for _, c := range t.Changes {
			switch c.Kind {
			case providers.CreateContainer:
				fmt.Fprintf(w, "  + create container for %s\n", c.OU)
			case providers.CreateGroup:
				fmt.Fprintf(w, "  + ADD %s (Members: %s)\n", c.DN, strings.Join(c.Add, ","))
			case providers.DeleteGroup:
				fmt.Fprintf(w, "  - DELETE %s (%d members)\n", c.DN, len(c.Remove))
			case providers.UpdateGroup:
				fmt.Fprintf(w, "  ~ CHANGE %s\n", c.DN)
				lines := make([]string, 0, len(c.Add)+len(c.Remove))
				for _, m := range c.Add {
					lines = append(lines, ".  + "+m)
				}
				for _, m := range c.Remove {
					lines = append(lines, ".  - "+m)
				}
				slices.SortFunc(lines, func(a, b string) int { return strings.Compare(strings.ToLower(a[5:]), strings.ToLower(b[5:])) })
				for _, l := range lines {
					fmt.Fprintf(w, "    %s\n", l)
				}
				if c.DescriptionChanged {
					fmt.Fprintf(w, "    description: %q -> %q\n", c.Current.Description, c.Desired.Description)
				}
				for _, a := range c.AttrsChanged {
					fmt.Fprintf(w, "    %s: %v -> %v\n", a, c.Current.Attrs[a], c.Desired.Attrs[a])
				}
			case providers.UpdatePerson:
				fmt.Fprintf(w, "  ~ person %s %s: %v -> %v\n", c.Person, c.Attribute, c.OldValues, c.Values)
			}
		}
	}
	for _, t := range plan.Targets {
		if len(t.Counters) > 0 {
			fmt.Fprintf(w, "%s: read in %s; %s\n", t.OU, t.ReadTime.Round(time.Millisecond), formatCounters(t.Counters))
		}
	}
	tot := plan.Totals()
	var times []string
	for _, t := range plan.Targets {
		if t.Err == nil {
			times = append(times, fmt.Sprintf("%s %s", t.OU, t.ReadTime.Round(time.Millisecond)))
		}
	}
	failed := ""
	if n := plan.FailedTargets(); n > 0 {
		failed = fmt.Sprintf(" (%d target(s) failed or refused: nothing will be written to them)", n)
	}
	fmt.Fprintf(w, "Plan: %d to create, %d to update, %d to delete, %d people, %d container(s)%s; calculation %s; read: %s\n",
		tot[providers.CreateGroup], tot[providers.UpdateGroup], tot[providers.DeleteGroup], tot[providers.UpdatePerson],
		tot[providers.CreateContainer], failed, plan.CalcTime.Round(time.Millisecond), strings.Join(times, ", "))
}

type jsonChange struct {
	Kind        string     `json:"kind"`
	DN          string     `json:"dn,omitempty"`
	Add         []string   `json:"add,omitempty"`
	Remove      []string   `json:"remove,omitempty"`
	Description *[2]string `json:"description,omitempty"`
	Attrs       []string   `json:"attributes_changed,omitempty"`
	Person      string     `json:"person,omitempty"`
	Attribute   string     `json:"attribute,omitempty"`
	Values      []string   `json:"values,omitempty"`
}

type jsonTarget struct {
	OU      string       `json:"ou"`
	Type    string       `json:"type"`
	Error   string       `json:"error,omitempty"`
	Refused bool         `json:"refused,omitempty"`
	Changes []jsonChange `json:"changes"`
}

type jsonTargetTimings struct {
	ReadMS   int64            `json:"read_ms"`
	Counters map[string]int64 `json:"counters,omitempty"`
}

// jsonFormatVersion is the version of the JSON documents the CLI prints (plan, explain). It
// changes when a key changes meaning or disappears; new keys do not change it.
const jsonFormatVersion = 1

// writePlanJSON prints {"version", "plan", "timings"}: the plan object depends only on the
// calculation and the state read, so two runs against the same state print the same plan;
// what varies between runs (wall times, request counters) is kept under "timings".
func writePlanJSON(w io.Writer, plan *deploy.Plan) {
	type jsonPlan struct {
		Targets []jsonTarget `json:"targets"`
	}
	type jsonTimings struct {
		CalcMS  int64                        `json:"calculation_ms"`
		Targets map[string]jsonTargetTimings `json:"targets"`
	}
	out := struct {
		Version int         `json:"version"`
		Plan    jsonPlan    `json:"plan"`
		Timings jsonTimings `json:"timings"`
	}{Version: jsonFormatVersion, Plan: jsonPlan{Targets: []jsonTarget{}},
		Timings: jsonTimings{CalcMS: plan.CalcTime.Milliseconds(), Targets: map[string]jsonTargetTimings{}}}
	for _, t := range plan.Targets {
		jt := jsonTarget{OU: t.OU, Type: t.Type, Changes: []jsonChange{}}
		out.Timings.Targets[t.OU] = jsonTargetTimings{ReadMS: t.ReadTime.Milliseconds(), Counters: t.Counters}
		if t.Err != nil {
			jt.Error = t.Err.Error()
			jt.Refused = deploy.Refused(t.Err)
		}
		for _, c := range t.Changes {
			jc := jsonChange{Kind: c.Kind.String(), DN: c.DN, Add: c.Add, Remove: c.Remove, Attrs: c.AttrsChanged,
				Person: c.Person, Attribute: c.Attribute, Values: c.Values}
			if c.DescriptionChanged {
				jc.Description = &[2]string{c.Current.Description, c.Desired.Description}
			}
			jt.Changes = append(jt.Changes, jc)
		}
		out.Plan.Targets = append(out.Plan.Targets, jt)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

func writeReport(w io.Writer, rep *deploy.Report) {
	applied, failed, skipped, targets := 0, 0, 0, 0
	for _, t := range rep.Targets {
		if t.Err != nil {
			targets++
			fmt.Fprintf(w, "NOT APPLIED %s: %v\n", t.OU, t.Err)
		}
		for _, o := range t.Outcomes {
			switch {
			case o.Status.OK():
				applied++
			case o.Status == providers.Skipped:
				skipped++
				fmt.Fprintf(w, "SKIPPED %s: %s: %v\n", t.OU, o.Change, o.Err)
			default:
				failed++
				fmt.Fprintf(w, "FAILED (%s) %s: %s: %v\n", o.Status, t.OU, o.Change, o.Err)
			}
		}
		if len(t.Counters) > 0 {
			fmt.Fprintf(w, "%s: applied in %s; %s\n", t.OU, t.ApplyTime.Round(time.Millisecond), formatCounters(t.Counters))
		}
	}
	fmt.Fprintf(w, "Apply: %d change(s) applied, %d skipped, %d failed; %d target(s) not applied\n", applied, skipped, failed, targets)
}

// formatCounters renders provider counters as sorted key=value pairs.
func formatCounters(c map[string]int64) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, c[k])
	}
	return strings.Join(parts, " ")
}

// overrideFlag names the flag that lifts the limit a guard refusal hit (the library's error
// knows nothing of flags).
func overrideFlag(err error) string {
	var ge *providers.GuardError
	if !errors.As(err, &ge) {
		return ""
	}
	flag := map[providers.GuardLimit]string{
		providers.LimitShare:   "--max-removal-share",
		providers.LimitDeleted: "--max-deleted-groups",
		providers.LimitGroup:   "--max-group-removal-share",
		providers.LimitTotal:   "--max-total-removal-share",
	}[ge.Limit]
	if flag == "" {
		return "override with --force"
	}
	return "override with " + flag + " or --force"
}

// guardHint is one line naming the flags for every refusal of the plan.
func guardHint(plan *deploy.Plan) string {
	seen := map[string]bool{}
	var hints []string
	for _, t := range plan.Targets {
		if h := overrideFlag(t.Err); h != "" && !seen[h] {
			seen[h] = true
			hints = append(hints, h)
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return "refused by the removal guard: " + strings.Join(hints, "; ")
}
