package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/entitlements-go/entitlements/guard"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// Written from mutation testing (issue 15): the member_of target's own guard and fingerprint.

// The member_of target is refused by its own limit (the share of the values people hold),
// not only by the run-wide one that the same removals also trip.
func TestMemberOfGuardIsTheTargetsOwn(t *testing.T) {
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
	if tp := targetPlan(t, plan, "shell"); !errors.As(tp.Err, &ge) || ge.Limit != guard.LimitShare || ge.Removed != 10 || ge.Total != 10 {
		t.Fatalf("shell: %v (%+v); want its own share limit, 10 of 10 values", tp.Err, ge)
	}
}

// A planned member_of target carries the fingerprint of the values people hold (what a saved
// plan checks for drift before applying).
func TestMemberOfFingerprint(t *testing.T) {
	res, cfg := repo(t, defs)
	plan, err := deploy.Build(context.Background(), res, cfg, options(fake.New()))
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	if tp := targetPlan(t, plan, "shell"); tp.Fingerprint == "" {
		t.Error("member_of target planned without a fingerprint")
	}
}

// The run-wide guard counts the values the member_of target removes: here each target stays
// under MinRemovals (9 memberships of apps, 9 values of shell), together they do not.
func TestGlobalGuardCountsMemberOf(t *testing.T) {
	people := "alice: {cn: A}\n"
	var ps []string
	for i := range 9 {
		people += fmt.Sprintf("p%d: {cn: P, shellentitlements: [\"cn=ssh,ou=Apps\"]}\n", i)
		ps = append(ps, fmt.Sprintf("p%d", i))
	}
	res, cfg := repo(t, map[string]string{"people.yaml": people,
		"defs/teams/sre.txt": "username = alice\n", "defs/apps/ssh.txt": "group = teams/sre\n"})
	fp := fake.New()
	fp.Seed("apps", &providers.Group{DN: "cn=ssh,ou=Apps", CN: "ssh", Description: "ssh", Members: append([]string{"alice"}, ps...)})
	plan, err := deploy.Build(context.Background(), res, cfg, options(fp))
	if err != nil {
		t.Fatal(err)
	}
	for _, ou := range []string{"apps", "shell"} {
		var ge *guard.Error
		if tp := targetPlan(t, plan, ou); !errors.As(tp.Err, &ge) || ge.Limit != guard.LimitTotal || ge.Removed != 18 || ge.Total != 19 {
			t.Errorf("%s: %v (%+v); want the run-wide limit, 18 of 19", ou, tp.Err, ge)
		}
	}
}
