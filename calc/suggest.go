package calc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/people"
)

// closest returns the candidate nearest to word (case-insensitive edit distance), or "" when
// none is near enough to be a plausible typo: at most a third of the word's length, and at
// least one edit.
func closest(word string, candidates func(yield func(string) bool)) string {
	w := strings.ToLower(word)
	limit := max(1, len(w)/3)
	best, bestD := "", limit+1
	for c := range candidates {
		lc := strings.ToLower(c)
		if lc == w {
			continue
		}
		if d := abs(len(lc) - len(w)); d >= bestD {
			continue
		}
		if d := editDistance(w, lc, bestD); d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD > limit {
		return ""
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is the optimal-string-alignment distance of a and b (Levenshtein plus the
// transposition of two neighbours, the commonest typo), or any value >= bound once it is
// certain to reach bound (rows are abandoned early: the scan can cover every person).
func editDistance(a, b string, bound int) int {
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= bound {
			return bound
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
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

// unknownPersonHint is the suggestion for a uid that names nobody.
func (r *Repo) unknownPersonHint(uid string) string {
	if c := closest(uid, uidSeq(r.dir)); c != "" {
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
	for _, n := range names {
		if d := editDistance(w, strings.ToLower(n), limit+1); d <= limit {
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
func (r *Repo) ouHint(key string) string {
	var keys []string
	for _, ou := range r.cfg.SortedOUs() {
		keys = append(keys, ou.Key)
	}
	return didYouMean(key, sliceSeq(keys))
}
