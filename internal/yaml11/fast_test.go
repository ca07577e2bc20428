package yaml11

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/internal/corpus"
)

// fastSeeds are inputs at and around the edges of the fast path's subset.
var fastSeeds = []string{
	"a: 1\n", "---\na: 1\n", "a:\n", "a:\nb:\n", "a:\n  b: c\n", "a:\n- x\n- y\nb: 2\n", "a:\n  - x\n  -  y\n",
	"- a\n- b\n", "- a: 1\n  b: 2\n- c\n", "- - a\n  - b\n- c\n", "-   a: 1\n    b:\n    - x\n",
	"a: \"2026-01-01\"\nb: '2026-01-01'\nc: 2026-01-01\n", "a: yes\nb: NO\nc: ~\nd: null\ne: 0x1F\nf: 1_000\n",
	"a: 12:30\n", "a: http://x.y/z\n", "a: b: c\n", "a: b #c\n", "# top\na: 1 # trailing\n", "a: O'Brien\n",
	"a: 'it''s'\n", "a: \"x\\ty\"\n", "a: [1, 2]\n", "a: {b: c}\n", "a: &x 1\n", "a: *x\n", "a: !!str 1\n",
	"a: |\n  x\n", "a: >\n  x\n", "a: x\n  y\n", "a:\n  x\n", "a: 1\na: 2\n", "1: a\n1.0: b\n\"1\": c\n",
	"<<: x\n", "'<<': x\n", "? a\n: b\n", "a: -1\nb: -x\nc: - x\n", "a :b\n", "a : b\n", "é: ü\n", "a: \u2028\n",
	"a: 1\n...\n", "a: 1\n---\nb: 2\n", "---\n", "--- a\n", "a:\n\n\n  b: 1\n", "a:\n # c\n  b: 1\n",
	"  a: 1\n  b: 2\n", "a:\n    b: 1\n  c: 2\n", "a: 1\n b: 2\n", "- a\n  - b\n", "a:\n- b\n  c: d\n",
	"x:\n  - username: u1\n    expiration: \"2026-07-10\"\n  - not:\n      or:\n      - group: a/b\n",
	"a: 2018-04-01 12:00:00\n", "a: 2018-02-30\n", "a: .inf\nb: .NaN\nc: +.5\n", "a: 99999999999999999999\n",
	"a: b\x00\n", "a: \"b\x01\"\n", "a: \x7f\n", "a: \xff\n", "\xef\xbb\xbfa: 1\n", "a: 1\r\n", "a:\tb\n",
	"key with spaces: value with  spaces\n", "a: b:c\n", "a: b:\n", "a:b: c\n", "- -1\n- -\n", "-\n",
	"a: \"\"\nb: ''\n", "\"a\": 1\n'b': 2\n", "\"a:b\": 1\n", "a: \"x\" y\n", "a: [\n", "a: ,b\n", "a: b,c\n",
	// People and manager-map entries whose values are not strings (issue 23): both paths must
	// type them alike, since the people loader refuses them by their kind.
	"alice:\n  cn: 123\n  flag: yes\n  off: Off\n  start: 2026-01-01\n  q: '2026-01-01'\n  f: 1.5\n  o: 010\n  s: 12:30\n  l:\n  - 1\n  - a\n  - ~\n  m:\n    a: 1\n",
	"u1:\n  manager: ''\nu2:\n  manager: \"\"\nu3:\n  manager: no\nu4:\n  manager: 0x1F\nu5:\n  manager:\n  - u1\n",
	// Found by review: a quoted merge key is still a merge key to yaml.v3's converter and to Psych.
	"'<<':\n  a: 1\n", "\"<<\":\n- a\n", "x:\n  '<<':\n    a: 1\n", "- '<<':\n    a: 1\n",
}

// TestFastPathDepth: nesting deeper than maxFastDepth is left to the yaml.v3 path (which
// refuses 10,000 levels, a limit the fast path must never answer past); shallower nesting is
// answered, exactly as the full path answers.
func TestFastPathDepth(t *testing.T) {
	doc := func(kind string, depth int) []byte {
		if kind == "sequence" {
			return []byte(strings.Repeat("- ", depth) + "a\n")
		}
		var b strings.Builder
		for i := 0; i < depth; i++ {
			b.WriteString(strings.Repeat(" ", i) + "a:\n")
		}
		return []byte(b.String())
	}
	for _, kind := range []string{"sequence", "mapping"} {
		if _, _, ok := fastParse(doc(kind, maxFastDepth+1), Options{}); ok {
			t.Errorf("%s nested %d deep: the fast path answered", kind, maxFastDepth+1)
		}
		if !checkFastPath(t, kind, doc(kind, maxFastDepth-1), Options{}) {
			t.Errorf("%s nested %d deep: the fast path gave up", kind, maxFastDepth-1)
		}
	}
}

// TestFastPathMatchesFull: whenever the fast path answers, its tree and warnings are exactly
// those of the yaml.v3 path, for the seeds and for every YAML file of the conformance corpus.
func TestFastPathMatchesFull(t *testing.T) {
	inputs := map[string][]byte{}
	for i, s := range append(fastSeeds, fuzzSeeds...) {
		inputs["seed"+string(rune('A'+i%26))+strings.Repeat("'", i/26)] = []byte(s)
	}
	root, _ := corpus.Find() // no corpus: the seeds only
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			if data, err := os.ReadFile(path); err == nil {
				inputs[path] = data
			}
		}
		return nil
	})
	answered := 0
	for name, data := range inputs {
		for _, dates := range []bool{false, true} {
			if checkFastPath(t, name, data, Options{AllowDates: dates}) {
				answered++
			}
		}
	}
	// The subset must cover the typical files, or this test checks nothing.
	if answered < len(inputs)/2 {
		t.Fatalf("the fast path answered only %d of %d parses", answered, 2*len(inputs))
	}
	t.Logf("fast path answered %d of %d parses", answered, 2*len(inputs))
}

// TestFastPathAnswers pins inputs that must stay on the fast path (the shapes of people
// files, manager maps and group files), so that a change that silently sends everything to
// the slow path fails.
func TestFastPathAnswers(t *testing.T) {
	for _, s := range []string{
		"---\nu000001:\n  cn: Grace Xu\n  manager: u000000\nu000002:\n  cn: Zoë O'Brien\n  manager: u000001\n",
		"---\nu000000:\n  manager: u000000\n  status:\n  - employee\n",
		"---\ndescription: Access to x (requested via the access portal)\nrules:\n  and:\n  - or:\n    - username: u011131\n    - username: u023911\n      expiration: \"2026-07-10\"\n  - not:\n      or:\n      - group: pizza_teams/indigo\nmetadata:\n  tier: 2\nexpiration: \"2027-02-21\"\n",
		"# comment\nrules:\n  username: alice\n",
		"alice:\n  cn: 123\n  flag: yes\n  start: 2026-01-01\n  l:\n  - 1\n  - ~\n  m:\n    a: 1\n",
		"u1:\n  manager: ''\nu2:\n  manager: no\n",
	} {
		if !checkFastPath(t, "pinned", []byte(s), Options{AllowDates: true}) {
			t.Errorf("fast path gave up on:\n%s", s)
		}
	}
}

// reused is one Parser for every check, so that its storage is reused across documents.
var reused Parser

func checkFastPath(t *testing.T, name string, data []byte, opt Options) bool {
	t.Helper()
	// A Parser gives exactly what Parse gives (the fast path into its reused storage, or the
	// full path), errors included.
	want, wwarns, werr := Parse(data, opt)
	got, gwarns, gerr := reused.ParseString(string(data), opt)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%s: Parser error %v, Parse error %v\n%q", name, gerr, werr, data)
	}
	if werr == nil && (!sameTree(got, want) || !reflect.DeepEqual(gwarns, wwarns)) {
		t.Fatalf("%s: Parser tree differs\nparser: %s\nparse:  %s\n%q", name, dump(got), dump(want), data)
	}
	fast, fwarns, ok := fastParse(data, opt)
	if !ok {
		return false
	}
	full, warns, err := parseFull(data, opt)
	if err != nil {
		t.Fatalf("%s (dates %v): fast path answered, full path fails: %v\n%q", name, opt.AllowDates, err, data)
	}
	if !sameTree(fast, full) {
		t.Fatalf("%s (dates %v): trees differ\nfast: %s\nfull: %s\n%q", name, opt.AllowDates, dump(fast), dump(full), data)
	}
	if !reflect.DeepEqual(fwarns, warns) {
		t.Fatalf("%s: warnings differ\nfast: %v\nfull: %v\n%q", name, fwarns, warns, data)
	}
	return true
}

// dump shows a tree with kinds and lines, which Inspect leaves out.
func dump(n *Node) string {
	var b strings.Builder
	var walk func(*Node, string)
	walk = func(n *Node, ind string) {
		b.WriteString(ind + n.Kind.String() + "@" + strconv.Itoa(n.Line) + " " + n.Inspect() + "\n")
		for _, it := range n.Items {
			walk(it, ind+"  ")
		}
		for i, k := range n.Keys {
			walk(k, ind+"  k ")
			walk(n.Values[i], ind+"  v ")
		}
	}
	walk(n, "")
	return b.String()
}

func FuzzFastPath(f *testing.F) {
	for _, s := range append(fastSeeds, fuzzSeeds...) {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, dates bool) {
		checkFastPath(t, "fuzz", data, Options{AllowDates: dates})
	})
}

// sameTree is reflect.DeepEqual with NaN equal to itself.
func sameTree(a, b *Node) bool {
	if reflect.TypeFor[Node]().NumField() != 15 {
		panic("Node has a new field: compare it in sameTree")
	}
	if a == nil || b == nil {
		return a == b
	}
	if math.IsNaN(a.Float) && math.IsNaN(b.Float) {
		x, y := *a, *b
		x.Float, y.Float = 0, 0
		return sameTree(&x, &y)
	}
	if a.Kind != b.Kind || a.Line != b.Line || a.Str != b.Str || a.Bool != b.Bool || a.Int != b.Int ||
		a.Float != b.Float || a.Date != b.Date || a.Quoted != b.Quoted || a.Substituted != b.Substituted ||
		a.bigInt != b.bigInt || a.indexLen != b.indexLen || !reflect.DeepEqual(a.index, b.index) ||
		len(a.Items) != len(b.Items) || len(a.Keys) != len(b.Keys) || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Items {
		if !sameTree(a.Items[i], b.Items[i]) {
			return false
		}
	}
	for i := range a.Keys {
		if !sameTree(a.Keys[i], b.Keys[i]) || !sameTree(a.Values[i], b.Values[i]) {
			return false
		}
	}
	return true
}
