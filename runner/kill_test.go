package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
	"github.com/entitlements-go/entitlements/runner"
)

// The child process of TestKilledApplyResumesOnGitHub: it applies (or resumes) the plan file
// against the parent's fakegithub until the parent kills it.
const childEnv = "ENTITLEMENTS_TEST_APPLY_CHILD"

func ghRepo(t *testing.T, url string) (*calc.Repo, *calc.Result, string, string) {
	defs := map[string][]string{}
	for i := range 40 {
		defs[fmt.Sprintf("teams/g%02d.txt", i)] = members(i*10, 50)
	}
	defs["org/admin.txt"] = []string{"p1"}
	var everyone []string
	for i := range 440 {
		if i != 1 {
			everyone = append(everyone, fmt.Sprintf("p%d", i))
		}
	}
	defs["org/member.txt"] = everyone
	ou := "  org: {type: github_org, org: acme, token: <%= ENV[\"TEST_GH_TOKEN\"] %>, base: \"ou=org,ou=GitHub,dc=example,dc=net\", addr: \"" + url + "\"}\n" +
		"  teams: {type: github_team, org: acme, token: <%= ENV[\"TEST_GH_TOKEN\"] %>, base: \"ou=teams,ou=GitHub,dc=example,dc=net\", addr: \"" + url + "\"}\n"
	return bigRepo(t, ou, 440, defs)
}

func ghRegistry(t *testing.T) *runner.Options {
	r := github.NewRegistry(github.Options{NoWritePacing: true})
	t.Cleanup(r.Close)
	reg, err := backends.New(backends.Providers{GitHub: r})
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Options{Backends: reg}
}

func TestKilledApplyResumesOnGitHub(t *testing.T) {
	t.Setenv("TEST_GH_TOKEN", "tok")
	if os.Getenv(childEnv) != "" {
		applyChild(t)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	gh := fakegithub.New(fakegithub.Options{RateLimit: 1 << 30, AutoAccept: true})
	defer gh.Close()
	gh.AddOrg("acme")
	for i := range 440 {
		u := fmt.Sprintf("p%d", i)
		gh.AddUsers(u)
		switch {
		case i == 1:
			gh.SetMember("acme", u, "admin")
		case i%20 != 0: // every 20th person is invited to the org
			gh.SetMember("acme", u, "member")
		}
	}
	repo, res, remote, cfgDir := ghRepo(t, gh.APIURL())
	opt := ghRegistry(t)
	first, err := runner.Plan(t.Context(), repo, res, *opt)
	if err != nil || first.Err() != nil {
		t.Fatal(err, first.Err())
	}
	if n := memberOps(first); n != 2022 {
		t.Fatalf("the plan has %d member changes, want 2,022", n)
	}
	saved := first.Save(deploy.InputsOf(repo))
	dir := t.TempDir()
	planFile, journalFile := filepath.Join(dir, "plan.json"), filepath.Join(dir, "plan.json.journal")
	f, err := os.Create(planFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := saved.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var mu sync.Mutex
	writes := map[string]int{} // "METHOD path" → requests the server received
	var kill func()
	killAt := 0
	var killWhen func(string) bool
	var killed []string
	gh.OnRequest(func(r *http.Request) {
		if r.Method == http.MethodGet || strings.HasSuffix(r.URL.Path, "graphql") {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		k := r.Method + " " + r.URL.Path
		writes[k]++
		killAt--
		if killAt <= 0 && kill != nil && killWhen(k) {
			kill() // the request is still handled: its answer is what the child never sees
			kill, killed = nil, append(killed, k)
		}
	})
	// Writes are serial: the org's 22 invitations, then the 40 team creations, then the
	// members. Killed at an invitation, at a team creation and among member additions.
	isCreate := func(k string) bool { return k == "POST /api/v3/orgs/acme/teams" }
	isMember := func(k string) bool { return strings.Contains(k, "/teams/") }
	for i, point := range []struct {
		at   int
		when func(string) bool
	}{{5, isInvite}, {20, isCreate}, {600, isMember}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledApplyResumesOnGitHub$")
		cmd.Env = append(os.Environ(), childEnv+"="+strings.Join([]string{cfgDir, planFile, journalFile, gh.APIURL(), fmt.Sprint(i > 0)}, "\x1f"))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		// The hook waits for the lock: no write of the child is counted before kill is set.
		mu.Lock()
		if err := cmd.Start(); err != nil {
			mu.Unlock()
			t.Fatal(err)
		}
		killAt, killWhen, kill = point.at, point.when, func() { _ = cmd.Process.Kill() }
		mu.Unlock()
		err := cmd.Wait()
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("child %d: %v (want killed)\n%s", i+1, err, out.String())
		}
	}
	if len(killed) != 3 || !isInvite(killed[0]) || !isCreate(killed[1]) || !isMember(killed[2]) {
		t.Errorf("killed at %q: want an invitation, a team creation, a team membership", killed)
	}
	mu.Lock()
	kill = nil // the last resume runs in this process, its writes still counted
	mu.Unlock()

	_, out, err := runner.Resume(t.Context(), repo, res, saved, journalFile, *opt)
	if err != nil || out.Status != runner.Done {
		t.Fatalf("resume: %v, %s: %v", err, out.Summary(), out.Err())
	}
	if out.Run != 4 || out.EarlierMade == 0 || len(out.Audit) != 1 || len(out.Audit[0].Commits) == 0 {
		t.Errorf("resume: run %d, earlier %d, audit %+v", out.Run, out.EarlierMade, out.Audit)
	}
	final, err := runner.Plan(t.Context(), repo, res, *ghRegistry(t))
	if err != nil || final.Err() != nil {
		t.Fatal(err, final.Err())
	}
	if got := memberOps(final); got != 0 {
		t.Errorf("after the resume the plan has %d member changes", got)
	}
	if n := writes["POST /api/v3/orgs/acme/teams"]; n != 40 {
		t.Errorf("%d team creations, want 40 (one per team)", n)
		for k, n := range writes {
			if !strings.Contains(k, "/memberships/") {
				t.Log(k, n)
			}
		}
	}
	invites := 0
	for k, n := range writes {
		if isInvite(k) {
			invites++
			if n != 1 {
				t.Errorf("%s sent %d times: an invitation repeated", k, n)
			}
		}
	}
	if invites != 22 {
		t.Errorf("%d invitations, want 22", invites)
	}
	if got := git(t, remote, "log", "--all", "--format=%s"); got == "" {
		t.Error("the audit log has no commit")
	}
}

// isInvite reports whether a write is an org membership PUT for a person who is not an org
// member (every 20th): GitHub answers it with an invitation.
func isInvite(k string) bool {
	const pre = "PUT /api/v3/orgs/acme/memberships/p"
	var x int
	_, err := fmt.Sscanf(strings.TrimPrefix(k, pre), "%d", &x)
	return strings.HasPrefix(k, pre) && err == nil && x%20 == 0
}

// applyChild is the apply that the parent kills.
func applyChild(t *testing.T) {
	args := strings.Split(os.Getenv(childEnv), "\x1f")
	cfgDir, planFile, journalFile, resume := args[0], args[1], args[2], args[4] == "true"
	repo, err := calc.Load(context.Background(), filepath.Join(cfgDir, "config.yaml"), calc.Options{Types: backends.Types(),
		Now: fixedNow, BaseDir: cfgDir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := repo.Calculate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	data, err := safefile.Read(planFile, safefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	saved, err := deploy.ReadPlan(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	opt := ghRegistry(t)
	opt.Saved, opt.Journal, opt.Resume = saved, journalFile, resume
	plan, err := runner.Plan(t.Context(), repo, res, *opt)
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	out, err := runner.Apply(t.Context(), repo, res, plan, *opt)
	t.Fatalf("the child was not killed: %v %s", err, out.Summary())
}
