package calc

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

func TestClosest(t *testing.T) {
	cands := []string{"frank", "Dave", "judy", "alice", "carol", "pizza_teams"}
	for _, tc := range []struct{ word, want string }{
		{"frnak", "frank"}, // transposition: one edit
		{"dvae", "Dave"},   // any letter case
		{"judi", "judy"},
		{"carl", "carol"},
		{"zzzzzz", ""}, // nothing plausible
		{"alice", ""},  // the word itself is not a suggestion
		{"x", ""},
	} {
		if got := closest(tc.word, sliceSeq(cands)); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// The suggestion does not depend on the order of the candidates: of the nearest, the first in
// byte order; the bounds that dismiss candidates early never dismiss one that ties.
func TestClosestIsOrderIndependent(t *testing.T) {
	for _, tc := range []struct {
		word  string
		cands []string
		want  string
	}{
		// Two at distance 2, with lengths that differ from the word's by exactly 2.
		{"abcdef", []string{"abcdefxy", "aabcdefx"}, "aabcdefx"},
		// Two at distance 2 with the word's very letters (the letter-count bound is 0).
		{"abcdef", []string{"badcfe", "bacdfe"}, "bacdfe"},
		// A nearer candidate is kept over a farther one that sorts first.
		{"abcdef", []string{"zbcdef", "bacdfe"}, "zbcdef"},
		{"abcdef", []string{"zbcdef", "ybcdef", "xbcdef"}, "xbcdef"},
	} {
		rev := slices.Clone(tc.cands)
		slices.Reverse(rev)
		for _, order := range [][]string{tc.cands, rev} {
			if got := closest(tc.word, sliceSeq(order)); got != tc.want {
				t.Errorf("closest(%q, %q) = %q, want %q", tc.word, order, got, tc.want)
			}
		}
	}
}

// randomWord is up to maxLen letters of alphabet: small alphabets make near misses and ties.
func randomWord(r *rand.Rand, alphabet string, maxLen int) string {
	b := make([]byte, r.IntN(maxLen+1))
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// closest is the brute-force answer: the smallest distance within the limit, ties to the first
// in byte order, the word itself (in any case) excluded.
func TestClosestMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	word := func() string { return randomWord(r, "abcdA", 8) }
	var buf [3][]int
	for range 2000 {
		w := word()
		cands := make([]string, r.IntN(8))
		for i := range cands {
			cands[i] = word()
		}
		lw := strings.ToLower(w)
		limit := max(1, len(lw)/3)
		want, wantD := "", limit+1
		for _, c := range cands {
			lc := strings.ToLower(c)
			if lc == lw {
				continue
			}
			if d := editDistance(lw, lc, 1000, &buf); d < wantD || (d == wantD && c < want) {
				want, wantD = c, d
			}
		}
		if got := closest(w, sliceSeq(cands)); got != want {
			t.Fatalf("closest(%q, %q) = %q, want %q", w, cands, got, want)
		}
	}
}

// editDistance agrees with the textbook optimal-string-alignment distance, and with a bound
// it answers exactly below the bound and at least the bound otherwise.
func TestEditDistance(t *testing.T) {
	osa := func(a, b string) int {
		d := make([][]int, len(a)+1)
		for i := range d {
			d[i] = make([]int, len(b)+1)
			d[i][0] = i
		}
		for j := range d[0] {
			d[0][j] = j
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(b); j++ {
				cost := 1
				if a[i-1] == b[j-1] {
					cost = 0
				}
				d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
				if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
					d[i][j] = min(d[i][j], d[i-2][j-2]+1)
				}
			}
		}
		return d[len(a)][len(b)]
	}
	r := rand.New(rand.NewPCG(3, 4))
	word := func() string { return randomWord(r, "abc", 6) }
	var buf [3][]int
	for range 3000 {
		a, b := word(), word()
		want := osa(a, b)
		if got := editDistance(a, b, 100, &buf); got != want {
			t.Fatalf("editDistance(%q, %q) = %d, want %d", a, b, got, want)
		}
		bound := r.IntN(5) + 1
		got := editDistance(a, b, bound, &buf)
		if (want < bound && got != want) || (want >= bound && got < bound) {
			t.Fatalf("editDistance(%q, %q, bound %d) = %d; the distance is %d", a, b, bound, got, want)
		}
	}
}

// A missing group reference names up to three existing groups, nearest first, then by name;
// as far as half the name's length (at least 2) away.
func TestGroupHint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
		want  string
	}{
		{"abcd", []string{"abxy", "abcz", "zzzz", "abyz"}, "; closest existing: ou/abcz, ou/abxy, ou/abyz"},
		{"abcd", []string{"wxyz", "abc"}, "; closest existing: ou/abc"},
		{"abcd", []string{"wxyz"}, ""},
		{"ab*", []string{"abc"}, ""},
		{"abcdefgh", []string{"abcdwxyz", "abcdefgz", "abcdefyz", "abcdexyz", "abcdefgh-x"}, "; closest existing: ou/abcdefgz, ou/abcdefgh-x, ou/abcdefyz"},
	} {
		if got := groupHint("ou", tc.name, tc.names); got != tc.want {
			t.Errorf("groupHint(%q, %q) = %q, want %q", tc.name, tc.names, got, tc.want)
		}
	}
}

// BenchmarkClosestUID is the price of one "did you mean" for an unknown uid among 50,000
// people (paid once per distinct unknown uid).
func BenchmarkClosestUID(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	uids := make([]string, 50000)
	for i := range uids {
		uids[i] = fmt.Sprintf("%c%c%cuser%d", 'a'+r.IntN(26), 'a'+r.IntN(26), 'a'+r.IntN(26), r.IntN(100000))
	}
	b.ReportAllocs()
	for b.Loop() {
		closest("qqquser12345x", sliceSeq(uids))
	}
}

// Every username that names nobody is a warning with the closest uid; under Strict it is an
// error. The look-ups are memoised and bounded, so a repo naming hundreds of people who left
// stays fast.
func TestUnknownUsernames(t *testing.T) {
	var b strings.Builder
	b.WriteString("username = alice\nusername = malory\n")
	for i := range 100 {
		fmt.Fprintf(&b, "username = ghost%03d\n", i)
	}
	files := map[string]string{"ldap-config/a/x.txt": b.String(), "ldap-config/a/y.txt": "username = malory\n"}
	repo, warns, err := loadWarned(t, files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 102 {
		t.Fatalf("%d warnings, want 102 (one per line naming nobody)", len(warns))
	}
	if w := warns[0]; w.Line != 2 || w.Msg != `username "malory" names nobody in the people data; did you mean "mallory"?` {
		t.Errorf("first warning %+v", w)
	}
	if repo.ld.hintScans != maxUIDHints || len(repo.ld.hints) != 101 {
		t.Errorf("%d scans of the people for %d distinct unknown uids, budget %d", repo.ld.hintScans, len(repo.ld.hints), maxUIDHints)
	}

	errs := mustFail(t, files, Options{Strict: true})
	if len(errs) != 102 || !validate.HasKind(errs, validate.KindUnknownPerson) {
		t.Errorf("strict: %d errors, kinds %v", len(errs), errs.Kinds())
	}
}
