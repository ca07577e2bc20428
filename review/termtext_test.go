package review

import (
	"encoding/json"
	"errors"
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
