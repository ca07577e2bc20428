package providers

import (
	"fmt"
	"testing"
)

// The write log and the plan output are read by people deciding whether to apply: what each
// change says is part of the contract.
func TestChangeDescribe(t *testing.T) {
	n := func(k int) []string {
		out := make([]string, k)
		for i := range out {
			out[i] = fmt.Sprintf("u%d", i)
		}
		return out
	}
	for _, tc := range []struct {
		c        *Change
		str, log string
	}{
		{&Change{Kind: CreateGroup, OU: "o", DN: "cn=a", Add: []string{"x", "y"}},
			"ADD cn=a to o (Members: x,y)", "ADD cn=a to o (Members: x,y)"},
		{&Change{Kind: CreateGroup, OU: "o", DN: "cn=a", Add: n(20)},
			"", "ADD cn=a to o (Members: u0,u1,u2,u3,u4,u5,u6,u7,u8,u9,u10,u11,u12,u13,u14,u15,u16,u17,u18,u19)"},
		{&Change{Kind: CreateGroup, OU: "o", DN: "cn=a", Add: n(21)},
			"", "ADD cn=a to o (Members: u0,u1,u2,u3,u4,u5,u6,u7,u8,u9,u10,u11,u12,u13,u14,u15,u16,u17,u18,u19,... (21 in all))"},
		{&Change{Kind: UpdateGroup, OU: "o", DN: "cn=a", Add: []string{"x"}, Remove: []string{"y", "z"}, DescriptionChanged: true, AttrsChanged: []string{"gidnumber", "objectclass"}},
			"CHANGE cn=a in o (+1 -2, description, gidnumber, objectclass)", "CHANGE cn=a in o +x -y,z description gidnumber objectclass"},
		{&Change{Kind: UpdateGroup, OU: "o", DN: "cn=a"}, "CHANGE cn=a in o", "CHANGE cn=a in o"},
		{&Change{Kind: DeleteGroup, OU: "o", DN: "cn=a", Remove: []string{"x"}}, "DELETE cn=a from o", "DELETE cn=a from o"},
		{&Change{Kind: CreateContainer, OU: "o", DN: "ou=o"}, "ADD ou=o", "ADD ou=o"},
		{&Change{Kind: UpdatePerson, OU: "m", Person: "bob", Attribute: "shell", Values: []string{"cn=a", "cn=b"}},
			"CHANGE person bob attribute shell", "CHANGE person bob attribute shell: cn=a,cn=b"},
	} {
		if tc.str != "" && tc.c.String() != tc.str {
			t.Errorf("String() = %q, want %q", tc.c.String(), tc.str)
		}
		if got := tc.c.Describe(); got != tc.log {
			t.Errorf("Describe() = %q, want %q", got, tc.log)
		}
	}
}

func TestStatusAndKindNames(t *testing.T) {
	for _, tc := range []struct {
		s           Status
		name        string
		ok, failure bool
	}{
		{Applied, "applied", true, false},
		{AlreadyInState, "already-in-state", true, false},
		{Skipped, "skipped", false, false},
		{Failed, "failed", false, true},
		{Unknown, "unknown", false, true},
	} {
		if tc.s.String() != tc.name || tc.s.OK() != tc.ok || tc.s.Failure() != tc.failure {
			t.Errorf("%d: %q ok=%v failure=%v", tc.s, tc.s, tc.s.OK(), tc.s.Failure())
		}
	}
	for k, name := range map[ChangeKind]string{CreateContainer: "create-container", CreateGroup: "create", UpdateGroup: "update",
		DeleteGroup: "delete", UpdatePerson: "update-person"} {
		if k.String() != name {
			t.Errorf("%d: %q", k, k)
		}
	}
}

func TestSameFoldAndKey(t *testing.T) {
	for _, tc := range []struct {
		a, b []string
		want bool
	}{
		{[]string{"A", "b"}, []string{"B", "a"}, true},
		{[]string{"a"}, []string{"a", "a"}, false},
		{[]string{"a", "a"}, []string{"a", "b"}, false},
		{nil, []string{}, true},
		{[]string{"a"}, []string{"b"}, false},
	} {
		if got := SameFold(tc.a, tc.b); got != tc.want {
			t.Errorf("SameFold(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
	if Key("CN=A, OU=X") != Key("cn=a,ou=x") {
		t.Error("Key does not normalise")
	}
}

// Diff output is sorted by kind, then DN case-insensitively; duplicate desired members
// collapse; the container change comes first.
func TestDiffOrderAndDuplicates(t *testing.T) {
	cur := &State{Groups: map[string]*Group{
		Key("cn=Z"): {DN: "cn=Z", Members: []string{"x"}},
		Key("cn=b"): {DN: "cn=b", Members: []string{"x"}},
	}}
	desired := []*Group{{DN: "cn=b", Members: []string{"y", "y", "x"}}, {DN: "cn=a", Members: []string{"m", "m"}}, {DN: "cn=C"}}
	got := Diff("o", desired, cur, DiffOptions{DeleteGroups: true})
	var desc []string
	for _, c := range got {
		desc = append(desc, c.Describe())
	}
	want := []string{"ADD cn=a to o (Members: m)", "ADD cn=C to o (Members: )", "CHANGE cn=b in o +y", "DELETE cn=Z from o"}
	if fmt.Sprint(desc) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", desc, want)
	}
}
