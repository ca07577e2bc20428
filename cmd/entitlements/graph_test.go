package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/termsafe"
)

// Group names come from file names and filter names from the config, both chosen by a pull
// request; in a graph they must stay labels.
var hostileNames = []string{
	`a"];b`,
	"x; y",
	"end",
	`%%{init: {"securityLevel": "loose"}}%%`,
	"<img src=x onerror=alert(1)>",
	"#quot;#35;&amp;",
	"`**md**`",
	"line\nbreak",
	"esc\x1b[2J\u202e",
	`back\slash\`,
	`quote\"`,
	"-. x .-> g0",
	"|pipe|",
	`click g0 href "javascript:alert(1)"`,
	"a --> b",
	`\N \G \L`,
}

func hostileGraph() ([]string, []calc.Dependency) {
	nodes := append([]string{"ok/plain"}, hostileNames...)
	var edges []calc.Dependency
	for i, n := range hostileNames {
		edges = append(edges, calc.Dependency{From: n, To: "ok/plain", Via: "rule"})
		edges = append(edges, calc.Dependency{From: "ok/plain", To: n, Via: "filter " + hostileNames[(i+1)%len(hostileNames)]})
	}
	return nodes, edges
}

// mermaidDecode reverses the entity codes of a Mermaid label.
var mermaidEntity = regexp.MustCompile(`#(\d+|[a-z]+);`)

func mermaidDecode(s string) string {
	return mermaidEntity.ReplaceAllStringFunc(s, func(e string) string {
		code := e[1 : len(e)-1]
		if n, err := strconv.Atoi(code); err == nil {
			return string(rune(n))
		}
		return map[string]string{"quot": `"`, "lt": "<", "gt": ">", "amp": "&"}[code]
	})
}

// Every line of the Mermaid output is one node or one edge; each label is one quoted string
// in which Mermaid sees nothing but text (no quote, no HTML, no Markdown string, no
// directive, no entity the data brought), and reads back as the name.
func TestMermaidHostileNames(t *testing.T) {
	nodes, edges := hostileGraph()
	var b strings.Builder
	writeMermaid(&b, nodes, edges)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if lines[0] != "graph LR" || len(lines) != 1+len(nodes)+len(edges) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), 1+len(nodes)+len(edges), b.String())
	}
	node := regexp.MustCompile(`^  g(\d+)\["([^"]*)"\]$`)
	plain := regexp.MustCompile(`^  g\d+ --> g\d+$`)
	dashed := regexp.MustCompile(`^  g\d+ -\. "([^"]*)" \.-> g\d+$`)
	var labels []string
	for _, l := range lines[1:] {
		switch {
		case node.MatchString(l):
			labels = append(labels, node.FindStringSubmatch(l)[2])
		case dashed.MatchString(l):
			labels = append(labels, dashed.FindStringSubmatch(l)[1])
		case plain.MatchString(l):
		default:
			t.Errorf("not a node or an edge: %q", l)
		}
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if strings.ContainsAny(l, "<>`%&\"") || termsafe.Escape(l) != l {
			t.Errorf("label %q holds a character Mermaid interprets", l)
		}
		if rest := mermaidEntity.ReplaceAllString(l, ""); strings.Contains(rest, "#") {
			t.Errorf("label %q holds a # outside an entity code", l)
		}
		seen[mermaidDecode(l)] = true
	}
	for _, n := range hostileNames {
		if !seen[termsafe.Escape(n)] || !seen["filter "+termsafe.Escape(n)] {
			t.Errorf("%q is not shown as itself", n)
		}
	}
}

// In dot, every name is one quoted ID: the DOT lexer only treats \" and \\ in it, and Go's
// quoting turns everything else (controls, bidi) into visible backslash sequences.
func TestDotHostileNames(t *testing.T) {
	nodes, edges := hostileGraph()
	var b strings.Builder
	writeDot(&b, nodes, edges)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 4+len(nodes)+len(edges) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), 4+len(nodes)+len(edges), b.String())
	}
	const id = `"((?:[^"\\\n]|\\.)*)"`
	node := regexp.MustCompile(`^  ` + id + `;$`)
	edge := regexp.MustCompile(`^  ` + id + ` -> ` + id + `( \[label=` + id + `, style=dashed\])?;$`)
	seen := map[string]bool{}
	for _, l := range lines[3 : len(lines)-1] {
		var ids []string
		if m := node.FindStringSubmatch(l); m != nil {
			ids = m[1:2]
		} else if m := edge.FindStringSubmatch(l); m != nil {
			ids = []string{m[1], m[2], m[4]}
		} else {
			t.Fatalf("not a node or an edge: %q", l)
		}
		for _, q := range ids {
			s, err := strconv.Unquote(`"` + q + `"`)
			if err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			seen[s] = true
		}
	}
	if termsafe.Escape(strings.ReplaceAll(b.String(), "\n", "")) != strings.ReplaceAll(b.String(), "\n", "") {
		t.Error("a control or bidi character is raw in the output")
	}
	for _, n := range hostileNames {
		if !seen[n] || !seen["filter "+n] {
			t.Errorf("%q does not read back", n)
		}
	}
}
