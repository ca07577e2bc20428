package deploy_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

// pagedFake reports its read in two pages, as a paged LDAP search does, and reports again
// while applying (which must reach nobody: the plan's reads are over).
type pagedFake struct{ *fake.Provider }

func (p pagedFake) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	st, err := p.Provider.Read(ctx, t)
	if err != nil {
		return nil, err
	}
	t.ReportRead(providers.ReadProgress{Groups: 1, Total: len(st.Groups)})
	t.ReportRead(providers.ReadProgress{Groups: len(st.Groups), Total: len(st.Groups)})
	return st, nil
}

func (p pagedFake) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	t.ReportRead(providers.ReadProgress{Groups: 99})
	return p.Provider.Apply(ctx, t, changes)
}

func TestBuildReportsReadProgress(t *testing.T) {
	res, cfg := repo(t, defs)
	fp := fake.New()
	fp.Seed("apps", &providers.Group{DN: "cn=old,ou=Apps", Members: []string{"alice"}},
		&providers.Group{DN: "cn=wiki,ou=Apps", Members: []string{"carol"}})
	fp.Seed("teams", &providers.Group{DN: "cn=sre,ou=Teams", Members: []string{"alice"}})
	var mu sync.Mutex
	events := map[string][]deploy.Progress{}
	f := func(*config.OU) (providers.Provider, error) { return pagedFake{fp}, nil }
	opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of"),
		Progress: func(p deploy.Progress) {
			mu.Lock()
			defer mu.Unlock()
			p.Elapsed = 0 // wall time
			events[p.OU] = append(events[p.OU], p)
		}}
	ctx := context.Background()
	plan, err := deploy.Build(ctx, res, cfg, opt)
	if err != nil || plan.Err() != nil {
		t.Fatal(err, plan.Err())
	}
	want := []deploy.Progress{
		{OU: "apps", Type: "ldap", Desired: 2},
		{OU: "apps", Type: "ldap", Desired: 2, Read: 1, Total: 2},
		{OU: "apps", Type: "ldap", Desired: 2, Read: 2, Total: 2},
		{OU: "apps", Type: "ldap", Desired: 2, Read: 2, Done: true},
	}
	if got := events["apps"]; !slices.Equal(got, want) {
		t.Errorf("apps events\n got %+v\nwant %+v", got, want)
	}
	if got := events["teams"]; len(got) != 4 || got[1].Read != 1 || got[1].Total != 1 || !got[3].Done {
		t.Errorf("teams events %+v", got)
	}
	n := len(events["apps"]) + len(events["teams"])
	if _, err := deploy.Apply(ctx, plan, opt.ApplyOptions()); err != nil {
		t.Fatal(err)
	}
	if len(events["apps"])+len(events["teams"]) != n {
		t.Errorf("reports made while applying reached Options.Progress: %+v", events)
	}
}
