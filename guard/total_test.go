package guard

import "testing"

func TestCheckTotal(t *testing.T) {
	six := func(removed, total int) []TargetRemovals {
		var out []TargetRemovals
		for range 6 {
			out = append(out, TargetRemovals{OU: "t", Removed: removed, Total: total})
		}
		return out
	}
	cases := []struct {
		name    string
		guard   func(*Guard)
		parts   []TargetRemovals
		refused bool
	}{
		{name: "six small targets emptied", parts: six(9, 9), refused: true},
		{name: "under the share", parts: six(2, 9)},
		{name: "at the share", parts: []TargetRemovals{{Removed: 25, Total: 100}}},
		{name: "just over the share", parts: []TargetRemovals{{Removed: 26, Total: 100}}, refused: true},
		{name: "under the minimum", parts: []TargetRemovals{{Removed: 9, Total: 9}}},
		{name: "nothing current", parts: six(0, 0)},
		{name: "follows MaxRemovalShare", guard: func(g *Guard) { g.MaxRemovalShare = 1 }, parts: six(9, 9)},
		{name: "own limit", guard: func(g *Guard) { g.MaxRemovalShare = 1; g.MaxTotalRemovalShare = 0.5 }, parts: six(9, 9), refused: true},
		{name: "off", guard: func(g *Guard) { g.MaxTotalRemovalShare = -1 }, parts: six(9, 9)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Default()
			if c.guard != nil {
				c.guard(&g)
			}
			ge := g.CheckTotal(c.parts)
			if (ge != nil) != c.refused {
				t.Fatalf("CheckTotal = %v, want refused=%v", ge, c.refused)
			}
			if ge != nil && ge.Limit != LimitTotal {
				t.Errorf("limit %s", ge.Limit)
			}
		})
	}
}
