package review

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func bigDiff(groups, members int) *Diff {
	d := &Diff{}
	for i := range groups {
		g := &GroupDiff{Key: fmt.Sprintf("teams/g%04d", i), OU: "teams", File: fmt.Sprintf("groups/teams/g%04d.txt", i), Status: Changed}
		for j := range members {
			g.Added = append(g.Added, Member{UID: fmt.Sprintf("user%05d", j), Reason: fmt.Sprintf("username = user%05d (groups/teams/g%04d.txt:%d)", j, i, j+1)})
		}
		d.Groups = append(d.Groups, g)
	}
	return d
}

func TestMarkdownLimitAndCollapse(t *testing.T) {
	for _, tc := range []struct {
		name            string
		groups, members int
		limit           int
		truncated       bool
		details         bool
	}{
		{"small, inline lists", 2, 3, 0, false, false},
		{"long lists collapse", 2, 11, 0, false, true},
		{"GitHub's limit", 400, 30, 0, true, true},
		{"a small limit", 50, 5, 3000, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := bigDiff(tc.groups, tc.members).WriteMarkdown(&b, MarkdownOptions{Limit: tc.limit}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			limit := tc.limit
			if limit == 0 {
				limit = GitHubCommentLimit
			}
			if utf8.RuneCountInString(out) > limit || len(out) > limit {
				t.Errorf("%d bytes, %d characters: over the limit %d", len(out), utf8.RuneCountInString(out), limit)
			}
			if got := strings.Contains(out, "Truncated: "); got != tc.truncated {
				t.Errorf("truncated = %v, want %v", got, tc.truncated)
			}
			if got := strings.Contains(out, "<details><summary>"); got != tc.details {
				t.Errorf("details = %v, want %v", got, tc.details)
			}
			if strings.Count(out, "<details>") != strings.Count(out, "</details>") {
				t.Error("unbalanced <details>: a section was cut in the middle")
			}
			if tc.truncated {
				shown := strings.Count(out, "#### `")
				if !strings.Contains(out, fmt.Sprintf("Truncated: %d more group(s) not shown", tc.groups-shown)) {
					t.Errorf("the note does not count the %d groups left out", tc.groups-shown)
				}
			}
		})
	}
}

func TestMarkdownEscapes(t *testing.T) {
	d := &Diff{Groups: []*GroupDiff{{Key: "teams/a", OU: "te|ams", File: "f.txt", Status: Changed,
		Description: &[2]string{"<b>old</b>", "new | *x*"},
		Added:       []Member{{UID: "bob", Reason: "username = bob <script> | _x_"}}}}}
	var b strings.Builder
	d.WriteMarkdown(&b, MarkdownOptions{})
	out := b.String()
	for _, bad := range []string{"<script>", "<b>", "| te|ams |", "new | *x*"} {
		if strings.Contains(out, bad) {
			t.Errorf("unescaped %q in:\n%s", bad, out)
		}
	}
}

func TestMembers(t *testing.T) {
	add, rem := members([]string{"a", "b", "d"}, []string{"b", "c", "d", "e"})
	if fmt.Sprint(add, rem) != "[c e] [a]" {
		t.Errorf("add %v rem %v", add, rem)
	}
}
