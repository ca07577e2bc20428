package guard

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers"
)

// These tests pin the removal guard at its boundaries: every comparison in guard.go is
// exercised on both sides of its limit, so that an off-by-one (> for >=) or a swapped
// operand fails a test (mutation testing found the guard's previous tests blind to those).

// uids returns n distinct member names with a prefix.
func uids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return out
}

// groups builds a current state of groups "cn=<name>" with the given member counts.
func groups(sizes map[string]int) *providers.State {
	st := &providers.State{Groups: map[string]*providers.Group{}}
	for name, n := range sizes {
		g := &providers.Group{DN: "cn=" + name, Members: uids(name, n)}
		st.Groups[providers.Key(g.DN)] = g
	}
	return st
}

// removeFrom is the update that removes the first n members of a current group.
func removeFrom(st *providers.State, name string, n int) *providers.Change {
	cur := st.Groups[providers.Key("cn="+name)]
	return &providers.Change{Kind: providers.UpdateGroup, DN: cur.DN, Current: cur, Remove: slices.Clone(cur.Members[:n])}
}

// deleteOf is the deletion of a current group (its members are removed with it).
func deleteOf(st *providers.State, name string) *providers.Change {
	cur := st.Groups[providers.Key("cn="+name)]
	return &providers.Change{Kind: providers.DeleteGroup, DN: cur.DN, Current: cur, Remove: slices.Clone(cur.Members)}
}

func guardErr(t *testing.T, err error) *Error {
	t.Helper()
	var ge *Error
	if err != nil && !errors.As(err, &ge) {
		t.Fatalf("error %v is not a *Error", err)
	}
	return ge
}

func TestGuardBoundaries(t *testing.T) {
	// 44 memberships: the example (25% of 44 = 11).
	st44 := func() *providers.State { return groups(map[string]int{"big": 40, "small": 4}) }
	// A large target in which one group is small enough to be wiped without the target share
	// noticing (10 of 19 is 52.6% of the group, 10 of 219 is 4.6% of the target).
	stWipe := func() *providers.State { return groups(map[string]int{"huge": 200, "g": 19, "h": 20}) }
	// Empty groups: deleting them removes nobody.
	stEmpty := func() *providers.State {
		sizes := map[string]int{}
		for i := range 12 {
			sizes[fmt.Sprintf("e%02d", i)] = 0
		}
		return groups(sizes)
	}
	deleteEmpty := func(st *providers.State, n int) []*providers.Change {
		var out []*providers.Change
		for i := range n {
			out = append(out, deleteOf(st, fmt.Sprintf("e%02d", i)))
		}
		return out
	}
	noGroupLimit := Default()
	noGroupLimit.MaxGroupRemovalShare = -1
	highDeletes := Default()
	highDeletes.MaxDeletedGroups = 1000
	zeroShare := Default()
	zeroShare.MaxRemovalShare = 0
	zeroShare.MaxGroupRemovalShare = -1
	zeroGroupShare := Default()
	zeroGroupShare.MaxRemovalShare = -1
	zeroGroupShare.MaxGroupRemovalShare = 0
	oneShare := Default()
	oneShare.MaxRemovalShare = 1
	oneShare.MaxGroupRemovalShare = 1

	type want struct {
		refused bool
		removed int // checked when refused
		deleted int
		group   string // the per-group refusal, "" for a target-wide one
		msg     string // a part of the message
	}
	for _, tc := range []struct {
		name    string
		g       Guard
		st      func() *providers.State
		changes func(*providers.State) []*providers.Change
		want    want
	}{
		{name: "exactly 25% (11 of 44) passes", g: noGroupLimit, st: st44,
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "big", 11)} }},
		{name: "12 of 44 is refused", g: noGroupLimit, st: st44,
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "big", 12)} },
			want:    want{refused: true, removed: 12, msg: "it removes 12 of 44 memberships (27%, limit 25%)"}},
		{name: "share counted over several groups", g: noGroupLimit, st: st44,
			changes: func(s *providers.State) []*providers.Change {
				return []*providers.Change{removeFrom(s, "big", 8), removeFrom(s, "small", 4)}
			},
			want: want{refused: true, removed: 12}},
		{name: "exactly MinRemovals over the share limit is refused", g: noGroupLimit,
			st:      func() *providers.State { return groups(map[string]int{"a": 20}) },
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "a", 10)} },
			want:    want{refused: true, removed: 10, msg: "it removes 10 of 20 memberships (50%, limit 25%)"}},
		{name: "one under MinRemovals passes whatever the share", g: noGroupLimit,
			st:      func() *providers.State { return groups(map[string]int{"a": 9}) },
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "a", 9)} }},
		{name: "MinRemovals 0: a single removal over the share is refused",
			g:       Guard{MaxRemovalShare: 0.25, MinRemovals: 0, MaxDeletedGroups: -1, MaxGroupRemovalShare: -1},
			st:      func() *providers.State { return groups(map[string]int{"a": 3}) },
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "a", 1)} },
			want:    want{refused: true, removed: 1}},
		{name: "MinRemovals 0 and no removal passes",
			g:  Guard{MaxRemovalShare: 0, MinRemovals: 0, MaxDeletedGroups: -1, MaxGroupRemovalShare: 0},
			st: func() *providers.State { return groups(map[string]int{"a": 3}) },
			changes: func(s *providers.State) []*providers.Change {
				return []*providers.Change{{Kind: providers.UpdateGroup, DN: "cn=a", Current: s.Groups["cn=a"], Add: []string{"x"}}}
			}},
		{name: "exactly MaxDeletedGroups deletions pass", g: Default(), st: stEmpty,
			changes: func(s *providers.State) []*providers.Change { return deleteEmpty(s, 10) }},
		{name: "one deletion more is refused", g: Default(), st: stEmpty,
			changes: func(s *providers.State) []*providers.Change { return deleteEmpty(s, 11) },
			want:    want{refused: true, deleted: 11, msg: "it deletes 11 groups (limit 10)"}},
		{name: "MaxDeletedGroups 0 refuses one deletion", g: Guard{MaxRemovalShare: -1, MaxDeletedGroups: 0, MaxGroupRemovalShare: -1}, st: stEmpty,
			changes: func(s *providers.State) []*providers.Change { return deleteEmpty(s, 1) },
			want:    want{refused: true, deleted: 1, msg: "it deletes 1 groups (limit 0)"}},
		{name: "negative MaxDeletedGroups: no limit", g: Guard{MaxRemovalShare: -1, MaxDeletedGroups: -1, MaxGroupRemovalShare: -1}, st: stEmpty,
			changes: func(s *providers.State) []*providers.Change { return deleteEmpty(s, 12) }},
		{name: "members of a deleted group count as removals", g: highDeletes,
			st:      func() *providers.State { return groups(map[string]int{"gone": 12, "kept": 32}) },
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{deleteOf(s, "gone")} },
			want:    want{refused: true, removed: 12, deleted: 1, msg: "it removes 12 of 44 memberships"}},
		{name: "deletions at their limit, refused on share: the message says share",
			g:       Guard{MaxRemovalShare: 0.25, MinRemovals: 10, MaxDeletedGroups: 1, MaxGroupRemovalShare: -1},
			st:      func() *providers.State { return groups(map[string]int{"gone": 12, "kept": 32}) },
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{deleteOf(s, "gone")} },
			want:    want{refused: true, removed: 12, deleted: 1, msg: "it removes 12 of 44 memberships"}},
		{name: "one group losing exactly 50% passes", g: Default(), st: stWipe,
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "h", 10)} }},
		{name: "exactly MinRemovals over 50% of one group is refused", g: Default(), st: stWipe,
			changes: func(s *providers.State) []*providers.Change {
				return []*providers.Change{removeFrom(s, "h", 5), removeFrom(s, "g", 10)}
			},
			want: want{refused: true, removed: 15, group: "cn=g", msg: "it removes 10 of the 19 members of cn=g (limit 50% of a group)"}},
		{name: "a group losing 9 of 9 is under MinRemovals", g: Default(),
			st:      func() *providers.State { return groups(map[string]int{"huge": 200, "s": 9}) },
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "s", 9)} }},
		{name: "target share wins over the group share in the report", g: Default(),
			st:      func() *providers.State { return groups(map[string]int{"a": 20, "b": 20}) },
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "a", 15)} },
			want:    want{refused: true, removed: 15, msg: "it removes 15 of 40 memberships"}},
		{name: "MaxRemovalShare 0 means no removals (from MinRemovals on), not no limit", g: zeroShare, st: st44,
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "big", 10)} },
			want:    want{refused: true, removed: 10, msg: "limit 0%"}},
		{name: "MaxRemovalShare 0 still lets fewer than MinRemovals through", g: zeroShare, st: st44,
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "big", 9)} }},
		{name: "MaxGroupRemovalShare 0 means no removals from a group", g: zeroGroupShare, st: stWipe,
			changes: func(s *providers.State) []*providers.Change { return []*providers.Change{removeFrom(s, "huge", 10)} },
			want:    want{refused: true, removed: 10, group: "cn=huge"}},
		{name: "a share of 1 is no limit", g: oneShare, st: st44,
			changes: func(s *providers.State) []*providers.Change {
				return []*providers.Change{removeFrom(s, "big", 40), removeFrom(s, "small", 4)}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st()
			err := tc.g.Check("ou", st, tc.changes(st))
			ge := guardErr(t, err)
			if (ge != nil) != tc.want.refused {
				t.Fatalf("refused = %v (%v), want %v", ge != nil, err, tc.want.refused)
			}
			if ge == nil {
				return
			}
			if ge.Removed != tc.want.removed || ge.Deleted != tc.want.deleted || ge.Group != tc.want.group {
				t.Errorf("removed %d deleted %d group %q, want %d %d %q", ge.Removed, ge.Deleted, ge.Group,
					tc.want.removed, tc.want.deleted, tc.want.group)
			}
			if ge.OU != "ou" || ge.MaxDeleted != tc.g.MaxDeletedGroups || ge.MaxShare != tc.g.MaxRemovalShare {
				t.Errorf("limits reported: %+v", ge)
			}
			if !strings.Contains(ge.Error(), tc.want.msg) || !strings.HasPrefix(ge.Error(), "removal guard refused the plan for ou: ") {
				t.Errorf("message %q does not contain %q", ge.Error(), tc.want.msg)
			}
		})
	}
}

func TestGuardErrorDetails(t *testing.T) {
	t.Run("share and totals", func(t *testing.T) {
		st := groups(map[string]int{"big": 40, "small": 4})
		ge := guardErr(t, Default().Check("ou", st, []*providers.Change{removeFrom(st, "big", 22)}))
		if ge == nil || ge.Total != 44 || ge.Share != 0.5 || ge.Removed != 22 {
			t.Fatalf("%+v", ge)
		}
	})
	t.Run("deleting empty groups reports a zero share", func(t *testing.T) {
		sizes := map[string]int{}
		var names []string
		for i := range 11 {
			n := fmt.Sprintf("e%02d", i)
			sizes[n] = 0
			names = append(names, n)
		}
		st := groups(sizes)
		var ch []*providers.Change
		for _, n := range names {
			ch = append(ch, deleteOf(st, n))
		}
		ge := guardErr(t, Default().Check("ou", st, ch))
		if ge == nil || ge.Total != 0 || ge.Share != 0 || math.IsNaN(ge.Share) {
			t.Fatalf("%+v", ge)
		}
	})
	t.Run("per-group figures", func(t *testing.T) {
		st := groups(map[string]int{"huge": 200, "g": 19})
		ge := guardErr(t, Default().Check("ou", st, []*providers.Change{removeFrom(st, "g", 12)}))
		if ge == nil || ge.Group != "cn=g" || ge.GroupRemoved != 12 || ge.GroupTotal != 19 || ge.MaxGroupShare != 0.5 {
			t.Fatalf("%+v", ge)
		}
	})
	t.Run("worst: the five biggest losses, biggest first, deletions marked", func(t *testing.T) {
		sizes := map[string]int{"base": 10}
		for i := 1; i <= 7; i++ {
			sizes[fmt.Sprintf("g%d", i)] = 10
		}
		st := groups(sizes)
		ch := []*providers.Change{deleteOf(st, "base")} // -10
		for i := 1; i <= 7; i++ {
			ch = append(ch, removeFrom(st, fmt.Sprintf("g%d", i), i))
		}
		// An update that only adds is no loss.
		ch = append(ch, &providers.Change{Kind: providers.UpdateGroup, DN: "cn=add", Add: []string{"x"}})
		ge := guardErr(t, Guard{MaxRemovalShare: 0.1, MinRemovals: 1, MaxDeletedGroups: -1, MaxGroupRemovalShare: -1}.Check("ou", st, ch))
		if ge == nil {
			t.Fatal("not refused")
		}
		want := []string{"cn=base (deleted) -10", "cn=g7 -7", "cn=g6 -6", "cn=g5 -5", "cn=g4 -4"}
		if !slices.Equal(ge.Worst, want) {
			t.Errorf("worst = %q, want %q", ge.Worst, want)
		}
		// The library names no CLI flag (issue 10: the CLI adds the flag of ge.Limit).
		if !strings.HasSuffix(ge.Error(), "; worst: "+strings.Join(want, ", ")) || strings.Contains(ge.Error(), "--") {
			t.Errorf("message: %s", ge.Error())
		}
	})
}

func TestGuardPeopleBoundaries(t *testing.T) {
	// person changes: each person loses `lose` of the values they hold.
	person := func(name string, hold, lose int) *providers.Change {
		old := uids("cn=v", hold)
		return &providers.Change{Kind: providers.UpdatePerson, Person: name, Attribute: "memberof", OldValues: old, Values: slices.Clone(old[lose:])}
	}
	spread := func(n int) []*providers.Change { // n people losing one value each
		var out []*providers.Change
		for i := range n {
			out = append(out, person(fmt.Sprintf("p%02d", i), 1, 1))
		}
		return out
	}
	zero := Default()
	zero.MaxRemovalShare = 0
	for _, tc := range []struct {
		name    string
		g       Guard
		total   int
		changes []*providers.Change
		removed int // 0: not refused
	}{
		{"exactly 25% (11 of 44) passes", Default(), 44, spread(11), 0},
		{"12 of 44 is refused", Default(), 44, spread(12), 12},
		{"exactly MinRemovals over the limit is refused", Default(), 20, spread(10), 10},
		{"one under MinRemovals passes", Default(), 9, spread(9), 0},
		{"MaxRemovalShare 0: no removals", zero, 1000, spread(10), 10},
		{"MaxRemovalShare 0 lets fewer than MinRemovals through", zero, 1000, spread(9), 0},
		{"negative share: no limit", Guard{MaxRemovalShare: -1, MinRemovals: 10}, 20, spread(20), 0},
		{"share of 1: no limit", Guard{MaxRemovalShare: 1, MinRemovals: 10}, 20, spread(20), 0},
		{"MinRemovals 0 and nothing removed passes", Guard{MaxRemovalShare: 0, MinRemovals: 0}, 20,
			[]*providers.Change{{Kind: providers.UpdatePerson, Person: "x", OldValues: []string{"cn=a"}, Values: []string{"cn=a", "cn=b"}}}, 0},
		{"values compare as normalised DNs", Guard{MaxRemovalShare: 0, MinRemovals: 1}, 20,
			[]*providers.Change{{Kind: providers.UpdatePerson, Person: "x", OldValues: []string{"CN=a, OU=Apps"}, Values: []string{"cn=a,ou=apps"}}}, 0},
		{"losses of several values by one person add up", Default(), 44,
			[]*providers.Change{person("a", 6, 6), person("b", 6, 6)}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ge := guardErr(t, tc.g.CheckPeople("shell", tc.total, tc.changes))
			if (ge != nil) != (tc.removed > 0) {
				t.Fatalf("refused = %v (%v), want %v", ge != nil, ge, tc.removed > 0)
			}
			if ge == nil {
				return
			}
			if ge.Removed != tc.removed || ge.Total != tc.total || ge.MaxDeleted != -1 || ge.Deleted != 0 ||
				ge.MaxShare != tc.g.MaxRemovalShare || ge.Share != float64(tc.removed)/float64(tc.total) || ge.OU != "shell" {
				t.Errorf("%+v", ge)
			}
			if !strings.Contains(ge.Error(), fmt.Sprintf("it removes %d of %d memberships", tc.removed, tc.total)) {
				t.Errorf("message: %s", ge.Error())
			}
		})
	}
	t.Run("worst people", func(t *testing.T) {
		ch := []*providers.Change{person("keeps", 3, 0)}
		for i := 1; i <= 7; i++ {
			ch = append(ch, person(fmt.Sprintf("p%d", i), 8, i))
		}
		ge := guardErr(t, Default().CheckPeople("shell", 60, ch))
		if ge == nil {
			t.Fatal("not refused")
		}
		want := []string{"p7 -7", "p6 -6", "p5 -5", "p4 -4", "p3 -3"}
		if !slices.Equal(ge.Worst, want) {
			t.Errorf("worst = %q, want %q", ge.Worst, want)
		}
	})
}

// Changes that remove nobody are not losses: they never appear in the refusal's worst list.
func TestGuardWorstListsOnlyLosses(t *testing.T) {
	st := groups(map[string]int{"big": 40, "small": 4})
	addOnly := &providers.Change{Kind: providers.UpdateGroup, DN: "cn=small", Current: st.Groups["cn=small"], Add: []string{"new"}}
	ge := guardErr(t, Default().Check("ou", st, []*providers.Change{removeFrom(st, "big", 12), addOnly}))
	if ge == nil || !slices.Equal(ge.Worst, []string{"cn=big -12"}) {
		t.Errorf("worst: %+v", ge)
	}
	keeps := &providers.Change{Kind: providers.UpdatePerson, Person: "keeps", OldValues: []string{"cn=a"}, Values: []string{"cn=a", "cn=b"}}
	var ch []*providers.Change
	for i := range 10 {
		ch = append(ch, &providers.Change{Kind: providers.UpdatePerson, Person: fmt.Sprintf("p%d", i), OldValues: []string{"cn=a"}})
	}
	ge = guardErr(t, Default().CheckPeople("shell", 20, append([]*providers.Change{keeps}, ch[:2]...)))
	if ge != nil {
		t.Fatalf("2 removals refused: %v", ge)
	}
	ge = guardErr(t, Guard{MaxRemovalShare: 0.25, MinRemovals: 1}.CheckPeople("shell", 4, append([]*providers.Change{keeps}, ch[:2]...)))
	if ge == nil || !slices.Equal(ge.Worst, []string{"p0 -1", "p1 -1"}) && !slices.Equal(ge.Worst, []string{"p1 -1", "p0 -1"}) {
		t.Errorf("worst: %+v", ge)
	}
}
