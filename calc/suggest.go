package calc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/internal/suggest"
	"github.com/entitlements-go/entitlements/people"
)

// closest returns the candidate nearest to word, or "" (see suggest.Closest).
func closest(word string, candidates func(yield func(string) bool)) string {
	return suggest.Closest(word, candidates)
}

// editDistance is suggest.EditDistance.
func editDistance(a, b string, bound int, buf *[3][]int) int {
	return suggest.EditDistance(a, b, bound, buf)
}

func sliceSeq(s []string) func(yield func(string) bool) { return slices.Values(s) }

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func uidSeq(d *people.Directory) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for i := 0; i < d.Len(); i++ {
			if !yield(d.UID(uint32(i))) {
				return
			}
		}
	}
}

// didYouMean is " (did you mean X?)" for the closest candidate, or "".
func didYouMean(word string, candidates func(yield func(string) bool)) string {
	if c := closest(word, candidates); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// maxUIDHints bounds the distinct unknown uids a run looks for the closest uid of: each look
// scans every person (tens of milliseconds among 50,000), and a repo that still names
// hundreds of people who left must not pay that hundreds of times. Later ones get no hint.
const maxUIDHints = 64

// closestUID is the uid nearest to an unknown one ("" when none is close, or past the
// budget), memoised per run.
func (ld *loader) closestUID(uid string) string {
	ld.hintMu.Lock()
	defer ld.hintMu.Unlock()
	key := strings.ToLower(uid)
	if c, ok := ld.hints[key]; ok {
		return c
	}
	if ld.hints == nil {
		ld.hints = map[string]string{}
	}
	c := ""
	if ld.hintScans < maxUIDHints {
		ld.hintScans++
		c = closest(uid, uidSeq(ld.dir))
	}
	ld.hints[key] = c
	return c
}

// unknownPersonHint is the suggestion for a uid that names nobody.
func (ld *loader) unknownPersonHint(uid string) string {
	if c := ld.closestUID(uid); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}

// groupHint names the existing groups of an OU closest to a missing name (up to three).
func groupHint(ouKey, name string, names []string) string {
	if strings.Contains(name, "*") {
		return ""
	}
	type cand struct {
		n string
		d int
	}
	var cs []cand
	w := strings.ToLower(name)
	limit := max(2, len(w)/2)
	var buf [3][]int
	for _, n := range names {
		if d := editDistance(w, strings.ToLower(n), limit+1, &buf); d <= limit {
			cs = append(cs, cand{n, d})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.n, b.n)
	})
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, ouKey+"/"+c.n)
	}
	return "; closest existing: " + strings.Join(out, ", ")
}

// ouHint suggests the configured OU closest to an unknown OU key.
func (ld *loader) ouHint(key string) string {
	var keys []string
	for _, ou := range ld.cfg.SortedOUs() {
		keys = append(keys, ou.Key)
	}
	return didYouMean(key, sliceSeq(keys))
}
