// Package dn normalises and splits LDAP distinguished names. DNs from config files and from
// servers differ in letter case and spacing; comparing them raw makes a group look both
// deleted and added (the reference's Q-11 hazard), so every comparison goes through Normalize.
package dn

import "strings"

// Normalize lower-cases attribute types and values and trims the blanks around separators.
// Escaped separators (`\,`) are kept as they are.
func Normalize(s string) string {
	rdns := Split(s)
	for i, r := range rdns {
		typ, val, ok := strings.Cut(r, "=")
		if !ok {
			rdns[i] = strings.ToLower(strings.TrimSpace(r))
			continue
		}
		rdns[i] = strings.ToLower(strings.TrimSpace(typ)) + "=" + strings.ToLower(strings.TrimSpace(val))
	}
	return strings.Join(rdns, ",")
}

// Split splits a DN into its RDNs on unescaped commas.
func Split(s string) []string {
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

// FirstValue returns the value of the first RDN (`uid=bob,ou=People` → `bob`). A string that is
// not of the form `attr=value,rest` is returned whole, as the reference does.
func FirstValue(s string) string {
	first, _, ok := strings.Cut(s, ",")
	if !ok {
		return s
	}
	_, val, ok := strings.Cut(first, "=")
	if !ok {
		return s
	}
	return strings.TrimSpace(val)
}

// EscapeValue escapes a string for use as an RDN value (RFC 4514).
func EscapeValue(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == ',' || c == '+' || c == '"' || c == '\\' || c == '<' || c == '>' || c == ';' || c == '=':
			b.WriteByte('\\')
			b.WriteByte(c)
		case (c == ' ' || c == '#') && i == 0, c == ' ' && i == len(v)-1:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == 0:
			b.WriteString(`\00`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
