package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// TestGitHubThroughTheCLI drives plan and apply of a github_team target through the CLI
// wiring against the fake GitHub server: the first apply creates the team, the next plan is
// a no-op.
func TestGitHubThroughTheCLI(t *testing.T) {
	fake := fakegithub.New(fakegithub.Options{Token: "tok"})
	defer fake.Close()
	fake.AddOrg("acme")
	fake.AddUsers("alice", "bob")
	fake.SetMember("acme", "alice", "member")
	fake.SetMember("acme", "bob", "member")

	dir := t.TempDir()
	files := map[string]string{
		"config.yaml": `configuration_path: ./defs
groups:
  teams:
    type: github_team
    org: acme
    token: <%= ENV["TEST_GITHUB_TOKEN"] %>
    base: ou=teams,ou=GitHub,dc=example,dc=net
    addr: ` + fake.APIURL() + `
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`,
		"people.yaml":        "alice: {}\nbob: {}\n",
		"defs/teams/sre.txt": "username = alice\nusername = bob\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TEST_GITHUB_TOKEN", "tok")
	cfg := filepath.Join(dir, "config.yaml")

	code, out, errOut := runCLI(t, "apply", "--config", cfg, "--yes")
	if code != exitOK || !strings.Contains(out, "+ ADD cn=sre,ou=teams,ou=GitHub,dc=example,dc=net (Members: alice,bob)") ||
		!strings.Contains(out, "Apply: 1 change(s) applied") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "plan", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "teams (github_team): no changes") {
		t.Fatalf("second plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "graphql") {
		t.Errorf("the plan does not show the provider's request counters:\n%s", out)
	}
}
