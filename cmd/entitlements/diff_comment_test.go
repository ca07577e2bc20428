package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// commentRepo is a 300-person config repo under git, in a subdirectory "cfg": zteam/edited
// lists people; mid/c1..c4 reference it in a chain and teams/t00..t14 reference c4. A change
// to zteam/edited moves all 20 groups.
func commentRepo(t *testing.T) *gitRepo {
	t.Helper()
	g := newGitRepo(t)
	for _, e := range []string{"entitlements.yaml", "groups", "people.yaml", "manager-map.yaml"} {
		if err := os.RemoveAll(filepath.Join(g.dir, e)); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"cfg/entitlements.yaml": `configuration_path: ./groups
backends:
  l:
    type: ldap
    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: uid=binder,ou=People,dc=example,dc=net
    ldap_bindpw: secret
    person_dn_format: uid=%KEY%,ou=People,dc=example,dc=net
groups:
  mid:
    backend: l
    base: ou=mid,dc=example,dc=net
  teams:
    backend: l
    base: ou=teams,dc=example,dc=net
  zteam:
    backend: l
    base: ou=zteam,dc=example,dc=net
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`,
		"cfg/groups/zteam/edited.txt": "description = The group the pull request edits; it sorts last\nusername = u000\n",
		"cfg/groups/mid/c1.txt":       "group = zteam/edited\n",
	}
	var people strings.Builder
	for i := range 300 {
		fmt.Fprintf(&people, "u%03d: {cn: User %d}\n", i, i)
	}
	files["cfg/people.yaml"] = people.String()
	for i := 2; i <= 4; i++ {
		files[fmt.Sprintf("cfg/groups/mid/c%d.txt", i)] = fmt.Sprintf("group = mid/c%d\n", i-1)
	}
	for i := range 15 {
		files[fmt.Sprintf("cfg/groups/teams/t%02d.txt", i)] = "group = mid/c4\n"
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(g.dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(g.dir, p), s)
	}
	g.commit("base")
	return g
}

// TestDiffCommentLeadsWithEditedGroups (issue 22.2): 41 usernames added to one file of a
// 300-person repo move 20 groups. The comment leads with the group whose file the change
// edits and never leaves it out, lists the people of the other groups once under the reason
// they share, stays within GitHub's limit, and --out-full holds the whole diff.
func TestDiffCommentLeadsWithEditedGroups(t *testing.T) {
	g := commentRepo(t)
	base := g.git("rev-parse", "HEAD")
	g.edit("cfg/groups/zteam/edited.txt", func(s string) string {
		for i := 100; i < 141; i++ {
			s += fmt.Sprintf("username = u%03d\n", i)
		}
		return s
	})
	head := g.commit("41 people")
	t.Chdir(g.dir)
	full := filepath.Join(t.TempDir(), "full.md")
	diff := func(args ...string) string {
		t.Helper()
		code, out, stderr := runCLI(t, append([]string{"diff", "--config", "cfg/entitlements.yaml", "--base", base, "--head", head,
			"--format", "markdown"}, args...)...)
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if len(out) > 65536 || utf8.RuneCountInString(out) > 65536 {
			t.Errorf("%d bytes: over GitHub's comment limit", len(out))
		}
		return out
	}
	firstGroup := func(doc string) string {
		_, rest, _ := strings.Cut(doc, "\n#### `")
		k, _, _ := strings.Cut(rest, "`")
		return k
	}

	doc := diff("--out-full", full)
	mustContain(t, "comment", doc, "**20 group(s) changed**",
		"### Groups whose files this change edits (1)\n\n#### `zteam/edited`",
		"### Groups changed through references, filters or the org chart (19)",
		"- `u100` — username = u100 (cfg/groups/zteam/edited.txt:3)",
		// One line per shared reason, the first 20 people named.
		"- 41 people — via group = mid/c4 (cfg/groups/teams/t00.txt:1): `u100`, `u101`,",
		"`u119`, +21 more\n",
		"- 41 people — via group = zteam/edited (cfg/groups/mid/c1.txt:1): `u100`,")
	if k := firstGroup(doc); k != "zteam/edited" {
		t.Errorf("the first group is %q, want the edited zteam/edited", k)
	}
	if n := strings.Count(doc, "(cfg/groups/zteam/edited.txt:"); n != 41 {
		t.Errorf("the edited file's lines are named %d times, want 41 (once per person, in its own group)", n)
	}
	t.Logf("comment: %d bytes; --out-full: %d bytes", len(doc), len(mustRead(t, full)))
	if strings.Contains(doc, "Truncated") {
		t.Errorf("the grouped comment should fit whole:\n%s", doc)
	}

	// --out-full: every person of every group, no note.
	whole := mustRead(t, full)
	if strings.Contains(whole, "Truncated") || strings.Contains(whole, "more\n") || strings.Count(whole, "`u140`") != 20 {
		t.Errorf("--out-full is not the whole diff (%d mentions of u140, want 20):\n%s", strings.Count(whole, "`u140`"), whole)
	}

	// A comment too small for everything: the edited group stays, first, whole; the
	// others are left out from the end and the note says where the full diff is.
	small := diff("--markdown-limit", "4000")
	if k := firstGroup(small); k != "zteam/edited" || !strings.Contains(small, "- `u140` — username = u140") {
		t.Errorf("limit 4000: the edited group is not first and whole:\n%s", small)
	}
	mustContain(t, "limit 4000", small, "> Truncated: ", "more group(s) not shown", "--out-full")
	if len(small) > 4000 {
		t.Errorf("limit 4000: %d bytes", len(small))
	}
	// Smaller still: the edited group's own list is shortened rather than dropped.
	tiny := diff("--markdown-limit", "1600")
	mustContain(t, "limit 1600", tiny, "#### `zteam/edited`", "**➕ 41 added**", "more (in the full diff)", "long lists shortened")
	if len(tiny) > 1600 {
		t.Errorf("limit 1600: %d bytes", len(tiny))
	}

	// From the config's directory, the groups name their files relative to it.
	t.Chdir("cfg")
	code, sub, stderr := runCLI(t, "diff", "--config", "entitlements.yaml", "--base", base, "--head", head, "--format", "markdown")
	if k := firstGroup(sub); code != exitOK || k != "zteam/edited" || !strings.Contains(sub, "File: `groups/zteam/edited.txt`") {
		t.Errorf("from cfg/: exit %d, first group %q\n%s%s", code, k, stderr, sub)
	}

	// JSON marks the edited group.
	js := ""
	code, js, stderr = runCLI(t, "diff", "--config", "entitlements.yaml", "--base", base, "--head", head, "--format", "json")
	if code != exitOK {
		t.Fatal(stderr)
	}
	if n := strings.Count(js, `"edited": true`); n != 1 {
		t.Errorf("%d groups marked edited in JSON, want 1", n)
	}
}
