package calc

import (
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/internal/termsafe"
)

// explain's text names the person, groups, files, rule text, org-chart chains and expired
// lines, all chosen by the config repo: none of their control or bidi characters reaches the
// terminal raw, and none of their newlines starts a line of its own (issue 20 item 11: each
// value is escaped, not only each line).
func TestExplainTextEscapesTerminalControls(t *testing.T) {
	evil := "x\x1b]0;owned\x07\x1b[2J\u009b\u202e\n+ forged\t\x1b]8;;https://evil.example/\x1b\\l\x1b]8;;\x1b\\"
	ex := &Explanation{Group: evil, Person: evil, Known: true, Member: true, InRules: true, File: evil,
		Rules: &Trace{Rule: "or", Matched: true, Children: []*Trace{
			{Rule: evil, Line: 2, Matched: true, OrgChain: []string{evil, evil}},
			{Rule: evil, Line: 3, Matched: true, Via: []*GroupTrace{{Group: evil, File: evil, Rules: &Trace{Rule: evil, Matched: true}}}},
		}},
		Filters:        []FilterTrace{{Filter: evil, Setting: evil, Applies: true, InPopulation: true}},
		FileExpiration: &ExpirationTrace{Date: evil, Line: 1},
		ExpiredLines:   []ExpiredTrace{{Date: evil, Line: 4, Text: evil}},
	}
	unknown := &Explanation{Group: evil, Person: evil, File: evil, DidYouMean: evil}
	for _, ex := range []*Explanation{ex, unknown} {
		var b strings.Builder
		ex.WriteText(&b)
		out := b.String()
		for _, line := range strings.Split(out, "\n") {
			if termsafe.Escape(line) != line {
				t.Fatalf("raw control in %q", line)
			}
			if strings.HasPrefix(strings.TrimSpace(line), "+ forged") {
				t.Errorf("a value started the line %q", line)
			}
		}
		if !strings.Contains(out, `x\x1b]0;owned\x07\x1b[2J\u009b\u202e\n+ forged\t\x1b]8;;https://evil.example/\x1b\l`) {
			t.Errorf("the escapes are not shown:\n%s", out)
		}
	}
}
