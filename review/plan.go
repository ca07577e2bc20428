package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/guard"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/providers"
)

// PlanTextOptions tune WritePlanText.
type PlanTextOptions struct {
	// RefusalHint says how to override a target refused by the removal guard (a CLI names
	// its flags). Default: nothing.
	RefusalHint func(err error) string
	// Verbose adds the read time and request counters of each target and the timings of the
	// run to the totals line. Default: the changes and the totals only.
	Verbose bool
}

// WritePlanText renders a plan for a terminal: per target its changes (members added and
// removed, groups created and deleted, description and attribute changes) or why it has
// none (an error, a refusal: said once), then a totals line. Control and bidi characters of
// the data, newlines and tabs included, are shown as escapes, each value on its own
// (termsafe), so that no value can start a line that reads like a change.
func WritePlanText(w io.Writer, plan *deploy.Plan, opt PlanTextOptions) {
	w = termsafe.NewWriter(w)
	runWide := map[guard.Limit]string{} // run-wide limits already shown, with the first target
	for _, t := range plan.Targets {
		refused := deploy.Refused(t.Err)
		if t.Err != nil && !refused {
			termsafe.Fprintf(w, "%s (%s): ERROR: %v\n", t.OU, t.Type, t.Err)
			continue
		}
		if refused {
			// The changes are shown so that the operator can judge the refusal.
			hint := ""
			if opt.RefusalHint != nil {
				if h := opt.RefusalHint(t.Err); h != "" {
					hint = "; " + h
				}
			}
			// A run-wide limit refuses every target for one reason: it is said once.
			var ge *guard.Error
			if errors.As(t.Err, &ge) && (ge.Limit == guard.LimitTotal || ge.Limit == guard.LimitPeople) {
				if first, ok := runWide[ge.Limit]; ok {
					termsafe.Fprintf(w, "%s (%s): REFUSED: by the run-wide limit that refused %s\n", t.OU, t.Type, first)
				} else {
					runWide[ge.Limit] = t.OU
					termsafe.Fprintf(w, "%s (%s): REFUSED: %v%s\n", t.OU, t.Type, t.Err, hint)
				}
			} else {
				termsafe.Fprintf(w, "%s (%s): REFUSED: %v%s\n", t.OU, t.Type, t.Err, hint)
			}
			termsafe.Fprintf(w, "%s (%s): %d change(s) refused, not applied:\n", t.OU, t.Type, len(t.Changes))
		} else if len(t.Changes) == 0 {
			termsafe.Fprintf(w, "%s (%s): no changes\n", t.OU, t.Type)
			continue
		} else {
			termsafe.Fprintf(w, "%s (%s): %d change(s)%s\n", t.OU, t.Type, len(t.Changes), coveredNote(t.Changes))
		}
		for _, c := range t.Changes {
			switch c.Kind {
			case providers.CreateContainer:
				termsafe.Fprintf(w, "  + create container for %s\n", c.OU)
			case providers.CreateGroup:
				termsafe.Fprintf(w, "  + ADD %s (Members: %s)\n", c.DN, strings.Join(c.Add, ","))
			case providers.DeleteGroup:
				termsafe.Fprintf(w, "  - DELETE %s (%d members)\n", c.DN, len(c.Remove))
			case providers.UpdateGroup:
				if c.OnlyCovered() {
					termsafe.Fprintf(w, "  ~ CHANGE %s (covered: made by changes of other targets, nothing sent)\n", c.DN)
				} else {
					termsafe.Fprintf(w, "  ~ CHANGE %s\n", c.DN)
				}
				lines := make([]string, 0, len(c.Add)+len(c.Remove))
				for _, m := range c.Add {
					lines = append(lines, ".  + "+m)
				}
				for _, m := range c.Remove {
					if by := c.CoveredBy(m); by != nil {
						m += " (covered by " + by.OU + ")"
					}
					lines = append(lines, ".  - "+m)
				}
				slices.SortFunc(lines, func(a, b string) int { return strings.Compare(strings.ToLower(a[5:]), strings.ToLower(b[5:])) })
				for _, l := range lines {
					termsafe.Fprintf(w, "    %s\n", l)
				}
				if c.DescriptionChanged {
					termsafe.Fprintf(w, "    description: %q -> %q\n", c.Current.Description, c.Desired.Description)
				}
				for _, a := range c.AttrsChanged {
					termsafe.Fprintf(w, "    %s: %v -> %v\n", a, c.Current.Attrs[a], c.Desired.Attrs[a])
				}
			case providers.UpdatePerson:
				termsafe.Fprintf(w, "  ~ person %s %s: %v -> %v\n", c.Person, c.Attribute, c.OldValues, c.Values)
			}
		}
	}
	if opt.Verbose {
		for _, t := range plan.Targets {
			if len(t.Counters) > 0 {
				termsafe.Fprintf(w, "%s: read in %s; %s\n", t.OU, t.ReadTime.Round(time.Millisecond), formatCounters(t.Counters))
			}
		}
	}
	tot := plan.Totals()
	// Kinds of change that most configs never have (people, containers) are named only when
	// the plan has some.
	line := fmt.Sprintf("Plan: %d to create, %d to update, %d to delete",
		tot[providers.CreateGroup], tot[providers.UpdateGroup], tot[providers.DeleteGroup])
	if n := tot[providers.UpdatePerson]; n > 0 {
		line += fmt.Sprintf(", %d people", n)
	}
	if n := tot[providers.CreateContainer]; n > 0 {
		line += fmt.Sprintf(", %d container(s)", n)
	}
	if n := plan.Covered(); n > 0 {
		line += fmt.Sprintf(", %d covered by other targets' changes", n)
	}
	if n := plan.FailedTargets(); n > 0 {
		line += fmt.Sprintf(" (%d target(s) failed or refused: nothing will be written to them)", n)
	}
	if opt.Verbose {
		line += fmt.Sprintf("; calculation %s", plan.CalcTime.Round(time.Millisecond))
		var times []string
		for _, t := range plan.Targets {
			if t.Err == nil {
				times = append(times, fmt.Sprintf("%s %s", t.OU, t.ReadTime.Round(time.Millisecond)))
			}
		}
		if len(times) > 0 {
			line += "; read: " + strings.Join(times, ", ")
		}
	}
	termsafe.Fprintf(w, "%s\n", line)
}

// coveredNote says how many of a target's changes other targets' changes make entirely.
func coveredNote(changes []*providers.Change) string {
	n := 0
	for _, c := range changes {
		if c.OnlyCovered() {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d covered by other targets' changes (nothing sent)", n)
}

type jsonTarget struct {
	OU      string               `json:"ou"`
	Type    string               `json:"type"`
	Error   string               `json:"error,omitempty"`
	Refused bool                 `json:"refused,omitempty"`
	Changes []deploy.SavedChange `json:"changes"`
	// Estimate is what applying the changes will cost, when the provider can say.
	Estimate *deploy.SavedEstimate `json:"estimate,omitempty"`
}

type jsonTargetTimings struct {
	ReadMS   int64            `json:"read_ms"`
	Counters map[string]int64 `json:"counters,omitempty"`
}

// PlanJSONVersion is the version of the JSON document WritePlanJSON prints. It changes when a
// key changes meaning or disappears; new keys do not change it.
const PlanJSONVersion = 1

// WritePlanJSON prints {"version", "plan", "timings"}: the plan object depends only on the
// calculation and the state read, so two runs against the same state print the same plan;
// what varies between runs (wall times, request counters) is kept under "timings". C1
// controls and bidi characters, which encoding/json leaves raw, are written as JSON escapes.
func WritePlanJSON(w io.Writer, plan *deploy.Plan) error {
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
	}{Version: PlanJSONVersion,
		Timings: jsonTimings{CalcMS: plan.CalcTime.Milliseconds(), Targets: map[string]jsonTargetTimings{}}}
	for _, t := range plan.Targets {
		out.Timings.Targets[t.OU] = jsonTargetTimings{ReadMS: t.ReadTime.Milliseconds(), Counters: t.Counters}
	}
	out.Plan.Targets = planTargetsJSON(plan)
	return writeJSON(w, out)
}

// planTargetsJSON is the "targets" list of a plan's JSON (plan, and the pending changes of
// a drift report).
func planTargetsJSON(plan *deploy.Plan) []jsonTarget {
	out := []jsonTarget{}
	for _, t := range plan.Targets {
		jt := jsonTarget{OU: t.OU, Type: t.Type, Changes: []deploy.SavedChange{}}
		if t.Err != nil {
			jt.Error = t.Err.Error()
			jt.Refused = deploy.Refused(t.Err)
		}
		for _, c := range t.Changes {
			jt.Changes = append(jt.Changes, deploy.SaveChange(c))
		}
		if e := t.Estimate; e != nil {
			jt.Estimate = &deploy.SavedEstimate{Writes: e.Writes, Seconds: int64(e.Duration.Round(time.Second) / time.Second), Notes: e.Notes}
		}
		out = append(out, jt)
	}
	return out
}

// writeJSON writes v as indented JSON, C1 controls and bidi characters as JSON escapes.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termsafe.NewJSONWriter(w))
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ReportOptions tune WriteReport.
type ReportOptions struct {
	// Plan is the plan that was applied, when it was printed before the report: a target
	// whose plan had an error is then only named in the totals line (its error was shown
	// with the plan). Default: every target's error is printed.
	Plan *deploy.Plan
	// Verbose adds the apply time and request counters of each target.
	Verbose bool
}

// WriteReport renders the outcome of deploy.Apply: every failed or skipped change and
// target, then a totals line. Control and bidi characters, newlines and tabs included, are
// shown as escapes, each value on its own (termsafe).
func WriteReport(w io.Writer, rep *deploy.Report, opt ReportOptions) {
	w = termsafe.NewWriter(w)
	shown := map[string]bool{} // targets whose error the printed plan showed
	if opt.Plan != nil {
		for _, t := range opt.Plan.Targets {
			shown[t.OU] = t.Err != nil
		}
	}
	applied, covered, failed, skipped := 0, 0, 0, 0
	var notApplied []string
	for _, t := range rep.Targets {
		if t.Err != nil {
			notApplied = append(notApplied, t.OU)
			if !shown[t.OU] {
				termsafe.Fprintf(w, "NOT APPLIED %s: %v\n", t.OU, t.Err)
			}
		}
		for _, o := range t.Outcomes {
			switch {
			case o.Status == providers.Covered:
				covered++
			case o.Status.OK():
				applied++
			case o.Status == providers.Skipped:
				skipped++
				termsafe.Fprintf(w, "SKIPPED %s: %s: %v\n", t.OU, o.Change, o.Err)
			default:
				failed++
				termsafe.Fprintf(w, "FAILED (%s) %s: %s: %v\n", o.Status, t.OU, o.Change, o.Err)
			}
		}
		if opt.Verbose && len(t.Counters) > 0 {
			termsafe.Fprintf(w, "%s: applied in %s; %s\n", t.OU, t.ApplyTime.Round(time.Millisecond), formatCounters(t.Counters))
		}
	}
	note := ""
	if covered > 0 {
		note = fmt.Sprintf(", %d covered by other targets' changes", covered)
	}
	names := ""
	if len(notApplied) > 0 {
		names = ": " + strings.Join(notApplied, ", ")
	}
	termsafe.Fprintf(w, "Apply: %d change(s) applied%s, %d skipped, %d failed; %d target(s) not applied%s\n",
		applied, note, skipped, failed, len(notApplied), names)
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

// WritePlanMarkdown renders a plan for a pull-request comment: a summary table per target,
// then a section per target with its changes (long member lists collapsed), within
// opt.Limit. Names, values and errors are escaped as in Diff.WriteMarkdown.
func WritePlanMarkdown(w io.Writer, plan *deploy.Plan, opt MarkdownOptions) error {
	opt = opt.withDefaults("Entitlements plan")
	var doc mdDoc
	h := &doc.head
	fmt.Fprintf(h, "### %s\n\n", mdHeading(opt.Title))
	tot := plan.Totals()
	fmt.Fprintf(h, "**%d to create, %d to update, %d to delete, %d people, %d container(s)**",
		tot[providers.CreateGroup], tot[providers.UpdateGroup], tot[providers.DeleteGroup], tot[providers.UpdatePerson],
		tot[providers.CreateContainer])
	if n := plan.Covered(); n > 0 {
		fmt.Fprintf(h, "; %d covered by other targets' changes (nothing sent)", n)
	}
	if n := plan.FailedTargets(); n > 0 {
		fmt.Fprintf(h, "; ⚠️ %d target(s) failed or refused: nothing will be written to them", n)
	}
	h.WriteString("\n\n| target | type | create | update | delete | people | status |\n")
	h.WriteString("| --- | --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, t := range plan.Targets {
		n := map[providers.ChangeKind]int{}
		for _, c := range t.Changes {
			n[c.Kind]++
		}
		status := "ok"
		if t.Err != nil {
			status = "⚠️ " + mdCell(clip(t.Err.Error(), maxMarkdownError))
		} else if len(t.Changes) == 0 {
			status = "no changes"
		}
		fmt.Fprintf(h, "| %s | %s | %d | %d | %d | %d | %s |\n", mdCell(t.OU), mdCell(t.Type),
			n[providers.CreateGroup], n[providers.UpdateGroup], n[providers.DeleteGroup], n[providers.UpdatePerson], status)
	}
	h.WriteByte('\n')
	// What applying will cost, where the providers can say (their write budgets): a reviewer
	// of a large change sees how long the apply will run before approving it.
	if d := plan.EstimatedDuration(); d > 0 {
		fmt.Fprintf(h, "**Estimated apply duration: about %s**\n\n", d.Round(time.Second))
		for _, t := range plan.Targets {
			if t.Estimate != nil && t.Estimate.Total() > 0 {
				fmt.Fprintf(h, "- %s: %s\n", mdCode(t.OU), mdText(t.Estimate.String()))
			}
		}
		h.WriteByte('\n')
	}
	for _, t := range plan.Targets {
		if len(t.Changes) == 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "#### %s (%s): %d change(s)\n\n", mdCode(t.OU), mdHeading(t.Type), len(t.Changes))
		if t.Err != nil {
			fmt.Fprintf(&b, "> [!CAUTION]\n> Not applied: %s\n\n", mdText(clip(t.Err.Error(), maxMarkdownError)))
		}
		for _, c := range t.Changes {
			switch c.Kind {
			case providers.CreateContainer:
				fmt.Fprintf(&b, "- ➕ create the container of %s\n", mdCode(c.OU))
			case providers.CreateGroup:
				fmt.Fprintf(&b, "- ➕ create %s with %d member(s)\n", mdCode(c.DN), len(c.Add))
				sub(&b, c, nil, opt.Collapse)
			case providers.DeleteGroup:
				fmt.Fprintf(&b, "- ➖ delete %s (%d member(s))\n", mdCode(c.DN), len(c.Remove))
			case providers.UpdateGroup:
				note := ""
				if c.OnlyCovered() {
					note = " (covered: made by changes of other targets, nothing sent)"
				}
				fmt.Fprintf(&b, "- ✏️ change %s: +%d −%d%s\n", mdCode(c.DN), len(c.Add), len(c.Remove), note)
				if c.DescriptionChanged {
					fmt.Fprintf(&b, "  - description: \"%s\" → \"%s\"\n", mdText(c.Current.Description), mdText(c.Desired.Description))
				}
				for _, a := range c.AttrsChanged {
					fmt.Fprintf(&b, "  - %s: %s → %s\n", mdText(a), mdCode(fmt.Sprint(c.Current.Attrs[a])), mdCode(fmt.Sprint(c.Desired.Attrs[a])))
				}
				sub(&b, c, c.Remove, opt.Collapse)
			case providers.UpdatePerson:
				fmt.Fprintf(&b, "- ✏️ person %s %s: %s → %s\n", mdCode(c.Person), mdText(c.Attribute), mdCode(fmt.Sprint(c.OldValues)), mdCode(fmt.Sprint(c.Values)))
			}
		}
		b.WriteByte('\n')
		doc.sections = append(doc.sections, b.String())
	}
	return doc.write(w, opt.Limit, "target(s)")
}

// sub lists the members a change adds and remove (the members it removes, if they are to be
// listed), collapsed when long; a covered removal names the target whose change makes it.
func sub(b *strings.Builder, c *providers.Change, remove []string, collapse int) {
	items := make([]string, 0, len(c.Add)+len(remove))
	for _, m := range c.Add {
		items = append(items, "➕ "+mdCode(m))
	}
	for _, m := range remove {
		it := "➖ " + mdCode(m)
		if by := c.CoveredBy(m); by != nil {
			it += " (covered by " + mdCode(by.OU) + ")"
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return
	}
	if len(items) > collapse {
		fmt.Fprintf(b, "  <details><summary>%d member change(s)</summary>\n\n", len(items))
	}
	for _, it := range items {
		fmt.Fprintf(b, "  - %s\n", it)
	}
	if len(items) > collapse {
		b.WriteString("\n  </details>\n")
	}
}
