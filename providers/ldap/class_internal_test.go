package ldap

import (
	"strings"
	"testing"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/config"
)

func TestOUGroupSpec(t *testing.T) {
	for _, tc := range []struct {
		settings         string
		class, groupType string
		err              string
	}{
		{"{}", classUnique, "", ""},
		{"{plugin: {file: x.rb, class: GroupOfNames}}", classNames, "", ""},
		{"{plugin: {file: x.rb, class: PosixGroup}}", classPosix, "", ""},
		{"{plugin: {file: x.rb, class: Dummy}}", classUnique, "", ""},
		{"{object_class: groupofnames}", classNames, "", ""},
		{"{object_class: groupOfNames, plugin: {file: x.rb, class: GroupOfNames}}", classNames, "", ""},
		{"{object_class: group, plugin: {file: x.rb, class: PosixGroup}}", "", "", "choose different object classes"},
		// AD's groupType: scope bits 2, 4, 8; security adds 0x80000000 (signed 32 bits).
		{"{object_class: group}", classAD, "-2147483646", ""},
		{"{object_class: group, group_scope: domain_local}", classAD, "-2147483644", ""},
		{"{object_class: group, group_scope: Universal, group_category: security}", classAD, "-2147483640", ""},
		{"{object_class: group, group_category: distribution}", classAD, "2", ""},
		{"{object_class: group, group_scope: domain_local, group_category: distribution}", classAD, "4", ""},
		{"{object_class: group, group_scope: universal, group_category: distribution}", classAD, "8", ""},
		{"{object_class: group, group_scope: local}", "", "", `group_scope "local"`},
		{"{object_class: group, group_category: mail}", "", "", `group_category "mail"`},
		{"{group_scope: global}", "", "", "apply to object_class: group"},
		{"{object_class: posixGroup, group_category: security}", "", "", "apply to object_class: group"},
		{"{object_class: organizationalUnit}", "", "", `object_class "organizationalUnit"`},
	} {
		v, err := config.ParseValue(tc.settings)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := ouGroupSpec(v)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.settings, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.settings, err)
		case spec.class != tc.class || spec.groupType != tc.groupType:
			t.Errorf("%s: %+v, want class %s, groupType %q", tc.settings, spec, tc.class, tc.groupType)
		}
	}
}

func TestEntryClass(t *testing.T) {
	entry := func(classes ...string) *goldap.Entry {
		return goldap.NewEntry("cn=x", map[string][]string{"objectClass": classes})
	}
	for _, tc := range []struct {
		ou      string
		classes []string
		want    string
	}{
		{classUnique, []string{"top", "groupOfUniqueNames"}, classUnique},
		// The reference's priority, whatever the server's order; any of the three is read.
		{classUnique, []string{"posixGroup", "groupOfNames"}, classNames},
		{classPosix, []string{"GROUPOFUNIQUENAMES"}, classUnique},
		{classUnique, []string{"top", "group"}, ""},
		{classUnique, []string{"group", "posixGroup"}, ""},
		{classUnique, []string{"top", "organizationalRole"}, ""},
		{classAD, []string{"top", "group"}, classAD},
		{classAD, []string{"top", "groupOfNames"}, ""},
		{classAD, []string{"top", "person", "organizationalPerson", "contact"}, ""},
	} {
		if got := (groupSpec{class: tc.ou}).entryClass(entry(tc.classes...)); got != tc.want {
			t.Errorf("OU of %s, entry %v: %q, want %q", tc.ou, tc.classes, got, tc.want)
		}
	}
}

func TestSAMAccountName(t *testing.T) {
	for _, tc := range []struct{ cn, want, err string }{
		{"ops", "ops", ""},
		{"Ops-Team_2", "Ops-Team_2", ""},
		{`a"b/c\d[e]f:g;h|i=j,k+l*m?n<o>p@q`, "a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p_q", ""},
		{"tab\there", "tab_here", ""},
		{"trailing...", "trailing", ""},
		{" spaced ", "spaced", ""},
		{"...", "", "leaves no sAMAccountName"},
		{strings.Repeat("é", 256), strings.Repeat("é", 256), ""},
		{strings.Repeat("x", 257), "", "at most 256"},
	} {
		got, err := samAccountName(tc.cn)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q, %v; want an error containing %q", tc.cn, got, err, tc.err)
			}
		case err != nil || got != tc.want:
			t.Errorf("%q: %q, %v; want %q", tc.cn, got, err, tc.want)
		}
	}
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		attr, name, start, end string
		ok                     bool
	}{
		{"member;range=0-1499", "member", "0", "1499", true},
		{"member;range=1500-*", "member", "1500", "*", true},
		{"Member;Range=0-9", "Member", "0", "9", true},
		{"member", "", "", "", false},
		{"member;range=0", "", "", "", false},
		{"member;range=-5", "", "", "", false},
	} {
		name, start, end, ok := parseRange(tc.attr)
		if ok != tc.ok || (ok && (name != tc.name || start != tc.start || end != tc.end)) {
			t.Errorf("parseRange(%q) = %q %q %q %v", tc.attr, name, start, end, ok)
		}
	}
	if !hasRanges(goldap.NewEntry("cn=x", map[string][]string{"Member;Range=0-1": {"a"}})) || hasRanges(goldap.NewEntry("cn=x", map[string][]string{"member": {"a"}})) {
		t.Error("hasRanges")
	}
}
