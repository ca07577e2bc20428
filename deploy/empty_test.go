package deploy_test

import (
	"errors"
	"testing"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
)

func TestPlanEmpty(t *testing.T) {
	change := &providers.Change{Kind: providers.CreateGroup, DN: "cn=a"}
	for _, tc := range []struct {
		name    string
		targets []*deploy.TargetPlan
		want    bool
	}{
		{"no targets", nil, true},
		{"targets without changes", []*deploy.TargetPlan{{OU: "a"}, {OU: "b"}}, true},
		{"a failed read has no changes", []*deploy.TargetPlan{{OU: "a", Err: errors.New("read failed")}}, true},
		{"one change", []*deploy.TargetPlan{{OU: "a"}, {OU: "b", Changes: []*providers.Change{change}}}, false},
		{"a refused target's changes count", []*deploy.TargetPlan{{OU: "a", Err: errors.New("refused"), Changes: []*providers.Change{change}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (&deploy.Plan{Targets: tc.targets}).Empty(); got != tc.want {
				t.Errorf("Empty() = %v, want %v", got, tc.want)
			}
		})
	}
}
