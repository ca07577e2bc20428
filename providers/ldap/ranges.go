package ldap

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	goldap "github.com/go-ldap/ldap/v3"
)

// Active Directory returns at most MaxValRange values of an attribute (1,500 by default)
// per search: the member list of a larger group comes back as "member;range=0-1499" instead
// of "member", and the rest must be asked for as "member;range=1500-*" and so on, until the
// answer's range ends with "*". Without that, a large group would read as holding only its
// first values, and every plan would add the others again.

// completeRanges replaces each ranged attribute of e by the whole attribute, read range by
// range with base-object searches of e.
func (s *ldapServer) completeRanges(ctx context.Context, e *goldap.Entry) error {
	for i, a := range e.Attributes {
		name, _, end, ok := parseRange(a.Name)
		if !ok {
			continue
		}
		values := a.Values
		for end != "*" {
			n, err := strconv.Atoi(end)
			if err != nil {
				return fmt.Errorf("%s: attribute %s: bad range end %q", e.DN, a.Name, end)
			}
			want := fmt.Sprintf("%s;range=%d-*", name, n+1)
			var res *goldap.SearchResult
			err = s.pool.do(ctx, func(c *goldap.Conn) error {
				s.counters.Searches.Add(1)
				var err error
				res, err = c.Search(goldap.NewSearchRequest(e.DN, goldap.ScopeBaseObject, goldap.NeverDerefAliases, 0, 0, false,
					"(objectClass=*)", []string{want}, nil))
				return err
			})
			if err != nil {
				return fmt.Errorf("reading %s of %s: %w", want, e.DN, err)
			}
			var next *goldap.EntryAttribute
			if len(res.Entries) == 1 {
				for _, ra := range res.Entries[0].Attributes {
					if rn, start, _, ok := parseRange(ra.Name); ok && strings.EqualFold(rn, name) && start == strconv.Itoa(n+1) {
						next = ra
					}
				}
			}
			if next == nil {
				// Never take a list cut short for the whole list.
				return fmt.Errorf("reading %s of %s: the server returned no such range", want, e.DN)
			}
			values = append(values, next.Values...)
			_, _, end, _ = parseRange(next.Name)
		}
		e.Attributes[i] = &goldap.EntryAttribute{Name: name, Values: values}
	}
	return nil
}

// parseRange splits "member;range=0-1499" into member, 0, 1499 (attribute options are
// case-insensitive).
func parseRange(attr string) (name, start, end string, ok bool) {
	i := strings.Index(strings.ToLower(attr), ";range=")
	if i < 0 {
		return "", "", "", false
	}
	name = attr[:i]
	start, end, ok = strings.Cut(attr[i+len(";range="):], "-")
	return name, start, end, ok && start != "" && end != ""
}

// hasRanges reports whether e carries a ranged attribute.
func hasRanges(e *goldap.Entry) bool {
	for _, a := range e.Attributes {
		if strings.Contains(strings.ToLower(a.Name), ";range=") {
			return true
		}
	}
	return false
}
