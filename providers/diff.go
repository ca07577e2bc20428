package providers

import (
	"cmp"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/internal/dn"
)

func normalizeDN(s string) string { return dn.Normalize(s) }

// DiffOptions tune Diff.
type DiffOptions struct {
	// DeleteGroups deletes current groups that are no longer desired. Default false here;
	// the deploy step sets it from the provider's DeletePolicy (true for LDAP).
	DeleteGroups bool
	// IgnoreDescription skips description differences (targets that do not store one).
	IgnoreDescription bool
}

// Diff computes the changes that turn current into desired. It is pure: no I/O, no provider
// code, so every provider gets the same, testable answer. Members compare case-insensitively
// (a case-only difference is not a change); DNs compare normalised.
func Diff(ou string, desired []*Group, current *State, opt DiffOptions) []*Change {
	var out []*Change
	seen := make(map[string]bool, len(desired))
	for _, d := range desired {
		k := Key(d.DN)
		seen[k] = true
		cur, ok := current.Groups[k]
		if !ok {
			out = append(out, &Change{Kind: CreateGroup, OU: ou, DN: d.DN, Desired: d, Add: sortedCopy(d.Members)})
			continue
		}
		add, remove := memberDiff(d.Members, cur.Members)
		c := &Change{Kind: UpdateGroup, OU: ou, DN: d.DN, Desired: d, Current: cur, Add: add, Remove: remove}
		c.DescriptionChanged = !opt.IgnoreDescription && d.Description != cur.Description
		for name, want := range d.Attrs {
			if !SameFold(want, cur.Attrs[name]) {
				c.AttrsChanged = append(c.AttrsChanged, name)
			}
		}
		slices.Sort(c.AttrsChanged)
		if len(add) > 0 || len(remove) > 0 || c.DescriptionChanged || len(c.AttrsChanged) > 0 {
			out = append(out, c)
		}
	}
	if opt.DeleteGroups {
		for k, cur := range current.Groups {
			if !seen[k] {
				out = append(out, &Change{Kind: DeleteGroup, OU: ou, DN: cur.DN, Current: cur, Remove: sortedCopy(cur.Members)})
			}
		}
	}
	slices.SortFunc(out, func(a, b *Change) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(strings.ToLower(a.DN), strings.ToLower(b.DN)))
	})
	if current.ContainerMissing {
		out = append([]*Change{{Kind: CreateContainer, OU: ou}}, out...)
	}
	return out
}

// memberDiff returns desired members missing from current and current members not desired,
// comparing case-insensitively; adds keep the desired spelling.
func memberDiff(desired, current []string) (add, remove []string) {
	cur := make(map[string]bool, len(current))
	for _, m := range current {
		cur[strings.ToLower(m)] = true
	}
	want := make(map[string]bool, len(desired))
	for _, m := range desired {
		l := strings.ToLower(m)
		want[l] = true
		if !cur[l] {
			add = append(add, m)
		}
	}
	for _, m := range current {
		if !want[strings.ToLower(m)] {
			remove = append(remove, m)
		}
	}
	return sortedCopy(add), sortedCopy(remove)
}

// SameFold compares two value lists as case-insensitive multisets: order does not matter, as
// in the reference. Providers use it where they compare lists themselves (predictive state).
func SameFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := make([]string, len(a))
	y := make([]string, len(b))
	for i := range a {
		x[i], y[i] = strings.ToLower(a[i]), strings.ToLower(b[i])
	}
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
