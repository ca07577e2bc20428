package review

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/entitlements-go/entitlements/guard"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/providers"
)

// hostile are strings a pull request or a target can put in a group name, an OU key, a uid,
// a description, a metadata value, a rule or an error message, each aimed at the Markdown of
// a pull-request comment or at the terminal that shows a plan.
var hostile = []string{
	"@acme/security-team please approve",
	"cc @alice and @bob",
	"see [the docs](https://evil.example/x)",
	"![beacon](https://evil.example/p.png)",
	"[ref]: https://evil.example/ref",
	"zz`</details><img src=https://evil.example/p.png>",
	"a``b```c",
	"` leading backtick",
	"trailing backtick `",
	"``",
	" padded ",
	"<script>alert(1)</script>",
	"<!-- hide the rest",
	"<https://evil.example/auto>",
	"https://evil.example/bare and WWW.evil.example",
	"mail a@evil.example or mailto:b@evil.example",
	"&#64;team &lt;img src=x&gt; &#x202e; &amp;",
	"a|b|c",
	"line1\n#### forged heading\n- forged item",
	"crlf\r\n> quote",
	"# not a heading",
	"- not an item",
	"1. not an item",
	"    not code",
	"*bold* _it_ ~~strike~~ $x^2$",
	"back\\slash\\",
	"\\`escaped\\`",
	"fixes #123 and owner/repo#45",
	"\x1b[2J\x1b]0;pwned\x07 esc",
	"c1 \u009b31m",
	"bidi \u202eexe.txt\u2066x\u2069",
	"invalid \xff\xfe utf8",
	"zero\u200bwidth",
	"%%{init: {\"securityLevel\": \"loose\"}}%%",
	"end; click g0 call alert()",
}

// fields hands out field values: the i-th data field of a fixture gets v(i).
type fields struct {
	v func(i int) string
	n int
}

func (f *fields) next() string {
	f.n++
	return f.v(f.n - 1)
}

// hostileDiff is a diff that uses every field the Markdown and text renderers print, with
// a list long enough to be collapsed.
func hostileDiff(v func(int) string) (*Diff, []string, []string) {
	f := &fields{v: v}
	var code, text []string // values expected in code spans / in text
	d := &Diff{Unexplained: 2}
	for i, st := range []Status{Changed, Created, Deleted} {
		g := &GroupDiff{Key: f.next(), OU: f.next(), DN: f.next(), File: f.next(), Status: st}
		code = append(code, g.Key, g.DN, g.File)
		text = append(text, g.OU)
		if st == Changed {
			g.Description = &[2]string{f.next(), f.next()}
			text = append(text, g.Description[0], g.Description[1])
			g.Metadata = []MetaChange{{Key: f.next(), Old: f.next(), New: f.next()}}
			code = append(code, g.Metadata[0].Key, metaValue(g.Metadata[0].Old), metaValue(g.Metadata[0].New))
		}
		for j := range 1 + 11*i {
			m := Member{UID: f.next(), Reason: f.next()}
			code, text = append(code, m.UID), append(text, m.Reason)
			if j%2 == 0 {
				g.Added = append(g.Added, m)
			} else {
				g.Removed = append(g.Removed, m)
			}
		}
		d.Groups = append(d.Groups, g)
	}
	return d, code, text
}

// hostilePlan is a plan with every kind of change, a failed target and a refused one.
func hostilePlan(v func(int) string) (*deploy.Plan, []string, []string) {
	f := &fields{v: v}
	var code, text []string
	p := &deploy.Plan{}
	for i := range 3 {
		t := &deploy.TargetPlan{OU: f.next(), Type: f.next()}
		code, text = append(code, t.OU), append(text, t.Type)
		if i == 1 {
			t.Err = errors.New(f.next())
			text = append(text, t.Err.Error())
		}
		if i == 2 {
			ge := &guard.Error{OU: f.next(), Limit: guard.LimitShare, Removed: 3, Total: 4, Worst: []string{f.next()}}
			t.Err = ge
			text = append(text, ge.Error())
		}
		attr := f.next()
		cont := &providers.Change{Kind: providers.CreateContainer, OU: f.next(), DN: f.next()}
		create := &providers.Change{Kind: providers.CreateGroup, DN: f.next(), Add: []string{f.next(), f.next()}}
		del := &providers.Change{Kind: providers.DeleteGroup, DN: f.next(), Remove: []string{f.next()}}
		upd := &providers.Change{Kind: providers.UpdateGroup, DN: f.next(), DescriptionChanged: true, AttrsChanged: []string{attr},
			Current: &providers.Group{Description: f.next(), Attrs: map[string][]string{attr: {f.next()}}},
			Desired: &providers.Group{Description: f.next(), Attrs: map[string][]string{attr: {f.next()}}}}
		for j := range 12 {
			if j%2 == 0 {
				upd.Add = append(upd.Add, f.next())
			} else {
				upd.Remove = append(upd.Remove, f.next())
			}
		}
		person := &providers.Change{Kind: providers.UpdatePerson, Person: f.next(), Attribute: f.next(),
			OldValues: []string{f.next()}, Values: []string{f.next()}}
		t.Changes = []*providers.Change{cont, create, del, upd, person}
		code = append(code, cont.OU, create.DN, del.DN, upd.DN, person.Person,
			fmt.Sprint(upd.Current.Attrs[attr]), fmt.Sprint(upd.Desired.Attrs[attr]), fmt.Sprint(person.OldValues), fmt.Sprint(person.Values))
		code = append(code, create.Add...)
		code = append(code, upd.Add...)
		code = append(code, upd.Remove...)
		text = append(text, attr, upd.Current.Description, upd.Desired.Description, person.Attribute)
		p.Targets = append(p.Targets, t)
	}
	return p, code, text
}

// renderers are the Markdown renderers under test, each with the values it was given.
var mdRenderers = []struct {
	name   string
	render func(v func(int) string, opt MarkdownOptions) (out string, code, text []string)
}{
	{"diff", func(v func(int) string, opt MarkdownOptions) (string, []string, []string) {
		d, code, text := hostileDiff(v)
		var b strings.Builder
		if err := d.WriteMarkdown(&b, opt); err != nil {
			panic(err)
		}
		return b.String(), code, text
	}},
	{"plan", func(v func(int) string, opt MarkdownOptions) (string, []string, []string) {
		p, code, text := hostilePlan(v)
		var b strings.Builder
		if err := WritePlanMarkdown(&b, p, opt); err != nil {
			panic(err)
		}
		return b.String(), code, text
	}},
	{"drift", func(v func(int) string, opt MarkdownOptions) (string, []string, []string) {
		r, code, text := hostileDrift(v)
		var b strings.Builder
		if err := WriteDriftMarkdown(&b, r, opt); err != nil {
			panic(err)
		}
		return b.String(), code, text
	}},
}

// checkMarkdown asserts that data reached doc only in its escaped form: the document has
// the shape it has with harmless data, no text segment holds HTML, a mention, a link, an
// image or an autolink, every code-span value is one whole code span, every text value
// reads back as itself (control characters shown as escapes).
func checkMarkdown(t *testing.T, doc, benign string, code, text []string) {
	t.Helper()
	if got, want := mdShape(doc), mdShape(benign); !maps.Equal(got, want) {
		keys := slices.Sorted(maps.Keys(want))
		for k := range got {
			if _, ok := want[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			if got[k] != want[k] {
				t.Errorf("shape %q: %d, with harmless data %d", k, got[k], want[k])
			}
		}
		t.Logf("document:\n%s", doc)
	}
	checkMarkdownText(t, doc)
	if termsafe.Escape(strings.ReplaceAll(doc, "\n", "")) != strings.ReplaceAll(doc, "\n", "") {
		t.Errorf("a control or bidi character reached the document raw")
	}
	spans := codeSpans(doc)
	for _, v := range code {
		want := termsafe.Escape(v)
		if want == "" {
			want = " " // an empty value shows as a blank code span
		}
		if !spans[want] {
			t.Errorf("%q is not one whole code span", v)
		}
	}
	read := decodedText(doc)
	for _, v := range text {
		if want := strings.ReplaceAll(termsafe.Escape(v), "\u200b", ""); !strings.Contains(read, want) {
			t.Errorf("text %q does not read back as %q", v, want)
		}
	}
	if !detailsBalanced(doc) {
		t.Error("unbalanced <details>")
	}
}

func benignValue(i int) string { return fmt.Sprintf("v%d", i) }

func TestMarkdownHostileStrings(t *testing.T) {
	for _, r := range mdRenderers {
		// Every field the same hostile string, then every field a different one.
		for k, s := range hostile {
			t.Run(fmt.Sprintf("%s/%d", r.name, k), func(t *testing.T) {
				same := func(int) string { return s }
				doc, code, text := r.render(same, MarkdownOptions{Title: s})
				benignSame, _, _ := r.render(func(int) string { return "v" }, MarkdownOptions{Title: "v"})
				checkMarkdown(t, doc, benignSame, code, text)
			})
		}
		t.Run(r.name+"/mixed", func(t *testing.T) {
			doc, code, text := r.render(func(i int) string { return hostile[i%len(hostile)] }, MarkdownOptions{})
			// The same value in the same fields as the hostile run, so that grouping by OU
			// gives the same rows.
			benignMixed, _, _ := r.render(func(i int) string { return benignValue(i % len(hostile)) }, MarkdownOptions{})
			checkMarkdown(t, doc, benignMixed, code, text)
		})
	}
}

// The escaping must leave ordinary data byte for byte as before (the goldens of the CLI
// hold the rest).

// Truncation to GitHub's comment limit drops whole sections only: what is shown is the
// head of the full document up to a section boundary, within the limit, with every code
// span, escape and <details> block closed.
func TestMarkdownTruncationHostile(t *testing.T) {
	for _, r := range mdRenderers {
		value := func(i int) string { return strings.Repeat(hostile[i%len(hostile)], 1+i%4) }
		full, _, _ := r.render(value, MarkdownOptions{Limit: 1 << 30})
		for limit := 1000; limit < len(full)+500; limit += 97 {
			doc, _, _ := r.render(value, MarkdownOptions{Limit: limit})
			if len(doc) > limit {
				t.Fatalf("%s: %d bytes over the limit %d", r.name, len(doc), limit)
			}
			shown, _, truncated := strings.Cut(doc, "\n> [!WARNING]\n> Truncated: ")
			if !truncated {
				if doc != full {
					t.Fatalf("%s limit %d: not truncated but not the full document", r.name, limit)
				}
				continue
			}
			if !strings.HasPrefix(full, shown) {
				t.Fatalf("%s limit %d: the shown part is not the head of the document:\n%s", r.name, limit, shown)
			}
			// A section starts with its heading; a cut head ends at a table row or, in the
			// drift report, before the paragraph of pending changes.
			if rest := full[len(shown):]; !strings.HasPrefix(rest, "#### ") && !strings.HasPrefix(rest, "| ") && !strings.HasPrefix(rest, "**Pending") && shown != "" {
				t.Errorf("%s limit %d: cut inside a section, before %q", r.name, limit, rest[:min(40, len(rest))])
			}
			if !detailsBalanced(doc) {
				t.Errorf("%s limit %d: unbalanced <details>", r.name, limit)
			}
			checkMarkdownText(t, doc)
		}
	}
}

// A summary that alone exceeds the limit (many targets with long errors) is cut at a row,
// and the document stays within the limit.
func TestMarkdownHugeSummary(t *testing.T) {
	p := &deploy.Plan{}
	for i := range 300 {
		p.Targets = append(p.Targets, &deploy.TargetPlan{OU: fmt.Sprintf("ou%03d", i), Type: "ldap",
			Err: errors.New(strings.Repeat("<img src=x> @team ", 200))})
	}
	var b strings.Builder
	if err := WritePlanMarkdown(&b, p, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	if len(doc) > GitHubCommentLimit || utf8.RuneCountInString(doc) > GitHubCommentLimit {
		t.Fatalf("%d bytes: over GitHub's limit", len(doc))
	}
	if !strings.Contains(doc, "Truncated") {
		t.Error("no truncation note")
	}
	checkMarkdownText(t, doc)
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		for _, r := range mdRenderers {
			opt := MarkdownOptions{Limit: 1000 + int(uint(limit)%20000)}
			doc, code, text := r.render(func(int) string { return s }, MarkdownOptions{Title: s})
			harmless := "v"
			if s == "" {
				harmless = "" // an empty DN or reason is left out: the same shape needs the same emptiness
			}
			benign, _, _ := r.render(func(int) string { return harmless }, MarkdownOptions{Title: harmless})
			checkMarkdown(t, doc, benign, code, text)
			short, _, _ := r.render(func(int) string { return s }, opt)
			if len(short) > opt.Limit {
				t.Fatalf("%d bytes over the limit %d", len(short), opt.Limit)
			}
			checkMarkdownText(t, short)
			if !detailsBalanced(short) {
				t.Error("unbalanced <details>")
			}
		}
	})
}
func TestMarkdownOrdinaryDataUnchanged(t *testing.T) {
	for _, tc := range []struct{ in, text, code string }{
		{"pizza_teams/sre", `pizza\_teams/sre`, "`pizza_teams/sre`"},
		{"group &= pizza_teams/engineering (groups/apps/billing-admin.txt:3)",
			`group &= pizza\_teams/engineering (groups/apps/billing-admin.txt:3)`, ""},
		{"cn=sre,ou=Pizza_Teams,dc=example,dc=net", "", "`cn=sre,ou=Pizza_Teams,dc=example,dc=net`"},
		{"Équipe → org chart: a → b", "Équipe → org chart: a → b", "`Équipe → org chart: a → b`"},
	} {
		if tc.text != "" && mdText(tc.in) != tc.text {
			t.Errorf("mdText(%q) = %q, want %q", tc.in, mdText(tc.in), tc.text)
		}
		if tc.code != "" && mdCode(tc.in) != tc.code {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, mdCode(tc.in), tc.code)
		}
	}
}
