package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
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
	code, out, errOut = runCLI(t, "plan", "--config", cfg, "-v")
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
	code, out, errOut = runCLI(t, "plan", "--config", cfg, "-v")
	if code != exitOK || !strings.Contains(out, "Predictive state: 1 of 1 cached group(s) trusted") || !strings.Contains(out, "member_reads=0") {
		t.Errorf("predictive plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "plan", "--config", cfg, "--full", "-v")
	if code != exitOK || strings.Contains(out, "Predictive state") || !strings.Contains(out, "predictive_hits=0") {
		t.Errorf("--full still uses the predictive state: exit %d\n%s\n%s", code, out, errOut)
	}
}

// Issue 24: plan and apply with a GitHub App whose ID and key come from the environment
// ($GITHUB_APP_ID, $GITHUB_APP_PRIVATE_KEY), through a saved plan file and with the GitRepo
// audit log: the key, the JWTs and the installation tokens appear in no output, log line
// (-v), plan file or audit commit.
func TestGitHubAppThroughTheCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	fake := fakegithub.New(fakegithub.Options{Token: "a-token-nobody-sends"})
	defer fake.Close()
	fake.AddApp(31337, "entitlements-sync", &key.PublicKey)
	fake.Install(31337, "acme", map[string]string{"members": "write"})
	fake.AddUsers("alice", "bob")
	fake.SetMember("acme", "alice", "member")
	fake.SetMember("acme", "bob", "member")

	remote := filepath.Join(t.TempDir(), "log.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", remote).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	dir := t.TempDir()
	checkout := filepath.Join(t.TempDir(), "audit")
	files := map[string]string{
		"config.yaml": `configuration_path: ./defs
groups:
  teams:
    type: github_team
    org: acme
    base: ou=teams,ou=GitHub,dc=example,dc=net
    addr: ` + fake.APIURL() + `
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
auditors:
  - auditor_class: GitRepo
    checkout_directory: ` + checkout + `
    commit_message: deploy by test
    git_name: GitRepoUser
    git_email: gitrepousers@users.noreply
    repo_url: ` + remote + `
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
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GITHUB_APP_ID", "31337")
	t.Setenv("GITHUB_APP_PRIVATE_KEY", keyPEM)
	cfg := filepath.Join(dir, "config.yaml")
	planFile := filepath.Join(dir, "plan.json")

	var seen []string
	code, out, errOut := runCLI(t, "plan", "--config", cfg, "--out", planFile, "-v")
	seen = append(seen, out, errOut)
	if code != exitOK || !strings.Contains(out, "+ ADD cn=sre,ou=teams,ou=GitHub,dc=example,dc=net") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "apply", "--config", cfg, "-v", planFile)
	seen = append(seen, out, errOut)
	if code != exitOK || !strings.Contains(out, "1 change(s) applied") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if ti, _ := fake.Team("acme", "sre"); len(ti.Members) != 2 {
		t.Errorf("team sre: %v", ti.Members)
	}
	if st := fake.Stats(); st.InstallationTokens != 2 || st.RejectedAuth != 0 {
		t.Errorf("installation tokens %d (one per run), refused %d", st.InstallationTokens, st.RejectedAuth)
	}
	plan, _ := os.ReadFile(planFile)
	log, err := exec.Command("git", "--git-dir", remote, "log", "-p", "--all").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v %s", err, log)
	}
	if !strings.Contains(string(log), "alice") {
		t.Fatalf("the audit log holds no team:\n%s", log)
	}
	seen = append(seen, string(plan), string(log))
	all := strings.Join(seen, "\n")
	leaks := []string{"ghs_", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))}
	for _, l := range strings.Split(keyPEM, "\n") {
		if l != "" && !strings.HasPrefix(l, "-----") {
			leaks = append(leaks, l)
		}
	}
	for _, l := range leaks {
		if strings.Contains(all, l) {
			t.Errorf("%q shows in the output, logs, plan file or audit log", l)
		}
	}
}
