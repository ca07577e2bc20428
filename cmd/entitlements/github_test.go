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

	// The team as the audit log recorded it: trusted, and the plan says so.
	state := t.TempDir()
	os.WriteFile(filepath.Join(state, "cn=sre,ou=teams,ou=GitHub,dc=example,dc=net"), []byte("alice\nbob\n"), 0o644)
	t.Setenv("ENTITLEMENTS_PREDICTIVE_STATE_DIR", state)
	code, out, errOut = runCLI(t, "plan", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "Predictive state: 1 of 1 cached group(s) trusted") || !strings.Contains(out, "member_reads=0") {
		t.Errorf("predictive plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "plan", "--config", cfg, "--full")
	if code != exitOK || strings.Contains(out, "Predictive state") || !strings.Contains(out, "predictive_hits=0") {
		t.Errorf("--full still uses the predictive state: exit %d\n%s\n%s", code, out, errOut)
	}
}
