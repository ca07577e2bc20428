package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
	"github.com/entitlements-go/entitlements/validate"
)

// TestPlanIsTheCLIs: the e2e benchmark times runPlan, not the CLI process, so runPlan must make
// the plan that `entitlements plan --full --format json` makes of the same repo against the
// same servers. Both plan the synthetic repo into empty fakes (every group to create) and
// their plans must be equal (the timings aside). Builds the CLI; changes the working
// directory: not parallel.
func TestPlanIsTheCLIs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI and starts servers")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	cli, err := buildCLI(t.Context(), t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	repoDir := filepath.Join(dir, "repo")
	if _, err := synth.Write(repoDir, synth.Options{People: 60, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	uids, err := synthUIDs(filepath.Join(repoDir, "people.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	gh := fakegithub.New(fakegithub.Options{AutoAccept: true, RateLimit: 1 << 30})
	defer gh.Close()
	gh.AddUsers(uids...)
	gh.AddOrg("synth-org")
	// The org OU that rewriteSynthConfig adds: one admin, the others members.
	org := filepath.Join(repoDir, "ldap-config", "github", "org")
	if err := os.MkdirAll(org, 0o755); err != nil {
		t.Fatal(err)
	}
	var members strings.Builder
	for _, u := range uids[1:] {
		fmt.Fprintf(&members, "username = %s\n", u)
	}
	for name, body := range map[string]string{"admin.txt": "username = " + uids[0] + "\n", "member.txt": members.String()} {
		if err := os.WriteFile(filepath.Join(org, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv, skip, err := startSlapd(dir, e2eLDIF)
	if err != nil {
		t.Fatal(err)
	}
	ldapURL := ""
	if srv != nil {
		defer srv.Stop()
		ldapURL = srv.URL
	} else {
		t.Logf("LDAP not compared: %s", skip)
	}
	cfg := filepath.Join(repoDir, "config.yaml")
	if err := rewriteSynthConfig(cfg, ldapURL, gh.URL(), "", filepath.Join(dir, "audit.git"), filepath.Join(dir, "audit-checkout")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repoDir) // the people file name is relative to the working directory
	day := synth.DefaultNow.Format("2006-01-02")
	now, err := validate.ParseNow(day)
	if err != nil {
		t.Fatal(err)
	}

	bench, _, err := runPlan(t.Context(), planRun{config: cfg, now: now})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), cli, "plan", "--config", cfg, "--now", day, "--full", "--format", "json")
	cmd.Env = append(os.Environ(), "ENTITLEMENTS_PREDICTIVE_STATE_DIR=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("entitlements plan: %v\n%s", err, stderr.String())
	}
	wantV, want := planOf(t, out)
	gotV, got := planOf(t, bench)
	if gotV != wantV || !bytes.Equal(got, want) {
		t.Errorf("runPlan's plan (version %d) differs from the CLI's (version %d):\nrunPlan: %.2000s\nCLI:     %.2000s", gotV, wantV, got, want)
	}
	if len(want) < 1000 {
		t.Errorf("the plans are nearly empty, nothing was compared: %s", want)
	}
}

// planOf is the version and the plan of a `plan --format json` document, without its timings.
func planOf(t *testing.T, doc []byte) (int, []byte) {
	t.Helper()
	var d struct {
		Version int             `json:"version"`
		Plan    json.RawMessage `json:"plan"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("%v\n%.500s", err, doc)
	}
	return d.Version, d.Plan
}
