package cache

import (
	"slices"
	"strings"
)

// The audit log stores a group at its DN's RDNs, most general first, as path elements:
// `cn=t,ou=teams,dc=example,dc=com` is `dc=com/dc=example/ou=teams/cn=t`, byte for byte
// what the reference writes. The DN comes from the config or from an LDAP server, and an
// RDN such as `cn=x/../../../tmp/f` must not become several elements, nor `..` leave the
// checkout. An RDN that cannot be a path element as it is is encoded:
//
//   - an element is written as it is unless it is empty, starts with '.' (`.`, `..`, `.git`,
//     names the readers skip) or '%', contains '/', '\' or NUL, or is README.md (skipped by
//     the readers as well);
//   - such an element is written as '%' followed by its bytes with '%', '/', '\' and NUL
//     written as %XX (upper-case hex): `cn=a\,b` is `%cn=a%5C,b`, `..` is `%..`.
//
// An RDN of a valid DN starts with its attribute type, so the elements of ordinary DNs never
// start with '%' and are never encoded. The encoding is one to one, and an element read
// back is decoded only when it is the encoding of what it decodes to; any other name (a file
// pushed by someone, written by an older version) is taken as it is.

// PathFromDN is the audit log path of a group: its RDNs (spacing around them trimmed)
// reversed, each encoded as above, joined with `/`. The result is a local, slash-separated
// relative path (filepath.IsLocal) that DNFromPath turns back into the DN.
func PathFromDN(groupDN string) string {
	rdns := splitRDNs(groupDN)
	for i, r := range rdns {
		rdns[i] = encodeElement(trimRDN(r))
	}
	slices.Reverse(rdns)
	return strings.Join(rdns, "/")
}

// DNFromPath turns an audit log path (`dc=com/ou=teams/cn=t`) into its DN (`cn=t,ou=teams,
// dc=com`). A flat file name (one component) is the DN itself.
func DNFromPath(rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = decodeElement(p)
	}
	slices.Reverse(parts)
	return strings.Join(parts, ",")
}

// FileNameFromDN is the file name of a group in the flat layout of the predictive state:
// the whole DN as one element, encoded as above (ordinary DNs are their own file name).
func FileNameFromDN(groupDN string) string { return encodeElement(groupDN) }

// ordinaryElement reports whether s is written as it is.
func ordinaryElement(s string) bool {
	if s == "" || s[0] == '.' || s[0] == '%' || s == "README.md" {
		return false
	}
	return !strings.ContainsAny(s, "/\\\x00")
}

const hexDigits = "0123456789ABCDEF"

func encodeElement(s string) string {
	if ordinaryElement(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteByte('%')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%', '/', '\\', 0:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// decodeElement inverts encodeElement; a name that is not such an encoding is returned as
// it is.
func decodeElement(s string) string {
	if s == "" || s[0] != '%' {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return s
		}
		hi, lo := strings.IndexByte(hexDigits, s[i+1]), strings.IndexByte(hexDigits, s[i+2])
		if hi < 0 || lo < 0 {
			return s
		}
		b.WriteByte(byte(hi<<4 | lo))
		i += 2
	}
	if d := b.String(); encodeElement(d) == s {
		return d
	}
	return s
}

// splitRDNs splits a DN on its unescaped commas, keeping each RDN as written (the audit log
// path spells the DN as the config does).
func splitRDNs(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// trimRDN removes the spacing around an RDN (`cn=a, ou=b`), keeping an escaped trailing
// space (`cn=a\ `), which is part of the value.
func trimRDN(s string) string {
	s = strings.TrimLeft(s, spaces)
	for n := len(s); n > 0 && strings.IndexByte(spaces, s[n-1]) >= 0; n-- {
		bs := 0
		for j := n - 2; j >= 0 && s[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 1 {
			break
		}
		s = s[:n-1]
	}
	return s
}

const spaces = " \t\n\r\v\f"
