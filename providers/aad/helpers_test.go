package aad

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// staticCred is a TokenCredential with a fixed token (spec 4.5: never the Azure identity
// provider against a fake).
type staticCred struct{ token string }

func (c staticCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: c.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// sleeper records the waits and returns at once, so Retry-After never slows a test.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}

const upnDomain = "@corp.example.com"

func upn(uid string) string { return uid + upnDomain }

// env is a fake Graph server, a Registry pointed at it, and a tiny entitlements repo.
type env struct {
	t     *testing.T
	fake  *fakegraph.Server
	sleep *sleeper
	dir   string
	// settings are extra YAML lines of the aad OU entry.
	settings string
	people   []string
}

func newEnv(t *testing.T, fopt fakegraph.Options, settings string, people int) *env {
	t.Helper()
	f := fakegraph.New(fopt)
	t.Cleanup(f.Close)
	e := &env{t: t, fake: f, sleep: &sleeper{}, dir: t.TempDir(), settings: settings}
	for i := range people {
		e.people = append(e.people, fmt.Sprintf("u%03d", i))
	}
	var b strings.Builder
	for _, p := range e.people {
		fmt.Fprintf(&b, "%s: {cn: %s}\n", p, p)
	}
	e.write("people.yaml", b.String())
	e.writeConfig()
	t.Chdir(e.dir) // the people file resolves against the working directory
	return e
}

func (e *env) writeConfig() {
	e.write("config.yaml", fmt.Sprintf(`configuration_path: ./groups
groups:
  aad/groups:
    type: aad
    base: ou=aad,dc=example,dc=net
    user_principal_format: "%%KEY%%%s"
    graph_url: %s
%s
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`, upnDomain, e.fake.BaseURL(), indent(e.settings)))
}

func indent(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			out = append(out, "    "+strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "\n")
}

func (e *env) write(rel, content string) {
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// group writes the definition file of an AAD group: the members as username rules.
func (e *env) group(cn string, members []string, extra ...string) {
	var b strings.Builder
	fmt.Fprintf(&b, "description = Group %s\n", cn)
	for _, m := range members {
		fmt.Fprintf(&b, "username = %s\n", m)
	}
	if len(members) == 0 {
		b.WriteString("metadata_no_conditions_ok = true\n")
	}
	for _, x := range extra {
		b.WriteString(x + "\n")
	}
	e.write("groups/aad/groups/"+cn+".txt", b.String())
}

// seedUsers creates the Entra users of uids.
func (e *env) seedUsers(uids ...string) {
	for _, u := range uids {
		e.fake.AddUser(upn(u))
	}
}

// seedGroup creates an Entra group with the given user members (users created as needed).
func (e *env) seedGroup(nick string, uids ...string) string {
	var ids []string
	for _, u := range uids {
		ids = append(ids, e.fake.AddUser(upn(u)))
	}
	return e.fake.AddGroup(fakegraph.Group{DisplayName: nick, MailNickname: nick, Description: "Group " + nick,
		SecurityEnabled: true, Members: ids})
}

// predictive is the predictive state of groups of the OU (cn → members), as apply and the
// audit log write it.
func (e *env) predictive(groups map[string][]string) *cache.Predictive {
	e.t.Helper()
	dir := e.t.TempDir()
	for cn, ms := range groups {
		if err := os.WriteFile(filepath.Join(dir, cache.FileNameFromDN(groupDN(cn))), cache.StateFile(ms, nil), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	pred, err := cache.LoadPredictive(dir)
	if err != nil {
		e.t.Fatal(err)
	}
	return pred
}

// registry is a Registry for tests of Graph's semantics: its sleeper returns at once without
// advancing any clock, so the write pacer is off (its waits would only crowd the record of
// retry waits); the pacer is tested on a fake clock (pacedRegistry).
func (e *env) registry(opt Options) *Registry {
	opt.TokenCredential = staticCred{e.fake.Token()}
	opt.Sleep = e.sleep.Sleep
	opt.NoWritePacing = true
	r := NewRegistry(opt)
	e.t.Cleanup(r.Close)
	return r
}

// plan calculates the repo and builds the plan with the AAD provider of reg.
func (e *env) plan(reg *Registry, force bool) (*deploy.Plan, *deploy.TargetPlan, *Provider) {
	e.t.Helper()
	ctx := context.Background()
	repo, err := calc.Load(ctx, "config.yaml", calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		e.t.Fatalf("load: %v", err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		e.t.Fatalf("calculate: %v", err)
	}
	var prov *Provider
	plan, err := deploy.Build(ctx, res, repo.Config(), deploy.Options{Force: force, Backends: backends.Spec().WithFactory(func(ou *config.OU) (providers.Provider, error) {
		p, err := reg.Provider(ou)
		if err == nil {
			prov = p.(*Provider)
		}
		return p, err
	}, "aad")})
	if err != nil {
		e.t.Fatalf("build: %v", err)
	}
	if len(plan.Targets) != 1 {
		e.t.Fatalf("targets: %d", len(plan.Targets))
	}
	return plan, plan.Targets[0], prov
}

// apply applies a plan and fails the test on any outcome that is not OK.
func (e *env) apply(plan *deploy.Plan) *deploy.Report {
	e.t.Helper()
	rep, _ := deploy.Apply(context.Background(), plan, deploy.ApplyOptions{})
	if err := rep.Err(); err != nil {
		e.t.Fatalf("apply: %v", err)
	}
	return rep
}

// members returns the sorted uids of an Entra group, by mailNickname.
func (e *env) members(nick string) []string {
	e.t.Helper()
	gs := e.fake.GroupsByNickname(nick)
	if len(gs) != 1 {
		e.t.Fatalf("%d groups named %s", len(gs), nick)
	}
	var out []string
	for _, u := range e.fake.MemberUPNs(gs[0].ID) {
		out = append(out, strings.TrimSuffix(u, upnDomain))
	}
	sort.Strings(out)
	return out
}

func changeSummary(tp *deploy.TargetPlan) []string {
	var out []string
	for _, c := range tp.Changes {
		out = append(out, c.String())
	}
	return out
}

func uids(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("u%03d", i))
	}
	return out
}

func delta(after, before map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}
