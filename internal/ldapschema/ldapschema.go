// Package ldapschema is the one statement of how the reference stores groups in LDAP: which
// object classes it knows and which attribute holds each one's members. The calculator
// (ldap_group rules) and the LDAP provider both read groups through it, so the two cannot
// disagree on what a group's members are.
package ldapschema

import (
	"slices"
	"strings"
)

// The object classes of groups. The reference knows the first three (chosen by an OU's
// plugin); Group is Active Directory's, which the LDAP provider writes with object_class.
const (
	GroupOfUniqueNames = "groupOfUniqueNames"
	GroupOfNames       = "groupOfNames"
	PosixGroup         = "posixGroup"
	Group              = "group"
)

// legacy is the reference's classes in its priority order, with their member attributes.
var legacy = [...][2]string{{GroupOfUniqueNames, "uniqueMember"}, {GroupOfNames, "member"}, {PosixGroup, "memberUid"}}

// MemberAttr is the attribute that holds the members of a group of class c.
func MemberAttr(c string) string {
	switch c {
	case GroupOfNames, Group:
		return "member"
	case PosixGroup:
		return "memberUid"
	}
	return "uniqueMember"
}

// Has reports whether classes (as a server lists them, in any case) contains c.
func Has(classes []string, c string) bool {
	return slices.ContainsFunc(classes, func(oc string) bool { return strings.EqualFold(oc, c) })
}

// LegacyClass is the class by which the reference reads an entry with these object classes:
// the first of groupOfUniqueNames, groupOfNames and posixGroup it has, in that order whatever
// order the server lists them in (rfc2307bis groups are both posixGroup and groupOfNames).
// "" when it has none of them.
func LegacyClass(classes []string) string {
	for _, c := range legacy {
		if Has(classes, c[0]) {
			return c[0]
		}
	}
	return ""
}
