// Package suggest finds the plausible intended word among candidates, for "did you mean"
// hints: the calculator's (uids, groups, rule methods) and the config loader's (OU keys).
package suggest

import "strings"

// Closest returns the candidate nearest to word (case-insensitive edit distance), or "" when
// none is near enough to be a plausible typo: at most a third of the word's length, and at
// least one edit.
func Closest(word string, candidates func(yield func(string) bool)) string {
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
		if d := EditDistance(w, lc, bestD+1, &buf); d < bestD || (d == bestD && c < best) {
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

// EditDistance is the optimal-string-alignment distance of a and b (Levenshtein plus the
// transposition of two neighbours, the commonest typo), or any value >= bound once it is
// certain to reach bound (rows are abandoned early: the scan can cover every person). buf
// holds the rows between calls.
func EditDistance(a, b string, bound int, buf *[3][]int) int {
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
