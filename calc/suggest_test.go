package calc

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
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
	root := build(t, files)
	var warns []validate.Warning
	repo, err := Load(t.Context(), filepath.Join(root, "config.yaml"), defaults(Options{
		OnWarning: func(w validate.Warning) { warns = append(warns, w) }}, root))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 102 {
		t.Fatalf("%d warnings, want 102 (one per line naming nobody)", len(warns))
	}
	if w := warns[0]; w.Line != 2 || w.Msg != `username "malory" names nobody in the people data; did you mean "mallory"?` {
		t.Errorf("first warning %+v", w)
	}
	if repo.hintScans != maxUIDHints || len(repo.hints) != 101 {
		t.Errorf("%d scans of the people for %d distinct unknown uids, budget %d", repo.hintScans, len(repo.hints), maxUIDHints)
	}

	errs := mustFail(t, files, Options{Strict: true})
	if len(errs) != 102 || !validate.HasKind(errs, validate.KindUnknownPerson) {
		t.Errorf("strict: %d errors, kinds %v", len(errs), errs.Kinds())
	}
}
