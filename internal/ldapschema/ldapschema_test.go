package ldapschema

import "testing"

func TestLegacyClassPriority(t *testing.T) {
	for _, tc := range []struct {
		classes    []string
		want, attr string
	}{
		{[]string{"top", "groupOfUniqueNames"}, GroupOfUniqueNames, "uniqueMember"},
		{[]string{"POSIXGROUP", "groupofnames"}, GroupOfNames, "member"},
		{[]string{"posixGroup", "groupOfNames", "groupOfUniqueNames"}, GroupOfUniqueNames, "uniqueMember"},
		{[]string{"top", "posixGroup"}, PosixGroup, "memberUid"},
		{[]string{"top", "group"}, "", ""},
		{nil, "", ""},
	} {
		got := LegacyClass(tc.classes)
		if got != tc.want {
			t.Errorf("LegacyClass(%v) = %q, want %q", tc.classes, got, tc.want)
		}
		if got != "" && MemberAttr(got) != tc.attr {
			t.Errorf("MemberAttr(%q) = %q, want %q", got, MemberAttr(got), tc.attr)
		}
	}
	if MemberAttr(Group) != "member" {
		t.Errorf("MemberAttr(group) = %q", MemberAttr(Group))
	}
}
