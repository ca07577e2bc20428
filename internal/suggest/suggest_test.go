package suggest

import (
	"slices"
	"testing"
)

// The calculator's tests (calc/suggest_test.go) cover Closest and EditDistance in depth,
// against brute force; this checks the package on its own.
func TestClosest(t *testing.T) {
	keys := []string{"base", "person_dn_format", "person_base", "group_scope", "group_category", "create_if_missing"}
	for _, tc := range []struct{ word, want string }{
		{"group_scpoe", "group_scope"},
		{"GROUP_SCOPE_", "group_scope"},
		{"persn_base", "person_base"},
		{"bsae", "base"},
		{"base", ""},
		{"owner", ""},
	} {
		if got := Closest(tc.word, slices.Values(keys)); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	var buf [3][]int
	if d := EditDistance("kitten", "sitting", 10, &buf); d != 3 {
		t.Errorf("EditDistance(kitten, sitting) = %d, want 3", d)
	}
}
