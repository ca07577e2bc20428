package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// TestProgressOnARealTerminal runs the built CLI on a pseudo-terminal (script(1)) against
// the fake GitHub: stderr shows the teams read so far while the read runs, stdout (a file
// here, as in `plan > plan.txt`) gets the plan and nothing of the progress.
func TestProgressOnARealTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI (-short)")
	}
	scriptCmd, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed (util-linux): no pseudo-terminal to test on")
	}
	bin := filepath.Join(t.TempDir(), "entitlements")
	buildLikeTests(t)
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fake := fakegithub.New(fakegithub.Options{Token: "tok"})
	defer fake.Close()
	fake.AddOrg("acme")
	fake.AddUsers("alice")
	fake.SetMember("acme", "alice", "member")
	dir := t.TempDir()
	files := map[string]string{
		"config.yaml": "configuration_path: ./defs\ngroups:\n  teams:\n    type: github_team\n    org: acme\n    token: tok\n" +
			"    base: ou=teams,dc=example,dc=net\n    addr: " + fake.APIURL() + "\n" +
			"people:\n  y:\n    type: yaml\n    config: {filename: people.yaml}\npeople_data_source: y\n",
		"people.yaml": "alice: {}\n",
	}
	const teams = 60 // three GraphQL queries of 25 teams at most
	for i := range teams {
		files[fmt.Sprintf("defs/teams/t%02d.txt", i)] = "username = alice\n"
		if _, err := fake.AddTeam("acme", fakegithub.TeamSpec{Name: fmt.Sprintf("t%02d", i), Members: []string{"alice"}}); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdoutFile := filepath.Join(dir, "plan.txt")
	cmd := exec.Command(scriptCmd, "-qec", fmt.Sprintf("%q plan --config %q > %q", bin, filepath.Join(dir, "config.yaml"), stdoutFile), "/dev/null")
	cmd.Env = append(os.Environ(), "COLUMNS=200")
	term, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("plan on a terminal: %v\n%s", err, term)
	}
	stdout, err := os.ReadFile(stdoutFile)
	if err != nil {
		t.Fatal(err)
	}
	shown := string(term)
	if !strings.Contains(shown, fmt.Sprintf("/%d groups read", teams)) ||
		!regexp.MustCompile(fmt.Sprintf(`\r\x1b\[Kreading targets [0-9.]+m?s: reading teams 0 groups read \(%d calculated\), [0-9.]+m?s`, teams)).MatchString(shown) ||
		!strings.Contains(shown, fmt.Sprintf("read teams (github_team): %d groups read, %d calculated in", teams, teams)) {
		t.Errorf("terminal output lacks the read's progress:\n%q", shown)
	}
	if !strings.Contains(string(stdout), "teams (github_team): no changes") || strings.ContainsAny(string(stdout), "\r\x1b") ||
		strings.Contains(string(stdout), "groups read") {
		t.Errorf("stdout:\n%q", stdout)
	}
}
