package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/providers"
)

// rawControl returns the first rune of s that a terminal would act on (anything termsafe
// escapes, newlines and tabs of the layout excepted), or "".
func rawControl(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.ReplaceAll(line, "\t", " ")
		if e := termsafe.Escape(line); e != line {
			for i := 0; i < len(line); {
				_, size := utf8.DecodeRuneInString(line[i:])
				if termsafe.Escape(line[i:i+size]) != line[i:i+size] {
					return line[i : i+size]
				}
				i += size
			}
		}
	}
	return ""
}

// The text renderers print names, uids, DNs, descriptions and errors that targets and pull
// requests choose: none of their control or bidi characters reaches the terminal raw, and
// each is shown as an escape.
func TestTextRenderersEscapeTerminalControls(t *testing.T) {
	evil := "bob\x1b]0;owned\x07\x1b[2J\u009b31m\u202eexe.txt\r"
	d, _, _ := hostileDiff(func(int) string { return evil })
	p, _, _ := hostilePlan(func(int) string { return evil })
	rep := &deploy.Report{Targets: []*deploy.TargetReport{{OU: evil, Err: errors.New(evil),
		Outcomes: []providers.Outcome{
			{Change: p.Targets[0].Changes[1], Status: providers.Skipped, Err: errors.New(evil)},
			{Change: p.Targets[0].Changes[3], Status: providers.Failed, Err: errors.New(evil)},
		}, Counters: map[string]int64{evil: 1}}}}
	p.Targets[0].Counters = map[string]int64{evil: 2}
	for name, render := range map[string]func(*strings.Builder){
		"diff": func(b *strings.Builder) { d.WriteText(b) },
		"plan": func(b *strings.Builder) {
			WritePlanText(b, p, PlanTextOptions{Verbose: true, RefusalHint: func(error) string { return evil }})
		},
		"report": func(b *strings.Builder) { WriteReport(b, rep, ReportOptions{Verbose: true}) },
	} {
		var b strings.Builder
		render(&b)
		out := b.String()
		if r := rawControl(out); r != "" {
			t.Errorf("%s: raw %q reaches the terminal:\n%q", name, r, out)
		}
		if !strings.Contains(out, `\x1b`) || !strings.Contains(out, `\u202e`) {
			t.Errorf("%s: the escapes are not shown:\n%s", name, out)
		}
	}
}

// JSON output keeps every value exact: the encoder escapes C0 controls itself, and C1
// controls and bidi overrides, which it leaves raw, are written as JSON escapes.
func TestJSONRenderersEscapeButKeepValues(t *testing.T) {
	evil := "bob\x1b[2J\u009b31m\u202eexe\x7f"
	d, _, _ := hostileDiff(func(int) string { return evil })
	p, _, _ := hostilePlan(func(int) string { return evil })
	var db, pb strings.Builder
	if err := d.WriteJSON(&db); err != nil {
		t.Fatal(err)
	}
	if err := WritePlanJSON(&pb, p); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"diff": db.String(), "plan": pb.String()} {
		if r := rawControl(out); r != "" {
			t.Errorf("%s: raw %q in the JSON", name, r)
		}
		var doc any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found := false
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				found = found || v == evil
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for k, e := range v {
					found = found || k == evil
					walk(e)
				}
			}
		}
		walk(doc)
		if !found {
			t.Errorf("%s: the value does not decode back exactly:\n%s", name, out)
		}
	}
}

// Issue 20 item 11: each value is escaped on its own, not only the line it is on. A member
// name, DN, OU key, configuration value or error holding a newline used to pass the layout
// writer and start a line of its own ("+ ADD cn=forged" reads like a change of the plan);
// with an OSC 8 hyperlink, a CSI, a C1 control or a bidi override besides, every renderer
// prints exactly the lines it prints for ordinary values.
func TestTextRenderersEscapeEachValue(t *testing.T) {
	const forged = "+ ADD cn=forged"
	evil := func(i int) string {
		return fmt.Sprintf("v%d\n%s\r\n    - alice\t\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\x1b[31m\u009b2J\u202eexe.txt", i, forged)
	}
	ordinary := func(i int) string { return fmt.Sprintf("v%d", i) }
	render := func(v func(int) string) map[string]string {
		d, _, _ := hostileDiff(v)
		d.Config = &ConfigDiff{File: v(900), Changes: []ConfigChange{
			{Path: v(901), Change: "added", New: v(902)}, {Path: v(903), Change: "removed", Old: v(904)},
			{Path: v(905), Change: "changed", Old: v(906), New: v(907)}}, Errors: []string{v(908)}}
		d.Sources = []string{v(909)}
		p, _, _ := hostilePlan(v)
		p.Targets[0].Counters = map[string]int64{v(910): 2}
		rep := &deploy.Report{Targets: []*deploy.TargetReport{{OU: v(920), Err: errors.New(v(921)),
			Outcomes: []providers.Outcome{
				{Change: p.Targets[0].Changes[1], Status: providers.Skipped, Err: errors.New(v(922))},
				{Change: p.Targets[0].Changes[3], Status: providers.Failed, Err: errors.New(v(923))},
			}, Counters: map[string]int64{v(924): 1}}}}
		out := map[string]string{}
		var b strings.Builder
		d.WriteText(&b)
		out["diff"] = b.String()
		b.Reset()
		WritePlanText(&b, p, PlanTextOptions{RefusalHint: func(error) string { return v(930) }})
		out["plan"] = b.String()
		b.Reset()
		WriteReport(&b, rep, ReportOptions{})
		out["report"] = b.String()
		return out
	}
	want, got := render(ordinary), render(evil)
	for name, out := range got {
		lines, wantLines := strings.Split(out, "\n"), strings.Split(want[name], "\n")
		if len(lines) != len(wantLines) {
			t.Errorf("%s: %d lines, %d with ordinary values: a value started a line:\n%s", name, len(lines), len(wantLines), out)
		}
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimLeft(l, " ."), forged) || strings.HasPrefix(strings.TrimSpace(l), "- alice") {
				t.Errorf("%s: forged line %q", name, l)
			}
		}
		if r := rawControl(out); r != "" || strings.Contains(out, "\t") || strings.Contains(out, "\r") {
			t.Errorf("%s: raw %q (or a tab or carriage return) reaches the terminal:\n%q", name, r, out)
		}
		for _, e := range []string{`\n+ ADD`, `\x1b]8;;https://evil.example/\x1b\click`, `\x1b[31m`, `\u009b2J`, `\u202eexe.txt`} {
			if !strings.Contains(out, e) {
				t.Errorf("%s: escape %s not shown:\n%s", name, e, out)
			}
		}
	}
}
