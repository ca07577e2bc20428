package guard

import (
	"reflect"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/providers"
)

// Unit tests of the run-wide guards and their counters (CheckTotal, CheckPeopleLoss,
// Removals, PeopleRemovals), written from mutation testing (issue 15): deploy's tests reach
// them, gremlins runs only this package's.

func TestCheckTotalEdges(t *testing.T) {
	g := Default()
	// Exactly MinRemovals over the share is refused.
	if ge := g.CheckTotal([]TargetRemovals{{OU: "a", Removed: 10, Total: 10}}); ge == nil {
		t.Error("10 of 10 (MinRemovals) passed")
	}
	// The error: every field, the worst targets by removals (stable, at most 5, none that
	// removes nothing).
	parts := []TargetRemovals{{"a", 1, 10}, {"b", 30, 40}, {"c", 0, 50}, {"d", 5, 10}, {"e", 5, 10}, {"f", 2, 10}, {"g", 3, 10}, {"h", 4, 10}}
	ge := g.CheckTotal(parts)
	want := &Error{Limit: LimitTotal, Removed: 50, Total: 150, Share: 50.0 / 150, MaxShare: 0.25, MaxDeleted: -1,
		Worst: []string{"b -30", "d -5", "e -5", "h -4", "g -3"}}
	if !reflect.DeepEqual(ge, want) {
		t.Errorf("CheckTotal =\n%+v, want\n%+v", ge, want)
	}
	few := g.CheckTotal([]TargetRemovals{{"a", 0, 5}, {"b", 12, 12}})
	if few == nil || !reflect.DeepEqual(few.Worst, []string{"b -12"}) {
		t.Errorf("worst of one remover: %+v", few)
	}
	if ge != nil {
		msg := ge.Error()
		for _, s := range []string{"removes 50 of 150 memberships", "(33%, limit 25%)", "most: b -30, d -5"} {
			if !strings.Contains(msg, s) {
				t.Errorf("message %q lacks %q", msg, s)
			}
		}
	}
}

func TestCheckPeopleLoss(t *testing.T) {
	for _, tc := range []struct {
		name          string
		guard         func(*Guard)
		current, lost int
		refused       bool
	}{
		{name: "nobody lost", current: 100},
		{name: "nobody now", current: 0},
		{name: "at the share", current: 100, lost: 25},
		{name: "just over", current: 100, lost: 26, refused: true},
		{name: "under the minimum", current: 9, lost: 9},
		{name: "at the minimum", current: 10, lost: 10, refused: true},
		{name: "follows MaxRemovalShare", guard: func(g *Guard) { g.MaxRemovalShare = 0.5 }, current: 100, lost: 40},
		{name: "own limit", guard: func(g *Guard) { g.MaxRemovalShare = 1; g.MaxPeopleLossShare = 0.1 }, current: 100, lost: 11, refused: true},
		{name: "own limit, under", guard: func(g *Guard) { g.MaxPeopleLossShare = 0.5 }, current: 100, lost: 40},
		{name: "off", guard: func(g *Guard) { g.MaxPeopleLossShare = -1 }, current: 10, lost: 10},
	} {
		g := Default()
		if tc.guard != nil {
			tc.guard(&g)
		}
		ex := []string{"alice", "bob"}
		ge := g.CheckPeopleLoss(tc.current, tc.lost, ex)
		if (ge != nil) != tc.refused {
			t.Errorf("%s: %v, want refused=%v", tc.name, ge, tc.refused)
			continue
		}
		if ge == nil {
			continue
		}
		max := g.MaxPeopleLossShare
		if max == 0 {
			max = g.MaxRemovalShare
		}
		want := &Error{Limit: LimitPeople, Removed: tc.lost, Total: tc.current, Share: float64(tc.lost) / float64(tc.current),
			MaxShare: max, MaxDeleted: -1, Worst: ex}
		if !reflect.DeepEqual(ge, want) {
			t.Errorf("%s:\n%+v, want\n%+v", tc.name, ge, want)
		}
	}
	ge := Default().CheckPeopleLoss(100, 50, []string{"alice"})
	if msg := ge.Error(); !strings.Contains(msg, "50 of the 100 people") || !strings.Contains(msg, "(50%, limit 25%)") || !strings.Contains(msg, "example: alice") {
		t.Errorf("message %q", msg)
	}
}

func TestRemovals(t *testing.T) {
	st := groups(map[string]int{"a": 3, "b": 4})
	changes := []*providers.Change{
		{Kind: providers.UpdateGroup, Remove: []string{"x", "y"}, Add: []string{"z"}},
		{Kind: providers.DeleteGroup, Remove: []string{"p", "q", "r"}},
		{Kind: providers.CreateGroup, Add: []string{"n"}},
		{Kind: providers.CreateContainer},
	}
	if r, tot := Removals(st, changes); r != 5 || tot != 7 {
		t.Errorf("Removals = %d of %d, want 5 of 7", r, tot)
	}
	if r, tot := Removals(nil, changes); r != 5 || tot != 0 {
		t.Errorf("Removals(nil state) = %d of %d, want 5 of 0", r, tot)
	}
	people := []*providers.Change{
		{Kind: providers.UpdatePerson, Person: "alice", OldValues: []string{"cn=A,ou=G", "cn=b,ou=G", "cn=c,ou=G"}, Values: []string{"CN=a,OU=g"}},
		{Kind: providers.UpdatePerson, Person: "bob", OldValues: []string{"cn=a,ou=G"}},
		{Kind: providers.UpdatePerson, Person: "carol", Values: []string{"cn=a,ou=G"}},
	}
	if n := PeopleRemovals(people); n != 3 {
		t.Errorf("PeopleRemovals = %d, want 3 (b and c of alice, a of bob; another spelling is kept)", n)
	}
}
