package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/guard"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

const cfgYAML = `configuration_path: ./defs
backends:
  l:
    type: ldap
    ldap_uri: ldap://127.0.0.1:1
    ldap_binddn: cn=admin
    ldap_bindpw: x
    person_dn_format: uid=%KEY%,ou=People
groups:
  teams:
    backend: l
    base: ou=Teams
  apps:
    backend: l
    base: ou=Apps
  shell:
    type: member_of
    ldap_uri: ldap://127.0.0.1:1
    ldap_binddn: cn=admin
    ldap_bindpw: x
    person_dn_format: uid=%KEY%,ou=People
    memberof_attribute: shellentitlements
    ou: [apps]
people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`

func repo(t *testing.T, files map[string]string) (*calc.Result, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{"config.yaml": cfgYAML,
		"people.yaml": "alice: {cn: A}\nbob: {cn: B, shellentitlements: [\"cn=ssh,ou=Apps\"]}\ncarol: {cn: C}\n"}
	for k, v := range files {
		all[k] = v
	}
	for p, c := range all {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := calc.Load(context.Background(), filepath.Join(dir, "config.yaml"),
		calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Calculate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, r.Config()
}

var defs = map[string]string{
	"defs/teams/sre.txt": "username = alice\nusername = bob\n",
	"defs/apps/ssh.txt":  "group = teams/sre\n",
	"defs/apps/wiki.txt": "username = carol\n",
}

func options(fp *fake.Provider) deploy.Options {
	f := func(*config.OU) (providers.Provider, error) { return fp, nil }
	return deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of")}
}

func TestPlanApplyConverges(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.Seed("apps", &providers.Group{DN: "cn=old,ou=Apps", Members: []string{"alice"}},
		&providers.Group{DN: "cn=wiki,ou=Apps", Description: "wiki", Members: []string{"alice"}})
	fp.SetContainerMissing("teams")
	opt := options(fp)
	ctx := context.Background()
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	tot := plan.Totals()
	want := map[providers.ChangeKind]int{providers.CreateContainer: 1, providers.CreateGroup: 2,
		providers.UpdateGroup: 1, providers.DeleteGroup: 1, providers.UpdatePerson: 2}
	for k, n := range want {
		if tot[k] != n {
			t.Errorf("%s: %d, want %d (%v)", k, tot[k], n, tot)
		}
	}
	// member_of: alice gains ssh, carol gains wiki; bob already has ssh.
	for _, tp := range plan.Targets {
		if tp.OU == "shell" {
			if c := tp.Changes[0]; c.Person != "alice" || !slices.Equal(c.Values, []string{"cn=ssh,ou=Apps"}) {
				t.Errorf("member_of change %+v", c)
			}
			if c := tp.Changes[1]; c.Person != "carol" || !slices.Equal(c.Values, []string{"cn=wiki,ou=Apps"}) {
				t.Errorf("member_of change %+v", c)
			}
		}
	}
	rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	// Order: the container is prepared before the first write of its target.
	calls := fp.Calls()
	prep := slices.IndexFunc(calls, func(c fake.Call) bool { return c.Op == "prepare" })
	firstTeamWrite := slices.IndexFunc(calls, func(c fake.Call) bool { return c.Op == "apply" && c.OU == "teams" })
	if prep < 0 || firstTeamWrite < prep {
		t.Errorf("prepare at %d, first teams write at %d", prep, firstTeamWrite)
	}
	if got := fp.PersonAttribute("alice", "shellentitlements"); !slices.Equal(got, []string{"cn=ssh,ou=Apps"}) {
		t.Errorf("alice's member_of: %v", got)
	}
	again, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range again.Targets {
		if tp.OU != "shell" && len(tp.Changes) != 0 { // people data is static in this test
			t.Errorf("%s: second plan has %d changes", tp.OU, len(tp.Changes))
		}
	}
}

func TestFailedReadWritesNothing(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.Seed("apps", &providers.Group{DN: "cn=old,ou=Apps", Members: []string{"alice"}})
	fp.FailRead("apps", errors.New("connection refused"))
	opt := options(fp)
	plan, err := deploy.Build(context.Background(), res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Err() == nil || !strings.Contains(plan.Err().Error(), "connection refused") {
		t.Fatalf("plan error: %v", plan.Err())
	}
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	for _, c := range fp.Calls() {
		if c.Op == "apply" && c.OU == "apps" {
			t.Errorf("wrote to a target whose read failed: %v", c.Change)
		}
	}
	if len(fp.Groups("apps")) != 1 {
		t.Error("existing group was removed")
	}
	if rep.Err() == nil {
		t.Error("report does not carry the read failure")
	}
}

func TestPartialFailure(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.FailApply(func(c *providers.Change) error {
		if strings.HasPrefix(c.DN, "cn=ssh") {
			return errors.New("boom")
		}
		return nil
	})
	opt := options(fp)
	plan, _ := deploy.Build(context.Background(), res, cfg, opt)
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("report error: %v", err)
	}
	if len(fp.Groups("apps")) != 1 || len(fp.Groups("teams")) != 1 {
		t.Errorf("the other changes were not applied: apps %v teams %v", fp.Groups("apps"), fp.Groups("teams"))
	}
	fp.FailApply(nil)
	plan2, _ := deploy.Build(context.Background(), res, cfg, opt)
	if _, err := deploy.Apply(context.Background(), plan2, opt.ApplyOptions()); err != nil {
		t.Fatal(rep.Err())
	}
	if len(fp.Groups("apps")) != 2 {
		t.Error("re-run did not converge")
	}
}

func TestMissingProviderIsReported(t *testing.T) {
	res, cfg := repo(t, defs)
	plan, err := deploy.Build(context.Background(), res, cfg, deploy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Err(); err == nil || !strings.Contains(err.Error(), `no provider is available for backend type "ldap"`) {
		t.Fatalf("plan error: %v", err)
	}
}

func TestMemberOfWaitsForTheGroupsItLists(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.FailRead("apps", errors.New("timeout"))
	plan, err := deploy.Build(context.Background(), res, cfg, options(fp))
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range plan.Targets {
		if tp.OU == "shell" && (tp.Err == nil || len(tp.Changes) != 0) {
			t.Errorf("member_of planned %d changes although apps failed: %v", len(tp.Changes), tp.Err)
		}
	}
	if tot := plan.Totals(); tot[providers.UpdatePerson] != 0 {
		t.Errorf("totals count unappliable changes: %v", tot)
	}
}

func TestMemberOfGuard(t *testing.T) {
	// Ten people hold the attribute; the calculation gives them nothing any more.
	people := "alice: {cn: A}\n"
	for i := range 10 {
		people += fmt.Sprintf("p%d: {cn: P, shellentitlements: [\"cn=ssh,ou=Apps\"]}\n", i)
	}
	res, cfg := repo(t, map[string]string{"people.yaml": people,
		"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": "group = teams/sre\n"})
	plan, err := deploy.Build(context.Background(), res, cfg, options(fake.New()))
	if err != nil {
		t.Fatal(err)
	}
	var ge *guard.Error
	if !errors.As(plan.Err(), &ge) || ge.OU != "shell" {
		t.Fatalf("plan error %v; want the guard to refuse member_of", plan.Err())
	}
}

func TestGroupWipeGuard(t *testing.T) {
	// One group loses 12 of 13 members; the target as a whole is large, so only the per-group
	// limit catches it.
	var many, big []string
	for i := range 60 {
		many = append(many, fmt.Sprintf("u%02d", i))
	}
	big = append(big, many[:13]...)
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.Seed("apps", &providers.Group{DN: "cn=ssh,ou=Apps", Members: append([]string{"alice", "bob"}, big[:11]...)},
		&providers.Group{DN: "cn=wiki,ou=Apps", Members: append([]string{"carol"}, many...)},
		&providers.Group{DN: "cn=other,ou=Apps", Members: many})
	fp.SetDeletes(false)
	g := guard.Default()
	g.MaxRemovalShare = -1
	opt := options(fp)
	opt.Guard = &g
	plan, err := deploy.Build(context.Background(), res, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	var ge *guard.Error
	if !errors.As(plan.Err(), &ge) || ge.Group == "" {
		t.Fatalf("plan error %v; want a per-group refusal", plan.Err())
	}
	if !strings.Contains(ge.Error(), "of the") {
		t.Errorf("message: %v", ge)
	}
}

func TestContainerWithoutPreparer(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.SetContainerMissing("teams")
	f := func(*config.OU) (providers.Provider, error) {
		return struct{ providers.Provider }{fp}, nil // hides Prepare
	}
	opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of")}
	plan, _ := deploy.Build(context.Background(), res, cfg, opt)
	rep, _ := deploy.Apply(context.Background(), plan, opt.ApplyOptions())
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "cannot create it") {
		t.Fatalf("report: %v", err)
	}
}

func TestApplyStopsWhenCancelled(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	opt := options(fp)
	plan, _ := deploy.Build(context.Background(), res, cfg, opt)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
	if rep.Err() == nil {
		t.Fatal("a cancelled apply reported success")
	}
	for _, c := range fp.Calls() {
		if c.Op == "apply" {
			t.Fatalf("wrote after cancellation: %v", c.Change)
		}
	}
}

func TestMemberOfComparesNormalisedDNs(t *testing.T) {
	files := map[string]string{"people.yaml": "alice: {cn: A, shellentitlements: [\"CN=ssh, OU=Apps\"]}\nbob: {cn: B}\ncarol: {cn: C}\n",
		"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": "group = teams/sre\n", "defs/apps/wiki.txt": "username = carol\n"}
	res, cfg := repo(t, files)
	plan, err := deploy.Build(context.Background(), res, cfg, options(fake.New()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range plan.Targets {
		if tp.OU != "shell" {
			continue
		}
		for _, c := range tp.Changes {
			if c.Person == "alice" {
				t.Errorf("alice's value differs only in spelling, yet a change is planned: %+v", c)
			}
		}
	}
}
