package github_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/github"
	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// Tests from running the Ruby plugin's acceptance suite against entitlements-go (issue 27).

// Logins are lower-cased where the provider takes them in (desired members, and members read
// from GitHub): requests, the plan and the no-op re-plan all use lower case, whatever the
// case of the group files, the people data or GitHub's own spelling. The fake refuses
// mixed-case membership writes, as the plugin's fake does.
func TestMixedCaseLogins(t *testing.T) {
	e := newEnv(t, fakegithub.Options{RejectMixedCaseLogins: true})
	seedOrg(e)
	e.fake.AddUsers("DonSkoy", "Mallory", "Zoe") // GitHub's spelling
	e.fake.SetMember("acme", "DonSkoy", "member")
	e.fake.SetMember("acme", "Mallory", "admin")
	e.fake.SetMember("acme", "Zoe", "member")
	if _, err := e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"Mallory", "alice"}}); err != nil {
		t.Fatal(err)
	}
	var ppl strings.Builder
	for _, u := range everyone {
		ppl.WriteString(u + ": {cn: X}\n")
	}
	ppl.WriteString("DonSkoy: {cn: D}\nmallory: {cn: M}\nzoe: {cn: Z}\n")
	e.write(map[string]string{
		"people.yaml":                       ppl.String(),
		"ldap-config/github/org/admin.txt":  "username = ALICE\n",
		"ldap-config/github/org/member.txt": "username = Bob\nusername = carol\nusername = dave\nusername = DONSKoy\nusername = MALLORY\n",
		"ldap-config/github/teams/eng.txt":  "username = Alice\nusername = DONSKOY\nmetadata_team_maintainers = ALICE\n",
	})
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, tp := range plan.Targets {
		for _, c := range tp.Changes {
			for _, l := range append(append([]string{}, c.Add...), c.Remove...) {
				seen = append(seen, l)
				if l != strings.ToLower(l) {
					t.Errorf("%s: login %q is not lower case", c.DN, l)
				}
			}
			for _, l := range c.Desired.Attrs["maintainers"] {
				if l != strings.ToLower(l) {
					t.Errorf("%s: maintainer %q is not lower case", c.DN, l)
				}
			}
		}
	}
	if got := strings.Join(seen, ","); got != "mallory,mallory,zoe,donskoy,mallory" {
		t.Errorf("plan adds and removes %s", got)
	}
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if n := e.fake.Stats().RejectedLogins; n != 0 {
		t.Fatalf("%d mixed-case membership writes", n)
	}
	wantMembers(t, e.fake.Members("acme"), map[string]string{"alice": "admin", "bob": "member", "carol": "member",
		"dave": "member", "DonSkoy": "member", "Mallory": "member"})
	eng, _ := e.fake.Team("acme", "eng")
	wantMembers(t, eng.Members, map[string]string{"alice": "maintainer", "DonSkoy": "member"})
	e.noop()
}

// coverEnv: erin and frank leave the org in this plan; erin is in teams eng and web, frank
// is wanted in eng (as napoleon in the plugin's github_org_pending fixture).
func coverEnv(t *testing.T) *env {
	e := newEnv(t, fakegithub.Options{})
	seedOrg(e)
	e.fake.SetMember("acme", "erin", "member")
	e.fake.SetMember("acme", "frank", "member")
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "eng", Members: []string{"alice", "erin"}})
	e.fake.AddTeam("acme", fakegithub.TeamSpec{Name: "web", Members: []string{"bob", "erin"}})
	e.write(orgFiles)
	e.write(map[string]string{
		"ldap-config/github/teams/eng.txt": "username = alice\nusername = frank\n",
		"ldap-config/github/teams/web.txt": "username = bob\nusername = carol\n",
	})
	return e
}

func teamChange(t *testing.T, p *deploy.Plan, ou, dn string) *providers.Change {
	t.Helper()
	for _, c := range target(p, ou).Changes {
		if strings.HasPrefix(c.DN, dn+",") {
			return c
		}
	}
	return nil
}

// Removing a user from the org removes them from its teams: those team removals are planned
// as covered by the org removal (shown, counted apart, not sent), as the plugin skips them.
// A user the plan removes from the org is not added to a team either: apply could not do it
// (GitHub would invite them back), so the plan does not show it.
func TestOrgRemovalCoversTeamRemovals(t *testing.T) {
	e := coverEnv(t)
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	eng, web := teamChange(t, plan, "github/teams", "cn=eng"), teamChange(t, plan, "github/teams", "cn=web")
	if eng == nil || web == nil {
		t.Fatalf("plan %v", changes(plan))
	}
	if len(eng.Add) != 0 || !slices.Equal(eng.Remove, []string{"erin"}) || len(eng.Covered) != 1 || !eng.OnlyCovered() {
		t.Errorf("eng: +%v -%v covered %v", eng.Add, eng.Remove, eng.Covered)
	}
	if !slices.Equal(web.Add, []string{"carol"}) || !slices.Equal(web.Remove, []string{"erin"}) || len(web.Covered) != 1 || web.OnlyCovered() {
		t.Errorf("web: +%v -%v covered %v", web.Add, web.Remove, web.Covered)
	}
	if by := eng.Covered[0].By; by == nil || by.OU != "github/org" || !slices.Contains(by.Remove, "erin") {
		t.Errorf("eng's removal covered by %+v", by)
	}
	if !strings.Contains(e.log.String(), "frank") || !strings.Contains(e.log.String(), "removes from the org are not added") {
		t.Errorf("frank's add is dropped silently: %s", e.log.String())
	}
	if tot := plan.Totals(); tot[providers.UpdateGroup] != 2 || plan.Covered() != 1 {
		t.Errorf("totals %v, covered %d; want 2 updates (org member, web) and 1 covered (eng)", tot, plan.Covered())
	}
	e.fake.ResetStats()
	rep := e.apply(reg, plan)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	st := e.fake.Stats()
	if n := st.Requests["DELETE /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 0 {
		t.Errorf("%d team removals sent", n)
	}
	if n := st.Requests["DELETE /orgs/{org}/memberships/{user}"]; n != 2 {
		t.Errorf("%d org removals, want 2", n)
	}
	if n := st.Requests["PUT /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 1 {
		t.Errorf("%d team adds, want 1 (carol)", n)
	}
	for _, o := range outcomes(rep, "github/teams") {
		want := providers.Applied
		if o.Change == eng {
			want = providers.Covered
		}
		if o.Status != want {
			t.Errorf("%s: %s %v, want %s", o.Change, o.Status, o.Err, want)
		}
	}
	engNow, _ := e.fake.Team("acme", "eng")
	webNow, _ := e.fake.Team("acme", "web")
	wantMembers(t, engNow.Members, map[string]string{"alice": "member"})
	wantMembers(t, webNow.Members, map[string]string{"bob": "member", "carol": "member"})
	e.noop()
}

// When the org removal fails, the team removals it covered are sent after all.
func TestFailedOrgRemovalSendsCoveredTeamRemovals(t *testing.T) {
	e := coverEnv(t)
	e.fake.AddFault(fakegithub.Fault{Method: "DELETE", Path: "/orgs/acme/memberships/erin", Kind: fakegithub.Status, Status: 422})
	reg := e.registry()
	plan := e.plan(reg)
	if err := plan.Err(); err != nil {
		t.Fatal(err)
	}
	eng := teamChange(t, plan, "github/teams", "cn=eng")
	rep := e.apply(reg, plan)
	for _, o := range outcomes(rep, "github/org") {
		if slices.Contains(o.Change.Remove, "erin") && o.Status != providers.Failed {
			t.Fatalf("org removal of erin: %s", o.Status)
		}
	}
	for _, o := range outcomes(rep, "github/teams") {
		if o.Status != providers.Applied {
			t.Errorf("%s: %s %v", o.Change, o.Status, o.Err)
		}
		if o.Change == eng && o.Status == providers.Covered {
			t.Error("eng reported covered although the org removal failed")
		}
	}
	if n := e.fake.Stats().Requests["DELETE /orgs/{org}/teams/{slug}/memberships/{user}"]; n != 2 {
		t.Errorf("%d team removals sent, want 2 (erin from eng and web)", n)
	}
	engNow, _ := e.fake.Team("acme", "eng")
	wantMembers(t, engNow.Members, map[string]string{"alice": "member"})
	if e.fake.Members("acme")["erin"] != "member" {
		t.Fatal("the fault did not keep erin in the org")
	}
}

// pluginToken is the token of the plugin's acceptance fixtures, written in their configs.
const pluginToken = "meowmeowmeowmeowmeow"

// pluginFake is a GitHub like the plugin's acceptance fake: HTTPS, REST at the root and
// GraphQL at /graphql only, 400 to mixed-case membership writes, one accepted token.
func pluginFake(t *testing.T, fixture string) *fakegithub.Server {
	f := fakegithub.New(fakegithub.Options{Token: pluginToken, TLS: true, Layout: fakegithub.RootLayout,
		RejectMixedCaseLogins: true, Schema: fakegithub.TestSchema(t)})
	t.Cleanup(f.Close)
	f.AddUsers("DonSkoy") // GitHub's spelling of a login the files write in other cases
	f.AddUsers(strings.Fields("balinese blackmanx chausie cheetoh cyprus desertlynx dwelf khaomanee korat mainecoon minskin monalisa napoleon nebelung ojosazules peterbald ragamuffin russianblue offboarded1 offboarded2 offboarded3")...)
	admins := []string{"blackmanx", "mainecoon", "peterbald"}
	members := strings.Fields("ojosazules cyprus chausie khaomanee ragamuffin minskin nebelung napoleon cheetoh russianblue")
	var pending []string
	if fixture == "github_org_pending" {
		admins = []string{"blackmanx", "mainecoon", "peterbald", "offboarded3"}
		members = []string{"khaomanee", "ragamuffin", "nebelung", "napoleon"}
		pending = []string{"ojosazules", "cyprus", "chausie", "offboarded1", "offboarded2"}
	}
	for _, u := range admins {
		f.SetMember("meowsister", u, "admin")
	}
	for _, u := range members {
		f.SetMember("meowsister", u, "member")
	}
	for _, u := range pending {
		f.Invite("meowsister", u, "member")
	}
	for _, spec := range []fakegithub.TeamSpec{
		{Name: "employees", Members: strings.Fields("nebelung khaomanee cheetoh ojosazules blackmanx russianblue ragamuffin mainecoon")},
		{Name: "grumpy-cat", Members: strings.Fields("blackmanx russianblue ragamuffin mainecoon")},
		{Name: "colonel-meow", Members: strings.Fields("nebelung khaomanee cheetoh ojosazules")},
		{Name: "child-team", Parent: "employees", Members: []string{"blackmanx", "DonSkoy"}},
	} {
		if _, err := f.AddTeam("meowsister", spec); err != nil {
			t.Fatal(err)
		}
	}
	f.SetMember("org2", "blackmanx", "admin")
	for _, u := range []string{"cheetoh", "DonSkoy", "khaomanee", "russianblue"} {
		f.SetMember("org2", u, "member")
	}
	return f
}

// asHost returns a client that reaches the fake for every host name (https://github.fake as
// the fixtures write it), verifying the fake's certificate.
func asHost(f *fakegithub.Server) *http.Client {
	tr := f.Client().Transport.(*http.Transport).Clone()
	addr := strings.TrimPrefix(f.URL(), "https://")
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com" // the name httptest's certificate is for
	return &http.Client{Transport: tr}
}

// pluginRun loads a fixture from testdata/plugin and plans it with a fresh registry.
func pluginRun(t *testing.T, fixture string, f *fakegithub.Server, log *syncBuffer) (*deploy.Plan, deploy.Options) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join("testdata", "plugin", fixture)
	repo, err := calc.Load(ctx, filepath.Join(dir, "config.yaml"), calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatalf("%s: load: %v", fixture, err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatalf("%s: calculate: %v", fixture, err)
	}
	// The real clock: the write scheduler's 1 s spacing would only slow the fixtures down.
	opt := github.Options{HTTPClient: asHost(f), NoWritePacing: true,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if fixture == "predictive" {
		pred, err := cache.LoadPredictive(filepath.Join(dir, "predictive-state"))
		if err != nil {
			t.Fatal(err)
		}
		opt.Predictive = pred
	}
	reg := github.NewRegistry(opt)
	t.Cleanup(reg.Close)
	fac := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
	// Force: the plugin has no removal guard, and its scenarios remove more than ours allows.
	dopt := deploy.Options{Backends: backends.Spec().WithFactory(fac, "github_org", "github_team"), Force: true}
	plan, err := deploy.Build(ctx, res, repo.Config(), dopt)
	if err != nil {
		t.Fatalf("%s: build: %v", fixture, err)
	}
	if err := plan.Err(); err != nil {
		t.Fatalf("%s: plan: %v", fixture, err)
	}
	return plan, dopt
}

// The GitHub parts of the Ruby plugin's acceptance fixtures, in their shapes (addr:
// https://github.fake, the plugin loaders in ERB, mixed-case logins, feature flags, ignore
// lists, pending invitations, a predictive state), load, plan, apply and plan again as a
// no-op against a fake mounted at the root as the plugin's is, without touching their addr.
func TestPluginFixtures(t *testing.T) {
	for _, fixture := range []string{"initial_run", "modify_and_delete", "github_org_ff_invite", "github_org_ff_remove",
		"github_org_ff_none", "github_org_ignore", "github_org_pending", "predictive"} {
		t.Run(fixture, func(t *testing.T) {
			f := pluginFake(t, fixture)
			var teamDeletes []string
			f.OnRequest(func(r *http.Request) {
				if r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/teams/") {
					teamDeletes = append(teamDeletes, r.URL.Path)
				}
			})
			log := &syncBuffer{}
			plan, dopt := pluginRun(t, fixture, f, log)
			if len(changes(plan)) == 0 {
				t.Fatal("nothing planned")
			}
			switch fixture {
			case "github_org_pending":
				// Pending invitees are named nowhere; napoleon, whom the org removes, is not
				// added to employees.
				for _, u := range []string{"chausie", "cyprus", "ojosazules"} {
					if strings.Contains(log.String(), u) {
						t.Errorf("pending invitee %s named: %s", u, log.String())
					}
				}
				for _, c := range target(plan, "github").Changes {
					if slices.Contains(c.Add, "napoleon") {
						t.Errorf("%s adds napoleon, whom the org removes", c.DN)
					}
				}
			case "modify_and_delete":
				if c := teamChange(t, plan, "github", "cn=employees"); c == nil || c.CoveredBy("nebelung") == nil {
					t.Errorf("employees does not show nebelung's removal as covered: %v", c)
				}
			case "predictive":
				if n := target(plan, "github-org-2").Counters["predictive_hits"]; n != 2 {
					t.Errorf("org2 trusted %d role groups from the predictive state, want 2", n)
				}
			}
			if _, err := deploy.Apply(context.Background(), plan, dopt.ApplyOptions()); err != nil {
				t.Fatalf("apply: %v", err)
			}
			st := f.Stats()
			if st.NotServed != 0 || st.RejectedLogins != 0 || st.RejectedAuth != 0 {
				t.Errorf("requests not served %d, mixed-case logins %d, unauthorized %d: %v", st.NotServed, st.RejectedLogins, st.RejectedAuth, st.Requests)
			}
			for _, p := range teamDeletes {
				if fixture == "modify_and_delete" && strings.HasSuffix(p, "/nebelung") {
					t.Errorf("team removal sent although the org removal covers it: %s", p)
				}
			}
			f.ResetStats()
			if fixture == "predictive" {
				return // the predictive state is the one the fixture was written with
			}
			again, dopt := pluginRun(t, fixture, f, &syncBuffer{})
			if got := changes(again); len(got) != 0 {
				t.Fatalf("second plan: %v", got)
			}
			deploy.Apply(context.Background(), again, dopt.ApplyOptions())
			if st := f.Stats(); st.Writes != 0 {
				t.Errorf("no-op run wrote: %v", st.Requests)
			}
		})
	}
}
