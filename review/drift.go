package review

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/drift"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/providers"
)

// The drift report's renderers. Each keeps the two questions apart: first the changes made
// outside the tool since the last apply (drift), then, under its own heading, the changes the
// current definitions would make (the plan), which are no drift.

// DriftTextOptions tune WriteDriftText.
type DriftTextOptions struct {
	// Plan tunes the section of the definitions' pending changes.
	Plan PlanTextOptions
}

// WriteDriftText renders a drift report for a terminal: per target, its drift (each group
// changed, created or deleted outside the tool, with the members added and removed and who
// last modified it and when, where the service says), or that it has none, or why it could
// not be compared; a totals line; then the pending changes of the definitions, as plan
// prints them. Values are escaped as in WritePlanText.
func WriteDriftText(w io.Writer, rep *drift.Report, opt DriftTextOptions) {
	w = termsafe.NewWriter(w)
	fmt.Fprintf(w, "Drift: changes made outside entitlements since the last apply (the last applied state holds %d group(s))\n", rep.LastApplied)
	unknown := 0
	for _, t := range rep.Targets {
		switch t.Status {
		case drift.Unknown:
			unknown++
			termsafe.Fprintf(w, "%s (%s): UNKNOWN: %v\n", t.OU, t.Type, t.Err)
			continue
		case drift.NotCompared:
			termsafe.Fprintf(w, "%s (%s): not compared: %v\n", t.OU, t.Type, t.Err)
			continue
		case drift.Clean:
			termsafe.Fprintf(w, "%s (%s): no drift (%d group(s) compared)\n", t.OU, t.Type, t.Compared)
		default:
			termsafe.Fprintf(w, "%s (%s): DRIFT: %d of %d group(s) changed outside the tool\n", t.OU, t.Type, len(t.Groups), t.Compared)
		}
		for _, g := range t.Groups {
			switch g.Kind {
			case drift.Created:
				termsafe.Fprintf(w, "  + CREATED %s (never applied; %d member(s))%s\n", g.DN, len(g.Added), modifiedText(g.Modified))
			case drift.Deleted:
				termsafe.Fprintf(w, "  - DELETED %s (had %d member(s) when last applied)\n", g.DN, len(g.Removed))
			default:
				termsafe.Fprintf(w, "  ~ CHANGED %s%s\n", g.DN, modifiedText(g.Modified))
			}
			for _, m := range g.Added {
				termsafe.Fprintf(w, "    .  + %s\n", m)
			}
			for _, m := range g.Removed {
				termsafe.Fprintf(w, "    .  - %s\n", m)
			}
		}
		if t.AttributionErr != nil {
			termsafe.Fprintf(w, "  (who and when could not be read: %v)\n", t.AttributionErr)
		}
		if n := len(t.Unverified); n > 0 {
			termsafe.Fprintf(w, "  (%d group(s) of the last applied state are no longer defined and were not read, so not verified: %s)\n",
				n, strings.Join(t.Unverified, "; "))
		}
	}
	tot := rep.Totals()
	line := "Drift: none"
	if tot.Groups > 0 {
		line = fmt.Sprintf("Drift: %d group(s) of %d target(s) changed outside the tool: %d member(s) added, %d removed, %d group(s) created, %d deleted",
			tot.Groups, tot.Targets, tot.Added, tot.Removed, tot.Created, tot.Deleted)
	}
	if unknown > 0 {
		line += fmt.Sprintf(" (%d target(s) unknown: their drift is not known)", unknown)
	}
	fmt.Fprintln(w, line)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Pending changes of the current definitions (what plan and apply would write; not drift):")
	WritePlanText(w, rep.Plan, opt.Plan)
}

// modifiedText is " (last modified by X at T)", or "" when the service says nothing.
func modifiedText(m providers.Modification) string {
	var parts []string
	if m.By != "" {
		parts = append(parts, "by "+m.By)
	}
	if !m.At.IsZero() {
		parts = append(parts, "at "+m.At.UTC().Format(time.RFC3339))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (last modified " + strings.Join(parts, " ") + ")"
}

// DriftJSONVersion is the version of the JSON document WriteDriftJSON prints. It changes
// when a key changes meaning or disappears; new keys do not change it.
const DriftJSONVersion = 1

type jsonDriftGroup struct {
	DN      string   `json:"dn"`
	Change  string   `json:"change"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	// Who and when, only where the service says (LDAP).
	ModifiedBy string `json:"modified_by,omitempty"`
	ModifiedAt string `json:"modified_at,omitempty"`
}

type jsonDriftTarget struct {
	OU               string           `json:"ou"`
	Type             string           `json:"type"`
	Status           string           `json:"status"`
	Error            string           `json:"error,omitempty"`
	Compared         int              `json:"compared"`
	Groups           []jsonDriftGroup `json:"groups"`
	Unverified       []string         `json:"unverified,omitempty"`
	AttributionError string           `json:"attribution_error,omitempty"`
}

// WriteDriftJSON prints {"version", "drift_found", "last_applied_groups", "totals",
// "out_of_band": [targets], "pending": {"targets": [...]}}: out_of_band is the drift (see
// the README for every key), pending the plan of the current definitions in the form of
// plan --format json's "plan" object. Arrays are never null; modified_by and modified_at
// appear only where the service records them.
func WriteDriftJSON(w io.Writer, rep *drift.Report) error {
	type jsonTotals struct {
		Targets int `json:"targets"`
		Groups  int `json:"groups"`
		Added   int `json:"added"`
		Removed int `json:"removed"`
		Created int `json:"created"`
		Deleted int `json:"deleted"`
	}
	type jsonPending struct {
		Targets []jsonTarget `json:"targets"`
	}
	tot := rep.Totals()
	out := struct {
		Version     int               `json:"version"`
		DriftFound  bool              `json:"drift_found"`
		LastApplied int               `json:"last_applied_groups"`
		Totals      jsonTotals        `json:"totals"`
		OutOfBand   []jsonDriftTarget `json:"out_of_band"`
		Pending     jsonPending       `json:"pending"`
	}{Version: DriftJSONVersion, DriftFound: rep.Drifted(), LastApplied: rep.LastApplied,
		Totals:    jsonTotals{Targets: tot.Targets, Groups: tot.Groups, Added: tot.Added, Removed: tot.Removed, Created: tot.Created, Deleted: tot.Deleted},
		OutOfBand: []jsonDriftTarget{}, Pending: jsonPending{Targets: planTargetsJSON(rep.Plan)}}
	for _, t := range rep.Targets {
		jt := jsonDriftTarget{OU: t.OU, Type: t.Type, Status: t.Status.String(), Compared: t.Compared,
			Groups: []jsonDriftGroup{}, Unverified: t.Unverified}
		if t.Err != nil {
			jt.Error = t.Err.Error()
		}
		if t.AttributionErr != nil {
			jt.AttributionError = t.AttributionErr.Error()
		}
		for _, g := range t.Groups {
			jg := jsonDriftGroup{DN: g.DN, Change: g.Kind.String(), Added: nonNil(g.Added), Removed: nonNil(g.Removed),
				ModifiedBy: g.Modified.By}
			if !g.Modified.At.IsZero() {
				jg.ModifiedAt = g.Modified.At.UTC().Format(time.RFC3339)
			}
			jt.Groups = append(jt.Groups, jg)
		}
		out.OutOfBand = append(out.OutOfBand, jt)
	}
	return writeJSON(w, out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// driftMaxNames is how many members a cell of the Markdown report names; the rest are
// counted.
const driftMaxNames = 20

// WriteDriftMarkdown renders a drift report for an alerting issue: a heading, a summary (an
// alert when there is drift, and a table of the targets), the pending changes of the
// definitions in one labelled line, then a table per drifted target (one row per group: the
// change, members added and removed, who last modified it and when). The whole stays within
// opt.Limit: a target's table that does not fit is left out whole, and a note says how many.
// Every value is escaped as in Diff.WriteMarkdown.
func WriteDriftMarkdown(w io.Writer, rep *drift.Report, opt MarkdownOptions) error {
	opt = opt.withDefaults("Entitlements drift")
	doc := mdDoc{full: "Run `entitlements drift` with `--format text` (or `json`) for the full report."}
	h := &doc.head
	fmt.Fprintf(h, "### %s\n\n", mdHeading(opt.Title))
	tot := rep.Totals()
	unknown := 0
	for _, t := range rep.Targets {
		if t.Status == drift.Unknown {
			unknown++
		}
	}
	if tot.Groups > 0 {
		fmt.Fprintf(h, "> [!WARNING]\n> **Access was changed outside entitlements** since the last apply: %d group(s) of %d target(s), %d member(s) added, %d removed, %d group(s) created, %d deleted.\n\n",
			tot.Groups, tot.Targets, tot.Added, tot.Removed, tot.Created, tot.Deleted)
	} else if unknown == 0 {
		h.WriteString("No drift: every target holds what was last applied.\n\n")
	}
	if unknown > 0 {
		fmt.Fprintf(h, "> [!CAUTION]\n> The drift of %d target(s) is **unknown** (see the table): they were not compared.\n\n", unknown)
	}
	h.WriteString("| target | type | drift | groups | added | removed |\n")
	h.WriteString("| --- | --- | --- | ---: | ---: | ---: |\n")
	for _, t := range rep.Targets {
		added, removed := 0, 0
		for _, g := range t.Groups {
			added += len(g.Added)
			removed += len(g.Removed)
		}
		status := map[drift.Status]string{drift.Clean: "none", drift.Drifted: "⚠️ drift", drift.NotCompared: "not compared"}[t.Status]
		if t.Status == drift.Unknown {
			status = "❓ unknown: " + mdCell(clip(t.Err.Error(), maxMarkdownError))
		}
		fmt.Fprintf(h, "| %s | %s | %s | %d | %d | %d |\n", mdCell(t.OU), mdCell(t.Type), status, len(t.Groups), added, removed)
	}
	h.WriteByte('\n')
	pt := rep.Plan.Totals()
	fmt.Fprintf(h, "**Pending changes of the definitions** (not drift: what `entitlements plan` and `apply` would write): %d to create, %d to update, %d to delete, %d people.\n\n",
		pt[providers.CreateGroup], pt[providers.UpdateGroup], pt[providers.DeleteGroup], pt[providers.UpdatePerson])
	for _, t := range rep.Targets {
		if len(t.Groups) == 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "#### %s (%s): %d group(s) changed outside the tool\n\n", mdCode(t.OU), mdHeading(t.Type), len(t.Groups))
		if t.AttributionErr != nil {
			fmt.Fprintf(&b, "Who and when could not be read: %s\n\n", mdText(clip(t.AttributionErr.Error(), maxMarkdownError)))
		}
		b.WriteString("| group | change | added | removed | last modified by | at |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
		for _, g := range t.Groups {
			at := ""
			if !g.Modified.At.IsZero() {
				at = g.Modified.At.UTC().Format("2006-01-02 15:04:05 UTC")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdCell(g.DN), g.Kind, namesCell(g.Added), namesCell(g.Removed),
				mdCell(g.Modified.By), at)
		}
		b.WriteByte('\n')
		doc.sections = append(doc.sections, b.String())
	}
	return doc.write(w, opt.Limit, "target(s)")
}

// namesCell lists members in a table cell, at most driftMaxNames of them, the rest counted.
func namesCell(ms []string) string {
	n := min(len(ms), driftMaxNames)
	parts := make([]string, 0, n+1)
	for _, m := range ms[:n] {
		parts = append(parts, mdCell(m))
	}
	if rest := len(ms) - n; rest > 0 {
		parts = append(parts, fmt.Sprintf("+%d more", rest))
	}
	return strings.Join(parts, ", ")
}
