package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/termsafe"
)

// cmdGraph prints the dependency graph of groups, so people can see why changing one file
// moves the members of others. With --group, only the part around that group: what it
// depends on and what depends on it, transitively.
func cmdGraph(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	var c common
	c.register(fs)
	group := fs.String("group", "", "only the groups this one depends on and those that depend on it (OU/CN)")
	format := fs.String("format", "dot", "output format: dot (Graphviz) or mermaid")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *format != "dot" && *format != "mermaid" {
		fmt.Fprintf(stderr, "entitlements graph: unknown --format %q (dot, mermaid)\n", *format)
		return exitUsage
	}
	s := newSession(&c)
	defer s.close()
	repo, code := load(ctx, s, stderr)
	if repo == nil {
		return code
	}
	nodes, edges := repo.GroupKeys(), repo.Dependencies()
	if *group != "" {
		if !slices.Contains(nodes, *group) {
			hint := ""
			if s := repo.SuggestGroup(*group); s != "" {
				hint = fmt.Sprintf("; did you mean %q?", s)
			}
			fmt.Fprintf(stderr, "entitlements graph: no group %q in this repo%s\n", *group, hint)
			return exitError
		}
		nodes, edges = around(*group, edges)
	}
	if *format == "mermaid" {
		writeMermaid(stdout, nodes, edges)
	} else {
		writeDot(stdout, nodes, edges)
	}
	return exitOK
}

// around keeps the groups reachable from g in either direction, and the edges among them.
func around(g string, edges []calc.Dependency) ([]string, []calc.Dependency) {
	out, in := map[string][]string{}, map[string][]string{}
	for _, e := range edges {
		out[e.From] = append(out[e.From], e.To)
		in[e.To] = append(in[e.To], e.From)
	}
	keep := map[string]bool{g: true}
	for _, adj := range []map[string][]string{out, in} {
		stack := []string{g}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, m := range adj[n] {
				if !keep[m] {
					keep[m] = true
					stack = append(stack, m)
				}
			}
		}
	}
	var nodes []string
	for n := range keep {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	var kept []calc.Dependency
	for _, e := range edges {
		// Only edges on a path through g: a sibling that g's dependency also feeds is not
		// part of g's story.
		if keep[e.From] && keep[e.To] && (reaches(out, g, e.From) || reaches(in, g, e.To)) {
			kept = append(kept, e)
		}
	}
	return nodes, kept
}

func reaches(adj map[string][]string, from, to string) bool {
	seen := map[string]bool{from: true}
	stack := []string{from}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == to {
			return true
		}
		for _, m := range adj[n] {
			if !seen[m] {
				seen[m] = true
				stack = append(stack, m)
			}
		}
	}
	return false
}

func edgeLabel(e calc.Dependency) string {
	if e.Via == "rule" {
		return ""
	}
	return e.Via
}

// Group names come from file names and filter names from the config: a pull request chooses
// them, and in a graph they must stay labels.

// dotID quotes s as a DOT ID. The DOT lexer reads only \" and \\ in a quoted string and
// keeps every other backslash sequence as text; Go's quoting escapes exactly the quote and
// the backslash that way, and turns control and bidi characters into visible backslash
// sequences (which also keeps the graph from steering a terminal it is printed on). Label
// escapes such as \N or \L cannot arise: every backslash of s is doubled.
func dotID(s string) string { return strconv.Quote(s) }

func writeDot(w io.Writer, nodes []string, edges []calc.Dependency) {
	fmt.Fprintln(w, "digraph entitlements {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box];")
	for _, n := range nodes {
		fmt.Fprintf(w, "  %s;\n", dotID(n))
	}
	for _, e := range edges {
		if l := edgeLabel(e); l != "" {
			fmt.Fprintf(w, "  %s -> %s [label=%s, style=dashed];\n", dotID(e.From), dotID(e.To), dotID(l))
		} else {
			fmt.Fprintf(w, "  %s -> %s;\n", dotID(e.From), dotID(e.To))
		}
	}
	fmt.Fprintln(w, "}")
}

// mermaidLabel quotes s as a Mermaid label: in a double-quoted string Mermaid's lexer ends
// only at '"' (so ';', '|', '-->' or "end" are text), and it decodes #code; entity codes
// afterwards. Everything else Mermaid or the HTML of the rendered label would read is
// written as an entity code: the quote, '#' (so data cannot spell an entity code), '&', '<'
// and '>' (HTML), '`' (a Markdown string) and '%' (a %%{init}%% directive). Control and bidi
// characters are shown as escapes.
func mermaidLabel(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range termsafe.Escape(s) {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '#', '&', '<', '>', '`', '%':
			fmt.Fprintf(&b, "#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeMermaid writes a flowchart: node ids are generated (g0, g1, ...), names are labels.
func writeMermaid(w io.Writer, nodes []string, edges []calc.Dependency) {
	id := make(map[string]string, len(nodes))
	fmt.Fprintln(w, "graph LR")
	for i, n := range nodes {
		id[n] = fmt.Sprintf("g%d", i)
		fmt.Fprintf(w, "  %s[%s]\n", id[n], mermaidLabel(n))
	}
	for _, e := range edges {
		if l := edgeLabel(e); l != "" {
			fmt.Fprintf(w, "  %s -. %s .-> %s\n", id[e.From], mermaidLabel(l), id[e.To])
		} else {
			fmt.Fprintf(w, "  %s --> %s\n", id[e.From], id[e.To])
		}
	}
}
