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
	var buf [3][]int
	// Letter counts bound the distance from below (an edit changes at most two counts by
	// one, a transposition none): most candidates are dismissed without the quadratic part.
	var hw, hc [256]int16
	for i := 0; i < len(w); i++ {
		hw[w[i]]++
	}
	for c := range candidates {
		if d := abs(len(c) - len(w)); d > bestD {
			continue
		}
		lc := strings.ToLower(c)
		if lc == w {
			continue
		}
		for i := 0; i < len(lc); i++ {
			hc[lc[i]]++
		}
		diff := 0
		for _, s := range [2]string{w, lc} {
			for i := 0; i < len(s); i++ {
				x := s[i]
				diff += abs(int(hw[x]) - int(hc[x]))
				hc[x] = hw[x] // counted once
			}
		}
		// Every letter of lc now counts as in w (0 when w lacks it): clearing w's letters
		// clears all.
		for i := 0; i < len(w); i++ {
			hc[w[i]] = 0
		}
		if (diff+1)/2 > bestD {
			continue
		}
		// The bound is one past the best so far, so that a tie is an exact distance.
		if d := editDistance(w, lc, bestD+1, &buf); d < bestD || (d == bestD && c < best) {
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
// certain to reach bound (rows are abandoned early: the scan can cover every person). buf
// holds the rows between calls.
func editDistance(a, b string, bound int, buf *[3][]int) int {
	n := len(b) + 1
	for i := range buf {
		if cap(buf[i]) < n {
			buf[i] = make([]int, n)
		}
		buf[i] = buf[i][:n]
	}
	pp, prev, cur := buf[0], buf[1], buf[2]
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

// maxUIDHints bounds the distinct unknown uids a run looks for the closest uid of: each look
// scans every person (tens of milliseconds among 50,000), and a repo that still names
// hundreds of people who left must not pay that hundreds of times. Later ones get no hint.
const maxUIDHints = 64

// closestUID is the uid nearest to an unknown one ("" when none is close, or past the
// budget), memoised per run.
func (r *Repo) closestUID(uid string) string {
	r.hintMu.Lock()
	defer r.hintMu.Unlock()
	key := strings.ToLower(uid)
	if c, ok := r.hints[key]; ok {
		return c
	}
	if r.hints == nil {
		r.hints = map[string]string{}
	}
	c := ""
	if r.hintScans < maxUIDHints {
		r.hintScans++
		c = closest(uid, uidSeq(r.dir))
	}
	r.hints[key] = c
	return c
}

// unknownPersonHint is the suggestion for a uid that names nobody.
func (r *Repo) unknownPersonHint(uid string) string {
	if c := r.closestUID(uid); c != "" {
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
func (r *Repo) ouHint(key string) string {
	var keys []string
	for _, ou := range r.cfg.SortedOUs() {
		keys = append(keys, ou.Key)
	}
	return didYouMean(key, sliceSeq(keys))
}
