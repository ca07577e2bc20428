package testldap

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"
)

// parseLDIF turns LDIF content records (RFC 2849) into add requests.
//
// A small parser instead of shelling out to ldapadd keeps Add independent of
// ldap-utils and of quoting/escaping through a subprocess, and lets errors
// name the offending record. Supported: comments, line folding (a line
// starting with one space continues the previous one), "attr: value",
// "attr:: base64", "version: 1", and "changetype: add". Other change types
// and "attr:< URL" are rejected rather than silently misapplied.
//
// Because test code usually writes LDIF in indented Go raw strings, a
// leading run of tabs common to all non-blank lines is removed first
// (tabs only, so folded lines' single leading space is never eaten).
func parseLDIF(text string) ([]*ldap.AddRequest, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := dedentTabs(strings.Split(text, "\n"))

	// Unfold and drop comments, keeping blank lines as record separators.
	var logical []string
	inComment := false
	for _, ln := range lines {
		switch {
		case strings.TrimSpace(ln) == "":
			// Whitespace-only lines count as blank: trailing spaces in a Go
			// raw string are invisible and must not glue two records together.
			inComment = false
			logical = append(logical, "")
		case strings.HasPrefix(ln, " "):
			if inComment {
				continue
			}
			if len(logical) == 0 || logical[len(logical)-1] == "" {
				return nil, fmt.Errorf("ldif: continuation line without a preceding line: %q", ln)
			}
			logical[len(logical)-1] += ln[1:]
		case strings.HasPrefix(ln, "#"):
			inComment = true
		default:
			inComment = false
			logical = append(logical, ln)
		}
	}

	var reqs []*ldap.AddRequest
	var rec []string
	flush := func() error {
		if len(rec) == 0 {
			return nil
		}
		defer func() { rec = rec[:0] }()
		if len(rec) == 1 && strings.HasPrefix(strings.ToLower(rec[0]), "version:") {
			return nil // "version: 1" on its own before the first record
		}
		req, err := ldifRecord(rec)
		if err != nil {
			return err
		}
		reqs = append(reqs, req)
		return nil
	}
	for _, ln := range logical {
		if ln == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		rec = append(rec, ln)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return reqs, nil
}

func ldifRecord(lines []string) (*ldap.AddRequest, error) {
	i := 0
	if strings.HasPrefix(strings.ToLower(lines[0]), "version:") {
		i++
	}
	name, dn, err := ldifLine(lines[i])
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(name, "dn") {
		return nil, fmt.Errorf("ldif: record must start with dn:, got %q", lines[i])
	}
	req := ldap.NewAddRequest(dn, nil)
	index := map[string]int{} // lower-cased attribute -> position in req.Attributes
	for _, ln := range lines[i+1:] {
		name, val, err := ldifLine(ln)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, dn)
		}
		if strings.EqualFold(name, "changetype") {
			if !strings.EqualFold(val, "add") {
				return nil, fmt.Errorf("ldif: %s: only changetype add is supported, got %q", dn, val)
			}
			continue
		}
		// LDAP rejects an attribute listed twice in one add, so merge
		// repeated "attr:" lines into one multi-valued attribute.
		key := strings.ToLower(name)
		if j, ok := index[key]; ok {
			req.Attributes[j].Vals = append(req.Attributes[j].Vals, val)
			continue
		}
		index[key] = len(req.Attributes)
		req.Attribute(name, []string{val})
	}
	if len(req.Attributes) == 0 {
		return nil, fmt.Errorf("ldif: %s has no attributes", dn)
	}
	return req, nil
}

// ldifLine splits "name: value" / "name:: base64".
func ldifLine(ln string) (name, value string, err error) {
	colon := strings.IndexByte(ln, ':')
	if colon <= 0 {
		return "", "", fmt.Errorf("ldif: not an attribute line: %q", ln)
	}
	name, rest := ln[:colon], ln[colon+1:]
	switch {
	case strings.HasPrefix(rest, ":"):
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest[1:]))
		if err != nil {
			return "", "", fmt.Errorf("ldif: bad base64 for %s: %w", name, err)
		}
		return name, string(raw), nil
	case strings.HasPrefix(rest, "<"):
		return "", "", fmt.Errorf("ldif: URL values (%s:<) are not supported", name)
	default:
		return name, strings.TrimLeft(rest, " "), nil
	}
}

// dedentTabs removes the longest run of leading tabs shared by all non-blank lines.
func dedentTabs(lines []string) []string {
	common := -1
	for _, ln := range lines {
		if strings.TrimSpace(ln) == "" {
			continue
		}
		n := len(ln) - len(strings.TrimLeft(ln, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	if common <= 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, ln := range lines {
		if len(ln) >= common && strings.TrimLeft(ln[:common], "\t") == "" {
			out[i] = ln[common:]
		} else {
			out[i] = strings.TrimLeft(ln, "\t")
		}
	}
	return out
}
