package review

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/entitlements-go/entitlements/internal/termsafe"
)

// WriteText renders the diff for a terminal: one block per group, one line per person with
// the reason. Control and bidi characters of the data are shown as escapes (termsafe).
func (d *Diff) WriteText(w io.Writer) error {
	ew := &errWriter{w: termsafe.NewWriter(w)}
	d.writeConfigText(ew)
	if len(d.Groups) == 0 {
		ew.printf("No changes: every group has the same members, description and metadata.\n")
		return ew.err
	}
	for _, g := range d.Groups {
		ew.printf("%s %s (%s)\n", statusMark(g.Status), g.Key, g.File)
		if g.Description != nil {
			ew.printf("    description: %q -> %q\n", g.Description[0], g.Description[1])
		}
		for _, m := range g.Metadata {
			ew.printf("    metadata %s: %s -> %s\n", m.Key, metaValue(m.Old), metaValue(m.New))
		}
		for _, m := range g.Added {
			ew.printf("    + %s%s\n", m.UID, reasonSuffix(m.Reason))
		}
		for _, m := range g.Removed {
			ew.printf("    - %s%s\n", m.UID, reasonSuffix(m.Reason))
		}
	}
	_, t := d.Summary()
	ew.printf("Diff: %d group(s) changed (%d created, %d deleted); %d people gaining, %d losing access\n",
		t.Groups, t.Created, t.Deleted, t.Gaining, t.Losing)
	if d.Unexplained > 0 {
		ew.printf("(%d membership change(s) left without a reason: more than the reason limit)\n", d.Unexplained)
	}
	return ew.err
}

func statusMark(s Status) string {
	switch s {
	case Created:
		return "+ CREATE"
	case Deleted:
		return "- DELETE"
	}
	return "~ CHANGE"
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return "  (" + r + ")"
}

func metaValue(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// DiffJSONVersion is the version of the JSON form of a Diff.
const DiffJSONVersion = 1

// WriteJSON renders the diff as indented JSON: {"version", "summary", "per_ou", "groups"},
// and "config" and "sources" when set. C1 controls and bidi characters, which encoding/json
// leaves raw, are written as JSON escapes.
func (d *Diff) WriteJSON(w io.Writer) error {
	per, total := d.Summary()
	type sum struct {
		OU      string `json:"ou,omitempty"`
		Groups  int    `json:"groups_changed"`
		Created int    `json:"groups_created"`
		Deleted int    `json:"groups_deleted"`
		Gaining int    `json:"people_gaining"`
		Losing  int    `json:"people_losing"`
	}
	conv := func(s OUSummary) sum { return sum(s) }
	out := struct {
		Version     int          `json:"version"`
		Summary     sum          `json:"summary"`
		PerOU       []sum        `json:"per_ou"`
		Groups      []*GroupDiff `json:"groups"`
		Unexplained int          `json:"unexplained,omitempty"`
		Config      *ConfigDiff  `json:"config,omitempty"`
		Sources     []string     `json:"sources,omitempty"`
	}{Version: DiffJSONVersion, Summary: conv(total), PerOU: []sum{}, Groups: d.Groups, Unexplained: d.Unexplained,
		Config: d.Config, Sources: d.Sources}
	for _, s := range per {
		out.PerOU = append(out.PerOU, conv(s))
	}
	enc := json.NewEncoder(termsafe.NewJSONWriter(w))
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

type errWriter struct {
	w   io.Writer
	err error
}

// printf escapes each argument on its own (termsafe.Fprintf): a value's newline must not
// start a line that reads like the renderer's.
func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = termsafe.Fprintf(e.w, format, args...)
	}
}
