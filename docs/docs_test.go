// Package docs_test keeps the reference pages in docs/ honest. Every directory under
// docs/examples that holds an entitlements.yaml is a small config repo; TestExamples calculates
// it as `entitlements calc --config entitlements.yaml --now 2026-01-01` run in that directory
// (with --ldap-groups ldap-groups.yaml when the file exists) and compares the result with its
// expected.json. A repo with a state.json is also planned against it (as `plan --state
// state.json --out plan.json`) and compared with plan-output.txt (what plan prints, without
// its totals line) and plan.json; a repo with an audit-log directory
// must hold exactly the files the GitRepo auditor would write for its groups.
// TestQuotedFiles checks that every file a page quotes is quoted byte for byte.
//
// After changing an example or the code, `go test ./docs -update` rewrites the expected
// outputs; the pages that quote them then fail TestQuotedFiles until they are updated too.
package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
	"github.com/entitlements-go/entitlements/review"
	"github.com/entitlements-go/entitlements/validate"
)

var update = flag.Bool("update", false, "rewrite the expected outputs of docs/examples from the current code")

// now is the --now of every example; the pages say so.
var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// examples returns the example repos, as paths relative to docs/.
func examples(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("examples", "*", "entitlements.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	if len(dirs) == 0 {
		t.Fatal("no examples under docs/examples")
	}
	return dirs
}

func TestExamples(t *testing.T) {
	for _, dir := range examples(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			abs, err := filepath.Abs(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Chdir(abs) // as a user runs it: the people file is found relative to the working directory
			repo, res := calculate(t)
			var got bytes.Buffer
			if err := res.WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			golden(t, "expected.json", got.Bytes())
			if exists("state.json") {
				text, saved := planAgainstState(t, repo, res)
				golden(t, "plan-output.txt", text)
				golden(t, "plan.json", saved)
			}
			if exists("audit-log") {
				checkAuditLog(t, res)
			}
		})
	}
}

// calculate loads the repo in the working directory. An example must load without errors
// and without warnings: the pages show configs to copy.
func calculate(t *testing.T) (*calc.Repo, *calc.Result) {
	t.Helper()
	var warns []string
	opt := calc.Options{Types: backends.Types(), Now: now, Getenv: func(string) (string, bool) { return "", false },
		OnWarning: func(w validate.Warning) { warns = append(warns, w.String()) }}
	if exists("ldap-groups.yaml") {
		snap, err := calc.LoadLDAPSnapshot("ldap-groups.yaml")
		if err != nil {
			t.Fatal(err)
		}
		opt.LDAPGroups = snap
	}
	ctx := context.Background()
	repo, err := calc.Load(ctx, "entitlements.yaml", opt)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings (an example must have none):\n%s", strings.Join(warns, "\n"))
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatalf("calculate: %v", err)
	}
	return repo, res
}

// planAgainstState plans against state.json, every target served by the fake provider as
// `entitlements plan --state` does, and returns what plan prints (without its totals line,
// which holds timings) and the saved plan. The CLI adds "revision" to the saved inputs when
// the config is in a git work tree; the library leaves it out, which keeps the file stable.
func planAgainstState(t *testing.T, repo *calc.Repo, res *calc.Result) (text, saved []byte) {
	t.Helper()
	fp, err := fake.LoadState("state.json")
	if err != nil {
		t.Fatal(err)
	}
	reg := backends.Spec().WithFactory(func(*config.OU) (providers.Provider, error) { return fp, nil })
	plan, err := deploy.Build(context.Background(), res, repo.Config(), deploy.Options{Backends: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Err(); err != nil {
		t.Fatalf("the example's plan fails: %v", err)
	}
	var out bytes.Buffer
	review.WritePlanText(&out, plan, review.PlanTextOptions{})
	for line := range strings.Lines(out.String()) {
		if !strings.HasPrefix(line, "Plan: ") {
			text = append(text, line...)
		}
	}
	var b bytes.Buffer
	if _, err := plan.Save(deploy.InputsOf(repo)).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.ReadPlan(bytes.NewReader(b.Bytes())); err != nil {
		t.Fatal(err)
	}
	return text, b.Bytes()
}

// checkAuditLog: audit-log/ holds, for every group with a DN, the file the GitRepo auditor
// writes after applying it (no person_dn_format), and the predictive state reads it back.
func checkAuditLog(t *testing.T, res *calc.Result) {
	t.Helper()
	want := map[string]string{}
	for _, g := range res.Groups {
		if g.DN != "" {
			want[filepath.FromSlash(cache.PathFromDN(g.DN))] = audit.Content(g.Members, g.Metadata, "")
		}
	}
	if *update {
		if err := os.RemoveAll("audit-log"); err != nil {
			t.Fatal(err)
		}
		for rel, content := range want {
			p := filepath.Join("audit-log", rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[string]string{}
	err := filepath.WalkDir("audit-log", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel("audit-log", p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel, w := range want {
		if g, ok := got[rel]; !ok {
			t.Errorf("audit-log/%s is missing (go test ./docs -update writes it)", rel)
		} else if g != w {
			t.Errorf("audit-log/%s:\n%s\nthe auditor writes:\n%s", rel, g, w)
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("audit-log/%s is no group of the result", rel)
		}
	}
	state, err := cache.LoadPredictive("audit-log")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range res.Groups {
		if g.DN == "" {
			continue
		}
		e, ok := state.Lookup(g.DN)
		if !ok {
			t.Errorf("the predictive state has no entry for %s", g.DN)
			continue
		}
		low := make([]string, len(g.Members))
		for i, m := range g.Members {
			low[i] = strings.ToLower(m)
		}
		slices.Sort(low)
		if !slices.Equal(e.Members, low) || !cache.SameMetadata(g.Metadata, e) {
			t.Errorf("the predictive state reads %s as %v %v, not %v %v", g.DN, e.Members, e.Metadata, low, g.Metadata)
		}
	}
}

// golden compares got with the file, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (go test ./docs -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the code gives now (go test ./docs -update rewrites it; then update the pages that quote it):\n%s",
			name, firstDifference(string(want), string(got)))
	}
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// A page quotes a file of docs/examples in a fenced block right after a line that links it:
//
//	[`examples/x/groups/a.txt`](examples/x/groups/a.txt):
//
// The block must be the whole file. After a line that links an expected.json and ends in
// ", members of each group:", the block is one "<group>: <members>" line per group instead.
// After a line
//
//	`entitlements explain --group OU/CN --person UID` in [`examples/x`](examples/x):
//
// the block is what explain prints for that example.
var (
	quoteLine   = regexp.MustCompile("^\\[`([^`]+)`\\]\\(([^)]+)\\)(:|, members of each group:)$")
	explainLine = regexp.MustCompile("^`entitlements explain --group (\\S+) --person (\\S+)` in \\[`([^`]+)`\\]\\(([^)]+)\\):$")
	fence       = regexp.MustCompile("^(```+|~~~+)")
	exampleLink = regexp.MustCompile(`\]\((examples/[^)#]+)`)
)

type quote struct {
	page    string
	line    int // of the block's first line
	path    string
	members bool
	// group and person: the block is an explanation, path the example repo.
	group, person string
	text          string
}

// quotes parses the fenced blocks of a page that quote example files.
func quotes(t *testing.T, page string) []quote {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []quote
	var cur *quote
	var open, prev string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case open != "":
			if strings.TrimSpace(line) == open {
				if cur != nil {
					out = append(out, *cur)
				}
				open, cur = "", nil
			} else if cur != nil {
				cur.text += line + "\n"
			}
			continue
		case fence.MatchString(line):
			open = fence.FindString(line)
			if m := quoteLine.FindStringSubmatch(prev); m != nil {
				if m[1] != m[2] {
					t.Errorf("%s:%d: the link text %q and target %q differ", page, n-1, m[1], m[2])
				}
				cur = &quote{page: page, line: n + 1, path: m[2], members: m[3] != ":"}
			} else if m := explainLine.FindStringSubmatch(prev); m != nil {
				if m[3] != m[4] {
					t.Errorf("%s:%d: the link text %q and target %q differ", page, n-1, m[3], m[4])
				}
				cur = &quote{page: page, line: n + 1, path: m[4], group: m[1], person: m[2]}
			}
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if open != "" {
		t.Errorf("%s: a fenced block is not closed", page)
	}
	return out
}

func TestQuotedFiles(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	linked := map[string]bool{}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range exampleLink.FindAllStringSubmatch(string(data), -1) {
			if !exists(filepath.FromSlash(m[1])) {
				t.Errorf("%s links %s, which does not exist", page, m[1])
			}
			if parts := strings.SplitN(m[1], "/", 3); len(parts) >= 2 {
				linked[parts[1]] = true
			}
		}
		for _, q := range quotes(t, page) {
			if q.person != "" {
				if got := explain(t, q); got != q.text {
					t.Errorf("%s:%d: the block is not what explain prints:\n%s", q.page, q.line, firstDifference(got, q.text))
				}
				continue
			}
			data, err := os.ReadFile(filepath.FromSlash(q.path))
			if err != nil {
				t.Errorf("%s:%d: %v", q.page, q.line, err)
				continue
			}
			want := string(data)
			if q.members {
				want, err = membersText(data)
				if err != nil {
					t.Errorf("%s:%d: %s: %v", q.page, q.line, q.path, err)
					continue
				}
			}
			if q.text != want {
				t.Errorf("%s:%d: the block does not show %s as it is (%s):\n%s", q.page, q.line, q.path,
					map[bool]string{false: "byte for byte", true: "members of each group"}[q.members],
					firstDifference(want, q.text))
			}
		}
	}
	for _, page := range pages {
		checkAnchors(t, page)
	}
	for _, dir := range examples(t) {
		if !linked[filepath.Base(dir)] {
			t.Errorf("no page links %s", filepath.ToSlash(dir))
		}
	}
}

// anchorLink is a link to a heading of a Markdown file: [text](page.md#anchor) or (#anchor).
var anchorLink = regexp.MustCompile(`\]\(([^)#\s]*\.md)?#([^)\s]+)\)`)

// checkAnchors checks that every link of a page to a heading of a page (its own, another of
// docs/, or ../README.md) names a heading that exists, by GitHub's rule for heading anchors.
func checkAnchors(t *testing.T, page string) {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range anchorLink.FindAllStringSubmatch(string(data), -1) {
		target := page
		if m[1] != "" {
			target = filepath.FromSlash(m[1])
		}
		if !slices.Contains(headingAnchors(t, target), m[2]) {
			t.Errorf("%s links %s#%s: no such heading", page, filepath.ToSlash(target), m[2])
		}
	}
}

// headingAnchors lists the anchors GitHub gives the headings of a Markdown file: lower case,
// blanks turned into '-', and every character but letters, digits, '-' and '_' removed.
func headingAnchors(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inFence := false
	for line := range strings.Lines(string(data)) {
		if fence.MatchString(line) {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// explain is `entitlements explain` of a quote's group and person in its example repo.
func explain(t *testing.T, q quote) string {
	t.Helper()
	var text string
	t.Run("explain "+q.group+" "+q.person, func(t *testing.T) {
		abs, err := filepath.Abs(filepath.FromSlash(q.path))
		if err != nil {
			t.Fatal(err)
		}
		t.Chdir(abs)
		_, res := calculate(t)
		ex, err := res.Explain(q.group, q.person)
		if err != nil {
			t.Fatalf("%s:%d: %v", q.page, q.line, err)
		}
		var b strings.Builder
		ex.WriteText(&b)
		text = b.String()
	})
	return text
}

// membersText renders a calc result as "<group>: <member>, <member>" lines ("(none)" for an
// empty group).
func membersText(data []byte) (string, error) {
	var doc struct {
		Groups map[string]struct {
			Members []string `json:"members"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(doc.Groups)) {
		m := strings.Join(doc.Groups[k].Members, ", ")
		if m == "" {
			m = "(none)"
		}
		fmt.Fprintf(&b, "%s: %s\n", k, m)
	}
	return b.String(), nil
}

// firstDifference shows the first line where got departs from want.
func firstDifference(want, got string) string {
	w, g := strings.SplitAfter(want, "\n"), strings.SplitAfter(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d: want %q\n         got  %q", i+1, wl, gl)
		}
	}
	return "(equal)"
}
