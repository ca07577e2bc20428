package guard

import (
	"errors"
	"testing"

	"github.com/entitlements-go/entitlements/providers"
)

func TestGuard(t *testing.T) {
	members := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a'+i%26)) + string(rune('a'+i/26))
		}
		return out
	}
	cur := &providers.State{Groups: map[string]*providers.Group{"cn=big": {DN: "cn=big", Members: members(40)}, "cn=small": {DN: "cn=small", Members: members(4)}}}
	upd := func(dn string, n int) *providers.Change {
		return &providers.Change{Kind: providers.UpdateGroup, DN: dn, Remove: members(n)}
	}
	del := func(dn string, n int) *providers.Change {
		return &providers.Change{Kind: providers.DeleteGroup, DN: dn, Remove: members(n)}
	}
	for _, tc := range []struct {
		name    string
		g       Guard
		changes []*providers.Change
		refused bool
	}{
		{"few removals pass", Default(), []*providers.Change{upd("cn=small", 4)}, false},
		{"share under the limit", Default(), []*providers.Change{upd("cn=big", 10)}, false},
		{"share over the limit", Default(), []*providers.Change{upd("cn=big", 12)}, true},
		{"deletions over the limit", Guard{MaxRemovalShare: -1, MaxDeletedGroups: 1}, []*providers.Change{del("cn=a", 0), del("cn=b", 0)}, true},
		{"no deletions allowed", Guard{MaxRemovalShare: -1, MaxDeletedGroups: 0}, []*providers.Change{del("cn=a", 0)}, true},
		{"no limits", Guard{MaxRemovalShare: -1, MaxDeletedGroups: -1}, []*providers.Change{upd("cn=big", 40), del("cn=small", 4)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Check("ou", cur, tc.changes)
			var ge *Error
			if got := errors.As(err, &ge); got != tc.refused {
				t.Fatalf("refused = %v (%v), want %v", got, err, tc.refused)
			}
			if tc.refused && (len(ge.Worst) == 0 || ge.Error() == "") {
				t.Errorf("refusal without worst groups: %v", ge)
			}
		})
	}
}
