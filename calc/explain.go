package calc

import (
	"fmt"
	"io"
	"strings"

	"github.com/entitlements-go/entitlements/internal/termsafe"
)

// Explanation says why a person is (or is not) in a group: the rules that matched (with the
// groups and org-chart paths that brought the person in), the filter decisions and the
// expirations.
type Explanation struct {
	Group  string `json:"group"`
	Person string `json:"person"`
	// Known is false when the person is not in the people data (then nothing can match).
	Known bool `json:"known"`
	// DidYouMean is the closest existing uid when the person is unknown ("" when none is
	// close).
	DidYouMean string `json:"did_you_mean,omitempty"`
	// Member is the final answer; InRules is membership before filters and expiration.
	Member  bool   `json:"member"`
	InRules bool   `json:"in_rules"`
	File    string `json:"file"`
	// Rules is the rule tree of the group with the person's match at every node.
	Rules *Trace `json:"rules"`
	// Filters lists every filter's decision for this person in this group.
	Filters []FilterTrace `json:"filters,omitempty"`
	// FileExpiration is the whole-file expiration, when the file has one.
	FileExpiration *ExpirationTrace `json:"file_expiration,omitempty"`
	// ExpiredLines are rule lines and filter entries dropped because their date passed.
	ExpiredLines []ExpiredTrace `json:"expired_lines,omitempty"`
}

// Trace is one rule node.
type Trace struct {
	Rule    string `json:"rule"`
	Line    int    `json:"line,omitempty"`
	Matched bool   `json:"matched"`
	// Children of or/and/not.
	Children []*Trace `json:"children,omitempty"`
	// Via are the referenced groups of a group rule that contain the person.
	Via []*GroupTrace `json:"via,omitempty"`
	// OrgChain is the management chain from the person up to the named manager.
	OrgChain []string `json:"org_chain,omitempty"`
	// cond is a rule leaf's condition in its positive form ("username = carol"): under a
	// `not`, the text as written (`username != carol`) next to the leaf's own mark reads
	// as a double negation, so the text rendering names what is excluded instead.
	cond string
}

// GroupTrace explains a referenced group (its Ref view: filters of that group do not apply).
type GroupTrace struct {
	Group   string `json:"group"`
	File    string `json:"file"`
	Expired bool   `json:"expired,omitempty"`
	// Rules is nil when the group was already explained above or the depth limit was hit.
	Rules *Trace `json:"rules,omitempty"`
}

// FilterTrace is one filter's decision.
type FilterTrace struct {
	Filter       string `json:"filter"`
	Setting      string `json:"setting"` // all, none or list
	Applies      bool   `json:"applies"` // false when excluded_paths/included_paths switch it off
	InPopulation bool   `json:"in_population"`
	Allowed      bool   `json:"allowed"` // listed by the group's filter setting
	Removed      bool   `json:"removed"`
}

// ExpirationTrace describes the whole-file expiration.
type ExpirationTrace struct {
	Date    string `json:"date"`
	Reached bool   `json:"reached"`
	Line    int    `json:"line,omitempty"`
}

// ExpiredTrace is a dropped line.
type ExpiredTrace struct {
	Line int    `json:"line"`
	Text string `json:"text"`
	Date string `json:"date"`
}

// NotFoundError is returned by Explain for an unknown group.
type NotFoundError struct {
	Group string
	// DidYouMean is the calculated group closest to Group ("" when none is close).
	DidYouMean string
}

func (e *NotFoundError) Error() string {
	if e.DidYouMean != "" {
		return fmt.Sprintf("no calculated group %q; did you mean %q?", e.Group, e.DidYouMean)
	}
	return fmt.Sprintf("no calculated group %q", e.Group)
}

const maxExplainDepth = 12

// Explain explains the membership of person (any letter case) in group ("ou/cn").
func (res *Result) Explain(groupKey, person string) (*Explanation, error) {
	r := res.repo
	out := res.byKey[groupKey]
	if out == nil {
		return nil, &NotFoundError{Group: groupKey, DidYouMean: closest(groupKey, func(yield func(string) bool) {
			for k := range res.byKey {
				if !yield(k) {
					return
				}
			}
		})}
	}
	g := res.groupOf[groupKey]
	ex := &Explanation{Group: groupKey, Person: person, File: g.rel}
	id, known := r.ld.dir.Lookup(person)
	ex.Known = known
	if !known {
		ex.DidYouMean = r.ld.closestUID(person)
	}
	if known {
		ex.Person = r.ld.dir.UID(id)
		ex.InRules = g.r.Contains(id)
		ex.Member = res.finals[g].Contains(id)
	}
	e := &explainer{r: r, id: id, known: known, seen: map[*group]bool{g: true}}
	ex.Rules = e.trace(g, g.def.rules, 0)
	for _, f := range r.ev.filters {
		st := settingOf(g, f)
		ft := FilterTrace{Filter: f.cfg.Name, Applies: filterApplies(f.cfg, g.path)}
		ft.Setting = [...]string{"none", "all", "list"}[st.mode]
		if known && f.pop != nil {
			ft.InPopulation = f.pop.Contains(id)
			if st.mode == filterList {
				ft.Allowed = r.ev.allowed(g, st.entries).Contains(id)
			}
			ft.Removed = ex.InRules && st.mode != filterAll && ft.InPopulation && !ft.Allowed
		}
		ex.Filters = append(ex.Filters, ft)
	}
	if d := g.def.fileExp; !d.IsZero() {
		ex.FileExpiration = &ExpirationTrace{Date: d.String(), Reached: r.ev.expired(g), Line: g.def.fileExpLine}
	}
	for _, l := range g.def.expired {
		ex.ExpiredLines = append(ex.ExpiredLines, ExpiredTrace{Line: l.line, Text: l.text, Date: l.date.String()})
	}
	return ex, nil
}

type explainer struct {
	r     *Repo
	id    uint32
	known bool
	seen  map[*group]bool
}

func (e *explainer) trace(g *group, n *rule, depth int) *Trace {
	t := &Trace{Line: n.line}
	switch n.op {
	case opNone:
		t.Rule = "nobody (always: false, or no live conditions)"
		return t
	case opNot:
		t.Rule = "not"
		c := e.trace(g, n.kids[0], depth)
		t.Children = []*Trace{c}
		t.Matched = e.known && !c.Matched
		return t
	case opOr, opAnd:
		t.Rule = map[ruleOp]string{opOr: "any of", opAnd: "all of"}[n.op]
		t.Matched = n.op == opAnd
		for _, k := range n.kids {
			c := e.trace(g, k, depth)
			t.Children = append(t.Children, c)
			if n.op == opOr {
				t.Matched = t.Matched || c.Matched
			} else {
				t.Matched = t.Matched && c.Matched
			}
		}
		if n.op == opAnd && len(n.kids) == 0 {
			t.Matched = false
		}
		return t
	}
	t.Rule = n.text
	t.cond = n.method + " = " + n.value
	if !e.known {
		return t
	}
	if n.method != "group" {
		t.Matched = g.link(n.id).leaf.Contains(e.id)
		if t.Matched && n.method == "management" {
			t.OrgChain = e.r.ld.org.Chain(e.id, n.value)
		}
		return t
	}
	for _, tg := range g.link(n.id).targets {
		if !tg.ref.Contains(e.id) && !(tg.r.Contains(e.id) && e.r.ev.expired(tg)) {
			continue
		}
		gt := &GroupTrace{Group: tg.key, File: tg.rel, Expired: e.r.ev.expired(tg)}
		if !gt.Expired {
			t.Matched = true
		}
		if !e.seen[tg] && depth < maxExplainDepth {
			e.seen[tg] = true
			gt.Rules = e.trace(tg, tg.def.rules, depth+1)
		}
		t.Via = append(t.Via, gt)
	}
	return t
}

// WriteText renders the explanation for people. Control and bidi characters of names, rule
// text and paths, newlines and tabs included, are shown as escapes, each value on its own
// (termsafe), so the repo can neither steer the terminal nor forge a line.
func (ex *Explanation) WriteText(w io.Writer) {
	w = termsafe.NewWriter(w)
	verdict := "is NOT"
	if ex.Member {
		verdict = "IS"
	}
	termsafe.Fprintf(w, "%s %s a member of %s (%s)\n", ex.Person, verdict, ex.Group, ex.File)
	if !ex.Known {
		hint := ""
		if ex.DidYouMean != "" {
			hint = fmt.Sprintf("; did you mean %q?", ex.DidYouMean)
		}
		termsafe.Fprintf(w, "  %s is not in the people data%s\n", ex.Person, hint)
		return
	}
	fmt.Fprintln(w, "rules (+ matches this person, - does not):")
	writeTrace(w, ex.Rules, "  ", ex.Person)
	if len(ex.Filters) > 0 {
		fmt.Fprintln(w, "filters:")
	}
	for _, f := range ex.Filters {
		termsafe.Fprintf(w, "  %s\n", f.describe(ex.Person, ex.InRules))
	}
	if fe := ex.FileExpiration; fe != nil {
		state := "not reached"
		if fe.Reached {
			state = "REACHED: the group is empty"
		}
		termsafe.Fprintf(w, "whole-file expiration %s (line %d): %s\n", fe.Date, fe.Line, state)
	}
	for _, l := range ex.ExpiredLines {
		termsafe.Fprintf(w, "expired on %s (line %d, ignored): %s\n", l.Date, l.Line, l.Text)
	}
}

// describe puts a filter decision in words: what the group's setting means and what it did
// to this person.
func (f FilterTrace) describe(person string, inRules bool) string {
	verdict := "kept"
	if f.Removed {
		verdict = "REMOVED"
	}
	switch {
	case !f.Applies:
		return fmt.Sprintf("%s: not filtered (the filter's excluded_paths/included_paths leave this file out)", f.Filter)
	case f.Setting == "all":
		return fmt.Sprintf("%s = all: not filtered (this group admits the filter's whole population)", f.Filter)
	case !f.InPopulation:
		return fmt.Sprintf("%s = %s: %s is not in the filter's population: not affected", f.Filter, f.Setting, person)
	case f.Setting == "none":
		if !inRules {
			return fmt.Sprintf("%s = none: %s is in the filter's population and would be removed (no rule matches anyway)", f.Filter, person)
		}
		return fmt.Sprintf("%s = none: %s is in the filter's population, which this group does not admit: %s", f.Filter, person, verdict)
	case f.Allowed:
		return fmt.Sprintf("%s = list: %s is in the filter's population and listed by this group: %s", f.Filter, person, verdict)
	default:
		if !inRules {
			return fmt.Sprintf("%s = list: %s is in the filter's population and not listed: would be removed (no rule matches anyway)", f.Filter, person)
		}
		return fmt.Sprintf("%s = list: %s is in the filter's population and not listed by this group: %s", f.Filter, person, verdict)
	}
}

func writeTrace(w io.Writer, t *Trace, indent, person string) {
	mark := "-"
	if t.Matched {
		mark = "+"
	}
	// A `not` of one condition is one line that says what it excludes: "- not: username =
	// carol (line 3) excludes carol" rather than "+ username != carol" under "- not".
	if t.Rule == "not" && len(t.Children) == 1 && t.Children[0].cond != "" {
		c := t.Children[0]
		line := c.Line
		if line == 0 {
			line = t.Line
		}
		verdict := "does not exclude " + person
		if c.Matched {
			verdict = "excludes " + person
		}
		termsafe.Fprintf(w, "%s%s not: %s%s %s\n", indent, mark, c.cond, lineNote(line), verdict)
		writeSources(w, c, indent, person)
		return
	}
	termsafe.Fprintf(w, "%s%s %s%s\n", indent, mark, t.Rule, lineNote(t.Line))
	writeSources(w, t, indent, person)
	for _, c := range t.Children {
		writeTrace(w, c, indent+"  ", person)
	}
}

func lineNote(line int) string {
	if line > 0 {
		return fmt.Sprintf(" (line %d)", line)
	}
	return ""
}

// writeSources writes where a leaf's match comes from: the org-chart path and the groups.
func writeSources(w io.Writer, t *Trace, indent, person string) {
	if len(t.OrgChain) > 0 {
		termsafe.Fprintf(w, "%s    org chart: %s\n", indent, strings.Join(t.OrgChain, " → "))
	}
	for _, v := range t.Via {
		note := ""
		if v.Expired {
			note = " [expired as a whole: contributes nobody]"
		}
		termsafe.Fprintf(w, "%s    via %s (%s)%s\n", indent, v.Group, v.File, note)
		if v.Rules != nil {
			writeTrace(w, v.Rules, indent+"      ", person)
		}
	}
}
