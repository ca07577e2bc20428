package fake_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/fake"
)

func target(ou string) *providers.Target { return &providers.Target{OU: &config.OU{Key: ou}} }

func TestLoadStateReadApply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	state := `{"groups": {
  "apps/wiki": {"description": "Wiki", "dn": "cn=wiki,ou=Apps", "members": ["alice"], "metadata": {}},
  "nested/ou/x": {"description": "x", "dn": null, "members": [], "metadata": {}}}}`
	if err := os.WriteFile(path, []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	fp, err := fake.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := fp.Read(ctx, target("apps"))
	if err != nil {
		t.Fatal(err)
	}
	if g := st.Groups[providers.Key("CN=wiki, ou=apps")]; g == nil || !slices.Equal(g.Members, []string{"alice"}) {
		t.Fatalf("state %+v", st.Groups)
	}
	if gs := fp.Groups("nested/ou"); len(gs) != 1 || gs[0].DN != "cn=x" {
		t.Errorf("OU key is everything before the last slash: %+v", gs)
	}

	changes := []*providers.Change{
		{Kind: providers.UpdateGroup, DN: "cn=wiki,ou=Apps", Desired: &providers.Group{DN: "cn=wiki,ou=Apps", Members: []string{"bob"}}},
		{Kind: providers.DeleteGroup, DN: "cn=gone,ou=Apps"},
	}
	out := fp.Apply(ctx, target("apps"), changes)
	if out[0].Status != providers.Applied || out[1].Status != providers.AlreadyInState {
		t.Errorf("outcomes %+v", out)
	}
	if gs := fp.Groups("apps"); !slices.Equal(gs[0].Members, []string{"bob"}) {
		t.Errorf("after apply: %+v", gs)
	}
	if n := len(fp.Calls()); n != 3 {
		t.Errorf("%d calls recorded, want 3 (read + 2 applies)", n)
	}
}

func TestFailureInjection(t *testing.T) {
	fp := fake.New()
	ctx := context.Background()
	boom := errors.New("boom")
	fp.FailRead("apps", boom)
	if _, err := fp.Read(ctx, target("apps")); !errors.Is(err, boom) {
		t.Errorf("read err = %v", err)
	}
	fp.FailRead("apps", nil)
	fp.FailApply(func(c *providers.Change) error {
		if c.DN == "cn=bad" {
			return boom
		}
		return nil
	})
	out := fp.Apply(ctx, target("apps"), []*providers.Change{
		{Kind: providers.CreateGroup, DN: "cn=bad", Desired: &providers.Group{DN: "cn=bad"}},
		{Kind: providers.CreateGroup, DN: "cn=good", Desired: &providers.Group{DN: "cn=good"}},
	})
	if out[0].Status != providers.Failed || out[1].Status != providers.Applied {
		t.Errorf("outcomes %+v", out)
	}
	fp.SetContainerMissing("teams")
	if st, _ := fp.Read(ctx, target("teams")); !st.ContainerMissing {
		t.Error("container not reported missing")
	}
	if o := fp.Apply(ctx, target("teams"), []*providers.Change{{Kind: providers.CreateGroup, DN: "cn=t", Desired: &providers.Group{DN: "cn=t"}}}); o[0].Status != providers.Failed {
		t.Errorf("write into a missing container: %+v", o[0])
	}
	if err := fp.Prepare(ctx, target("teams")); err != nil {
		t.Fatal(err)
	}
	if st, _ := fp.Read(ctx, target("teams")); st.ContainerMissing {
		t.Error("Prepare did not create the container")
	}
}
