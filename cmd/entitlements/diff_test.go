package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/people"
)

// connRecorder is a TCP listener that counts the connections made to it and closes each at
// once: the address a hostile head names for a server.
type connRecorder struct {
	ln    net.Listener
	count atomic.Int64
}

func recordConns(t *testing.T) *connRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &connRecorder{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.count.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return r
}

func (r *connRecorder) uri() string { return "ldap://" + r.ln.Addr().String() }

// diffAllFormats runs diff in every output format: the exit code of each, and everything
// printed (stdout and stderr of every run).
func diffAllFormats(t *testing.T, args ...string) (codes []int, text, all string) {
	t.Helper()
	var b strings.Builder
	for _, f := range []string{"text", "json", "markdown"} {
		code, out, errOut := runCLI(t, append(slices.Clone(args), "--format", f)...)
		codes = append(codes, code)
		if f == "text" {
			text = out + errOut
		}
		b.WriteString(out + errOut)
	}
	return codes, text, b.String()
}

// TestDiffHeadIsData (issue 20 item 1): the head of a pull request is data, never
// configuration. Its entitlements.yaml cannot make the diff read an environment variable
// into the output, nor contact a server with the job's credentials: the calculation uses the
// base revision's configuration, and the head's changes to it are reported without the
// environment.
func TestDiffHeadIsData(t *testing.T) {
	const secret = "s3cr3t-Tok3n-9f8e7d"
	const bindpw = "bind-pw-1a2b3c4d"
	t.Setenv("SECRET_TOKEN", secret)
	t.Setenv("LDAP_BINDPW", bindpw)
	t.Setenv("LDAP_BINDDN", "uid=svc,ou=People,dc=example,dc=net")
	attacker := recordConns(t)
	ldapSource := `people:
  corp:
    type: ldap
    config:
      base: ou=People,dc=example,dc=net
      ldap_uri: ` + attacker.uri() + `
      ldap_binddn: <%= ENV["LDAP_BINDDN"] %>
      ldap_bindpw: <%= ENV["LDAP_BINDPW"] %>
`
	// The base reads LDAP groups from its own server; the head points the extra elsewhere.
	trusted := recordConns(t)
	ldapGroupExtra := func(uri string) string {
		return `extras:
  ldap_group:
    ldap_uri: ` + uri + `
    ldap_binddn: <%= ENV["LDAP_BINDDN"] %>
    ldap_bindpw: <%= ENV["LDAP_BINDPW"] %>
`
	}
	useLDAPGroups := func(g *gitRepo) {
		g.edit("entitlements.yaml", func(s string) string {
			return strings.Replace(s, ldapGroupExtra(trusted.uri()), ldapGroupExtra(attacker.uri()), 1)
		})
		g.edit("groups/apps/wiki.txt", func(s string) string { return s + "ldap_group = cn=admins,ou=Groups,dc=example,dc=net\n" })
	}
	snapshot := filepath.Join(t.TempDir(), "ldap-groups.yaml")
	writeFile(t, snapshot, "cn=admins,ou=Groups,dc=example,dc=net:\n  objectclass: [groupOfNames]\n  member:\n    - uid=alice,ou=People,dc=example,dc=net\n")
	for _, tc := range []struct {
		name  string
		edit  func(g *gitRepo)
		flags []string
		code  int
		want  []string // in the text output
	}{
		{name: "a secret from the environment in every DN", edit: func(g *gitRepo) {
			g.edit("entitlements.yaml", func(s string) string {
				return strings.Replace(s, "base: ou=Pizza_Teams,", `base: ou=<%= ENV["SECRET_TOKEN"] %>,ou=Pizza_Teams,`, 1)
			})
			g.edit("groups/pizza_teams/sre.txt", func(s string) string { return s + "username = ivan\n" })
		}, code: exitOK, want: []string{"Configuration: entitlements.yaml differs in the head",
			`~ groups.pizza_teams.base: "ou=Pizza_Teams,ou=Groups,dc=example,dc=net" -> "ou=ENV[SECRET_TOKEN],ou=Pizza_Teams,ou=Groups,dc=example,dc=net"`,
			"+ ivan  (username = ivan"}},
		{name: "the people read from a server of the head's choosing", edit: func(g *gitRepo) {
			g.edit("entitlements.yaml", func(s string) string {
				s = strings.Replace(s, "people:\n", ldapSource, 1)
				return strings.Replace(s, "people_data_source: yaml", "people_data_source: corp", 1)
			})
		}, code: exitOK, want: []string{`+ people.corp: {"config":{"base":"ou=People,dc=example,dc=net","ldap_binddn":"ENV[LDAP_BINDDN]","ldap_bindpw":"ENV[LDAP_BINDPW]","ldap_uri":"` + attacker.uri() + `"},"type":"ldap"}`,
			`~ people_data_source: "yaml" -> "corp"`}},
		{name: "LDAP groups read from a server of the head's choosing", edit: useLDAPGroups,
			// Read with the base's settings: from the base's server, which fails here.
			code: exitError, want: []string{"does not load", "reading LDAP groups"}},
		{name: "LDAP groups from a snapshot", edit: useLDAPGroups, flags: []string{"--ldap-groups", snapshot}, code: exitOK, want: []string{
			"~ extras.ldap_group.ldap_uri: \"" + trusted.uri() + "\" -> \"" + attacker.uri() + "\"",
			"Source: LDAP groups (ldap_group rules, MemberOfLDAPGroup filters): from the snapshot " + snapshot,
			"+ alice  (ldap_group = cn=admins,ou=Groups,dc=example,dc=net (groups/apps/wiki.txt:4))"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGitRepo(t)
			g.edit("entitlements.yaml", func(s string) string { return strings.Replace(s, "extras:\n", ldapGroupExtra(trusted.uri()), 1) })
			base := g.commit("the base reads LDAP groups")
			tc.edit(g)
			args := append([]string{"diff", "--config", filepath.Join(g.dir, "entitlements.yaml"), "--base", base, "--now", "2026-01-01"}, tc.flags...)
			// The head as the work tree, and as a commit.
			codes, text, all := diffAllFormats(t, args...)
			head := g.commit("head")
			codes2, text2, all2 := diffAllFormats(t, append(args, "--head", head)...)
			for _, c := range append(codes, codes2...) {
				if c != tc.code {
					t.Errorf("exit codes %v %v, want %d:\n%s", codes, codes2, tc.code, text)
					break
				}
			}
			mustContain(t, "text diff of the work tree", text, tc.want...)
			mustContain(t, "text diff of the commit", text2, tc.want...)
			for _, s := range []string{secret, bindpw} {
				if strings.Contains(all+all2, s) {
					t.Errorf("the output shows the value of an environment variable (%s):\n%s", s, all+all2)
				}
			}
			if n := attacker.count.Load(); n != 0 {
				t.Errorf("%d connection(s) to the server the head named", n)
			}
			if n := trusted.count.Load(); tc.code == exitError && n == 0 {
				t.Error("LDAP groups were not read with the base's settings")
			}
		})
	}
}

// TestDiffReportsConfigChanges: the configuration changes of the head are reported in every
// format and make --detailed-exitcode report changes even when no access changes; a change
// of comments only is none.
func TestDiffReportsConfigChanges(t *testing.T) {
	g := newGitRepo(t)
	base := g.git("rev-parse", "HEAD")
	args := []string{"diff", "--config", filepath.Join(g.dir, "entitlements.yaml"), "--base", base, "--detailed-exitcode"}
	g.edit("entitlements.yaml", func(s string) string { return "# a comment\n" + s })
	if code, out, errOut := runCLI(t, args...); code != exitOK || !strings.Contains(out, "No changes") {
		t.Errorf("comment only: exit %d\n%s%s", code, out, errOut)
	}
	g.edit("entitlements.yaml", func(s string) string {
		s = strings.Replace(s, "  internal:\n    type: dummy\n", "  internal:\n    type: dummy\n  tools:\n    type: dummy\n", 1)
		return strings.Replace(s, "ldaps://ldap.example.net:636", "ldaps://ldap2.example.net:636", 1)
	})
	code, text, errOut := runCLI(t, args...)
	if code != exitChanges {
		t.Errorf("exit %d, want %d\n%s", code, exitChanges, errOut)
	}
	mustContain(t, "text", text, `+ groups.tools: {"type":"dummy"}`,
		`~ groups.apps.ldap_uri: "ldaps://ldap.example.net:636" -> "ldaps://ldap2.example.net:636"`,
		`~ groups.pizza_teams.ldap_uri: "ldaps://ldap.example.net:636" -> "ldaps://ldap2.example.net:636"`,
		"No changes: every group has the same members")
	_, md, _ := runCLI(t, append(args, "--format", "markdown")...)
	mustContain(t, "markdown", md, "> [!IMPORTANT]", "`groups.tools` added: `{\"type\":\"dummy\"}`", "No access changes")
	_, js, _ := runCLI(t, append(args, "--format", "json")...)
	var parsed struct {
		Config struct {
			File    string `json:"file"`
			Changes []struct {
				Path, Change string
			} `json:"changes"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(js), &parsed); err != nil || parsed.Config.File != "entitlements.yaml" || len(parsed.Config.Changes) != 3 {
		t.Errorf("json: %v\n%s", err, js)
	}
	// A head whose configuration does not load says so (and is calculated with the base's).
	g.edit("entitlements.yaml", func(s string) string { return s + "groups: [\n" })
	code, text, errOut = runCLI(t, args...)
	if code != exitChanges {
		t.Errorf("broken head config: exit %d\n%s", code, errOut)
	}
	mustContain(t, "text", text, "! the head's entitlements.yaml does not load (read without the environment):", "! entitlements.yaml:")
}

// TestDiffSymlinkedGroupFile (issue 20 item 5): a group file that is a symbolic link in the
// commit is read as a checkout reads it, so diff and calc of the checkout agree; a link that
// leaves the repository is refused by both.
func TestDiffSymlinkedGroupFile(t *testing.T) {
	g := newGitRepo(t)
	base := g.git("rev-parse", "HEAD")
	writeFile(t, filepath.Join(g.dir, "docs/notes.txt"), "username = frank\nusername = grace\n")
	if err := os.Symlink("../../docs/notes.txt", filepath.Join(g.dir, "groups/apps/backdoor.txt")); err != nil {
		t.Fatal(err)
	}
	head := g.commit("backdoor")
	t.Chdir(g.dir)
	args := []string{"diff", "--config", "entitlements.yaml", "--now", "2026-01-01"}
	calcMembers := func() []string {
		t.Helper()
		code, out, errOut := runCLI(t, "calc", "--config", "entitlements.yaml", "--now", "2026-01-01")
		if code != exitOK {
			t.Fatalf("calc: exit %d\n%s", code, errOut)
		}
		var res struct {
			Groups map[string]struct{ Members []string } `json:"groups"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		return res.Groups["apps/backdoor"].Members
	}
	if got := calcMembers(); !slices.Equal(got, []string{"frank", "grace"}) {
		t.Fatalf("calc of the checkout: apps/backdoor = %v", got)
	}
	for _, extra := range [][]string{{"--head", head}, nil} {
		code, out, errOut := runCLI(t, append(append(slices.Clone(args), "--base", base), extra...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", extra, code, errOut)
		}
		mustContain(t, "diff", out, "+ CREATE apps/backdoor (groups/apps/backdoor.txt)", "+ frank", "+ grace")
	}
	// Only the file the link leads to changes: the group changes.
	writeFile(t, filepath.Join(g.dir, "docs/notes.txt"), "username = frank\n")
	head2 := g.commit("notes")
	if got := calcMembers(); !slices.Equal(got, []string{"frank"}) {
		t.Fatalf("calc of the checkout: apps/backdoor = %v", got)
	}
	for _, extra := range [][]string{{"--head", head2}, nil} {
		code, out, errOut := runCLI(t, append(append(slices.Clone(args), "--base", head), extra...)...)
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		mustContain(t, "diff", out, "~ CHANGE apps/backdoor (groups/apps/backdoor.txt)", "- grace")
	}
	// A link out of the repository: calc of the checkout and diff both refuse it.
	outside := filepath.Join(t.TempDir(), "outside.txt")
	writeFile(t, outside, "username = frank\n")
	if err := os.Symlink(outside, filepath.Join(g.dir, "groups/apps/evil.txt")); err != nil {
		t.Fatal(err)
	}
	head3 := g.commit("evil")
	if code, _, errOut := runCLI(t, "calc", "--config", "entitlements.yaml"); code != exitError || !strings.Contains(errOut, "outside the config tree") {
		t.Errorf("calc: exit %d\n%s", code, errOut)
	}
	for _, extra := range [][]string{{"--head", head3}, nil} {
		code, _, errOut := runCLI(t, append(append(slices.Clone(args), "--base", head2), extra...)...)
		if code != exitError || !strings.Contains(errOut, "groups/apps/evil.txt") || !strings.Contains(errOut, "outside the config tree") {
			t.Errorf("%v: exit %d\n%s", extra, code, errOut)
		}
	}
}

// TestDiffNeutralGitConfig (issue 20 item 9): neither the repository's git configuration
// (diff.relative, with the config in a subdirectory) nor index bits that tell git not to
// look at a file hide a change.
func TestDiffNeutralGitConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(g *gitRepo)
	}{
		{"diff.relative", func(g *gitRepo) { g.git("config", "diff.relative", "true") }},
		{"assume-unchanged", func(g *gitRepo) { g.git("update-index", "--assume-unchanged", "cfg/groups/pizza_teams/sre.txt") }},
		{"skip-worktree", func(g *gitRepo) { g.git("update-index", "--skip-worktree", "cfg/groups/pizza_teams/sre.txt") }},
		{"core.ignoreStat", func(g *gitRepo) { g.git("config", "core.ignoreStat", "true") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGitRepoIn(t, "cfg")
			tc.setup(g)
			g.edit("cfg/groups/pizza_teams/sre.txt", func(s string) string { return s + "username = ivan\n" })
			t.Chdir(filepath.Join(g.dir, "cfg"))
			code, out, errOut := runCLI(t, "diff", "--config", "entitlements.yaml", "--base", "HEAD", "--now", "2026-01-01")
			if code != exitOK {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			mustContain(t, "diff", out, "~ CHANGE pizza_teams/sre (groups/pizza_teams/sre.txt)", "+ ivan")
		})
	}
}

// TestDiffFindsTheRepositoryFromConfig (issue 22 item 6): diff runs from anywhere; the
// repository is the one that holds --config. Paths are then relative to the config file's
// directory.
func TestDiffFindsTheRepositoryFromConfig(t *testing.T) {
	g := newGitRepoIn(t, "cfg")
	base := g.git("rev-parse", "HEAD")
	g.edit("cfg/groups/pizza_teams/sre.txt", func(s string) string { return s + "username = ivan\n" })
	head := g.commit("ivan")
	t.Chdir(t.TempDir()) // not a git repository
	cfg := filepath.Join(g.dir, "cfg", "entitlements.yaml")
	for _, extra := range [][]string{{"--head", head}, nil} {
		code, out, errOut := runCLI(t, append([]string{"diff", "--config", cfg, "--base", base, "--now", "2026-01-01"}, extra...)...)
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		mustContain(t, "diff", out, "~ CHANGE pizza_teams/sre (groups/pizza_teams/sre.txt)", "+ ivan")
	}
	if code, _, errOut := runCLI(t, "diff", "--config", filepath.Join(t.TempDir(), "entitlements.yaml"), "--base", "HEAD"); code != exitError || !strings.Contains(errOut, "git repository that holds the config file") {
		t.Errorf("config outside any repository: exit %d\n%s", code, errOut)
	}
}

// TestDiffMergeBase (issue 22 item 6): a pull request's branch compared with the tip of the
// branch it targets shows the target's later changes as reverted; --base A...B and
// --merge-base compare with the commit the branch was made from.
func TestDiffMergeBase(t *testing.T) {
	g := newGitRepo(t)
	g.git("branch", "feature")
	// main moves on: heidi joins sre.
	g.edit("groups/pizza_teams/sre.txt", func(s string) string { return s + "username = heidi\n" })
	g.commit("main: heidi")
	g.git("checkout", "-q", "feature")
	// The pull request: ivan joins backend.
	g.edit("groups/pizza_teams/backend.txt", func(s string) string { return s + "username = ivan\n" })
	g.commit("feature: ivan")
	t.Chdir(g.dir)
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"diff", "--config", "entitlements.yaml", "--now", "2026-01-01"}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		return out
	}
	tip := run("--base", "main", "--head", "feature")
	mustContain(t, "against the tip", tip, "- heidi", "+ ivan")
	for _, args := range [][]string{
		{"--base", "main...feature"},
		{"--base", "main..."},
		{"--base", "main...feature", "--head", "feature"},
		{"--base", "main", "--head", "feature", "--merge-base"},
		{"--base", "main", "--merge-base"}, // the work tree, against the merge-base of main and HEAD
	} {
		out := run(args...)
		mustContain(t, strings.Join(args, " "), out, "~ CHANGE pizza_teams/backend", "+ ivan")
		if strings.Contains(out, "heidi") {
			t.Errorf("%v: main's own change shows as reverted:\n%s", args, out)
		}
	}
	// The example workflow: actions/checkout checks out the merge of the branch into the base
	// branch, and the base branch may move on after that merge was made.
	g.git("checkout", "-q", "--detach", "main")
	g.git("merge", "-q", "--no-ff", "-m", "merge", "feature")
	merge := g.git("rev-parse", "HEAD")
	g.git("checkout", "-q", "main")
	g.edit("groups/pizza_teams/sales.txt", func(s string) string { return s + "username = alice\n" })
	g.commit("main: alice, after the merge ref was made")
	g.git("checkout", "-q", "--detach", merge)
	mustContain(t, "merge commit against the tip", run("--base", "main"), "- alice")
	out := run("--base", "main", "--merge-base")
	mustContain(t, "merge commit", out, "~ CHANGE pizza_teams/backend", "+ ivan")
	if strings.Contains(out, "heidi") || strings.Contains(out, "alice") {
		t.Errorf("merge commit: the base branch's own changes show:\n%s", out)
	}
	if code, _, errOut := runCLI(t, "diff", "--config", "entitlements.yaml", "--base", "main...no-such-branch"); code != exitError || !strings.Contains(errOut, "no-such-branch") {
		t.Errorf("unknown revision: exit %d\n%s", code, errOut)
	}
}

// TestDiffSources: the output names the outside data that was read, and how.
func TestDiffSources(t *testing.T) {
	cfg := &config.Config{PeopleDataSource: "corp", People: map[string]*config.PeopleSource{"corp": {Name: "corp", Type: "ldap"}}}
	opt := calc.Options{Types: backends.Types(),
		People:        func(context.Context, *config.PeopleSource) ([]people.Person, error) { return nil, nil },
		LDAPGroupsFor: func(*config.Config) (calc.LDAPGroupReader, error) { return calc.NewLDAPSnapshot(), nil },
	}
	var none dataUse
	none.record(opt)
	if got := none.sources(cfg, ""); len(got) != 0 {
		t.Errorf("nothing read, sources %q", got)
	}
	var u dataUse
	o := u.record(opt)
	o.People(context.Background(), cfg.People["corp"])
	rd, _ := o.LDAPGroupsFor(cfg)
	rd.ReadLDAPGroups(context.Background(), nil)
	want := []string{`people: read from the people source "corp" (type ldap) with the base revision's settings, the same for both revisions`,
		"LDAP groups (ldap_group rules, MemberOfLDAPGroup filters): read from LDAP with the base revision's ldap_group settings, the same for both revisions"}
	if got := u.sources(cfg, ""); !slices.Equal(got, want) {
		t.Errorf("sources %q", got)
	}
	// No reader stays no reader (a wrapped nil would look configured).
	opt.LDAPGroupsFor = func(*config.Config) (calc.LDAPGroupReader, error) { return nil, nil }
	if rd, err := u.record(opt).LDAPGroupsFor(cfg); rd != nil || err != nil {
		t.Errorf("nil reader wrapped: %v, %v", rd, err)
	}
}
