package review

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// The groups a change edits lead the comment and are never left out: the others are
// dropped from the end, then the edited groups' own lists are shortened, down to counts
// (issue 22.2).
func TestMarkdownEditedFirstNeverDropped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		limit     int
		whole     bool // the edited group's list is complete
		shortened bool
		// dropped: not even the edited group's heading fits (the note says so)
		dropped bool
	}{
		{"GitHub's limit", 0, true, false, false},
		{"small", 3000, true, false, false},
		{"tiny", 1000, false, true, false},
		{"the smallest limit", minMarkdownLimit, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := bigDiff(400, 30)
			d.Groups[399].Edited = true // sorts last
			var b strings.Builder
			if err := d.WriteMarkdown(&b, MarkdownOptions{Limit: tc.limit}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			limit := tc.limit
			if limit == 0 {
				limit = GitHubCommentLimit
			}
			if len(out) > limit || utf8.RuneCountInString(out) > limit {
				t.Fatalf("%d bytes: over the limit %d", len(out), limit)
			}
			if tc.dropped {
				if !strings.Contains(out, "400 more group(s) not shown (1 of them edited by this change)") {
					t.Errorf("the note does not say that the edited group is left out:\n%s", out)
				}
				return
			}
			_, rest, _ := strings.Cut(out, "\n#### `")
			if !strings.HasPrefix(rest, "teams/g0399`") {
				t.Errorf("the edited group is not the first section:\n%s", out)
			}
			if !strings.Contains(out, "### Groups whose files this change edits (1)") ||
				!strings.Contains(out, "more group(s) not shown") || strings.Contains(out, "edited by this change)") {
				t.Errorf("headings or note:\n%s", out)
			}
			if got := strings.Contains(out, "`user00029` — username = user00029 (groups/teams/g0399.txt:30)"); got != tc.whole {
				t.Errorf("the edited group's last member shown: %v, want %v\n%s", got, tc.whole, out)
			}
			if got := strings.Contains(out, "long lists shortened"); got != tc.shortened {
				t.Errorf("note says lists shortened: %v, want %v", got, tc.shortened)
			}
			if !detailsBalanced(out) {
				t.Error("unbalanced <details>")
			}
		})
	}
}

// People who share a reason are listed once under it: one item per shared first step (Via)
// or per identical reason, at most MaxNames names; a reason of one person keeps its line.
// Full names everyone.
func TestMarkdownSharedReasons(t *testing.T) {
	g := &GroupDiff{Key: "apps/wiki", OU: "apps", File: "groups/apps/wiki.txt", Status: Changed}
	for i := range 25 {
		uid := fmt.Sprintf("u%02d", i)
		g.Added = append(g.Added, Member{UID: uid, Via: "group = teams/sre (groups/apps/wiki.txt:2)",
			Reason: fmt.Sprintf("group = teams/sre (groups/apps/wiki.txt:2) → username = %s (groups/teams/sre.txt:%d)", uid, i+1)})
	}
	g.Added = append(g.Added, Member{UID: "zed", Reason: "username = zed (groups/apps/wiki.txt:3)"})
	for _, uid := range []string{"r1", "r2"} {
		g.Removed = append(g.Removed, Member{UID: uid, Reason: "removed by filter contractors (contractors = none in groups/apps/wiki.txt)"})
	}
	d := &Diff{Groups: []*GroupDiff{g}}
	render := func(opt MarkdownOptions) string {
		var b strings.Builder
		if err := d.WriteMarkdown(&b, opt); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := render(MarkdownOptions{})
	for _, want := range []string{
		"- 25 people — via group = teams/sre (groups/apps/wiki.txt:2): `u00`, `u01`,",
		"`u19`, +5 more\n",
		"- `zed` — username = zed (groups/apps/wiki.txt:3)\n",
		"- 2 people — removed by filter contractors (contractors = none in groups/apps/wiki.txt): `r1`, `r2`\n",
		"**➕ 26 added**",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "username = u00") || strings.Contains(out, "Truncated") {
		t.Errorf("a shared reason's own steps are repeated, or a note:\n%s", out)
	}
	if out := render(MarkdownOptions{MaxNames: 2}); !strings.Contains(out, ": `u00`, `u01`, +23 more\n") {
		t.Errorf("MaxNames 2:\n%s", out)
	}
	if out := render(MarkdownOptions{Full: true, MaxNames: 2, Limit: 900}); !strings.Contains(out, "`u24`\n") || strings.Contains(out, "more") {
		t.Errorf("Full names everyone:\n%s", out)
	}
}

// The shared-reason lines and the headings of edited groups escape what the pull request
// chose, as every other line does.
func TestMarkdownHostileSharedReasons(t *testing.T) {
	for k, s := range hostile {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			build := func(v string) *Diff {
				d, _, _ := hostileDiff(func(int) string { return v })
				for i, g := range d.Groups {
					g.Edited = i%2 == 1
					for j := range g.Added {
						g.Added[j].Via, g.Added[j].Reason = v, fmt.Sprintf("%s → %d", v, j)
					}
				}
				return d
			}
			var doc, benign strings.Builder
			if err := build(s).WriteMarkdown(&doc, MarkdownOptions{Title: s}); err != nil {
				t.Fatal(err)
			}
			build("v").WriteMarkdown(&benign, MarkdownOptions{Title: "v"})
			text := []string{"via " + s}
			checkMarkdown(t, doc.String(), benign.String(), []string{s}, text)
		})
	}
}

// Lists are shortened only for the groups a change edits: a diff without any, or whose
// summary alone fills the comment, is truncated as before and says nothing of shortening.
func TestMarkdownShortensOnlyForEditedGroups(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ous    bool // one OU per group: a summary table larger than the limit
		edited bool
	}{
		{"no edited group", false, false},
		{"a summary larger than the limit", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := bigDiff(200, 30)
			for i, g := range d.Groups {
				if tc.ous {
					g.OU = fmt.Sprintf("ou%03d", i)
				}
				g.Edited = tc.edited && i == 199
			}
			var b strings.Builder
			if err := d.WriteMarkdown(&b, MarkdownOptions{Limit: 3000}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if len(out) > 3000 || !strings.Contains(out, "Truncated: ") || strings.Contains(out, "shortened") || strings.Contains(out, "more (in the full diff)") {
				t.Errorf("%d bytes:\n%s", len(out), out)
			}
		})
	}
}
