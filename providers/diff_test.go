package providers

import (
	"reflect"
	"slices"
	"testing"
)

func state(gs ...*Group) *State {
	st := &State{Groups: map[string]*Group{}}
	for _, g := range gs {
		st.Groups[Key(g.DN)] = g
	}
	return st
}

func TestDiff(t *testing.T) {
	type want struct {
		kind   ChangeKind
		dn     string
		add    []string
		remove []string
		desc   bool
		attrs  []string
	}
	for _, tc := range []struct {
		name    string
		desired []*Group
		current *State
		opt     DiffOptions
		want    []want
	}{
		{name: "create", desired: []*Group{{DN: "cn=a,ou=x", Members: []string{"bob", "Al"}}}, current: state(),
			want: []want{{kind: CreateGroup, dn: "cn=a,ou=x", add: []string{"Al", "bob"}}}},
		{name: "no change, DN and member case differ", desired: []*Group{{DN: "cn=a,ou=X", Members: []string{"Bob"}, Description: "d"}},
			current: state(&Group{DN: "CN=a, ou=x", Members: []string{"bob"}, Description: "d"})},
		{name: "members added and removed", desired: []*Group{{DN: "cn=a", Members: []string{"bob", "carol"}}},
			current: state(&Group{DN: "cn=a", Members: []string{"alice", "bob"}}),
			want:    []want{{kind: UpdateGroup, dn: "cn=a", add: []string{"carol"}, remove: []string{"alice"}}}},
		{name: "description only", desired: []*Group{{DN: "cn=a", Description: "new"}},
			current: state(&Group{DN: "cn=a", Description: "old"}),
			want:    []want{{kind: UpdateGroup, dn: "cn=a", desc: true}}},
		{name: "description ignored", desired: []*Group{{DN: "cn=a", Description: "new"}},
			current: state(&Group{DN: "cn=a", Description: "old"}), opt: DiffOptions{IgnoreDescription: true}},
		{name: "attrs compared as case-insensitive sets", desired: []*Group{{DN: "cn=a", Attrs: map[string][]string{"objectclass": {"groupOfNames"}, "gidnumber": {"1"}}}},
			current: state(&Group{DN: "cn=a", Attrs: map[string][]string{"objectclass": {"GROUPOFNAMES"}, "gidnumber": {"2"}}}),
			want:    []want{{kind: UpdateGroup, dn: "cn=a", attrs: []string{"gidnumber"}}}},
		{name: "deletes only when allowed", desired: nil, current: state(&Group{DN: "cn=old", Members: []string{"x"}})},
		{name: "delete", desired: nil, current: state(&Group{DN: "cn=old", Members: []string{"x"}}), opt: DiffOptions{DeleteGroups: true},
			want: []want{{kind: DeleteGroup, dn: "cn=old", remove: []string{"x"}}}},
		{name: "order: container, creates, updates, deletes", opt: DiffOptions{DeleteGroups: true},
			desired: []*Group{{DN: "cn=b", Members: []string{"x"}}, {DN: "cn=a"}},
			current: &State{ContainerMissing: true, Groups: map[string]*Group{"cn=b": {DN: "cn=b"}, "cn=c": {DN: "cn=c"}}},
			want: []want{{kind: CreateContainer}, {kind: CreateGroup, dn: "cn=a"}, {kind: UpdateGroup, dn: "cn=b", add: []string{"x"}},
				{kind: DeleteGroup, dn: "cn=c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff("ou", tc.desired, tc.current, tc.opt)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d changes %v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				c := got[i]
				if c.Kind != w.kind || c.DN != w.dn || !reflect.DeepEqual(c.Add, w.add) || !reflect.DeepEqual(c.Remove, w.remove) ||
					c.DescriptionChanged != w.desc || !reflect.DeepEqual(c.AttrsChanged, w.attrs) {
					t.Errorf("change %d = %+v, want %+v", i, c, w)
				}
			}
		})
	}
}

func TestChangeString(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Change
		want string
	}{
		{"members", Change{Kind: UpdateGroup, OU: "t", DN: "cn=a", Add: []string{"x", "y"}, Remove: []string{"z"}}, "CHANGE cn=a in t (+2 -1)"},
		{"description only", Change{Kind: UpdateGroup, OU: "t", DN: "cn=a", DescriptionChanged: true}, "CHANGE cn=a in t (description)"},
		{"attributes only", Change{Kind: UpdateGroup, OU: "t", DN: "cn=a", AttrsChanged: []string{"gidnumber"}}, "CHANGE cn=a in t (gidnumber)"},
		{"members and description", Change{Kind: UpdateGroup, OU: "t", DN: "cn=a", Add: []string{"x"}, DescriptionChanged: true}, "CHANGE cn=a in t (+1 -0, description)"},
		{"create", Change{Kind: CreateGroup, OU: "t", DN: "cn=a", Add: []string{"x"}}, "ADD cn=a to t (Members: x)"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The member comparison of the diff is case-insensitive on both sides: a current member
// spelled differently from the desired one is neither removed nor added.
func TestDiffMemberCase(t *testing.T) {
	cur := &State{Groups: map[string]*Group{"cn=a": {DN: "cn=a", Members: []string{"Alice", "bob", "Dave"}}}}
	desired := []*Group{{DN: "cn=a", Members: []string{"alice", "BOB", "Carol"}}}
	got := Diff("ou", desired, cur, DiffOptions{})
	if len(got) != 1 {
		t.Fatalf("changes %v", got)
	}
	if c := got[0]; !slices.Equal(c.Add, []string{"Carol"}) || !slices.Equal(c.Remove, []string{"Dave"}) {
		t.Errorf("add %q remove %q, want [Carol] [Dave]", c.Add, c.Remove)
	}
}
