package people

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func persons(uids ...string) []Person {
	out := make([]Person, len(uids))
	for i, u := range uids {
		out[i] = Person{UID: u}
	}
	return out
}

func TestDirectory(t *testing.T) {
	d, err := NewDirectory(persons("bob", "Carol", "alice", "_x", "ZED", "Émile"))
	if err != nil {
		t.Fatal(err)
	}
	// IDs follow the byte order of the uids: upper case before lower case, non-ASCII last.
	want := []string{"Carol", "ZED", "_x", "alice", "bob", "Émile"}
	if got := d.UIDs(); !slices.Equal(got, want) {
		t.Fatalf("UIDs %q, want %q", got, want)
	}
	if d.Len() != len(want) {
		t.Errorf("Len %d", d.Len())
	}
	for i, u := range want {
		if d.UID(uint32(i)) != u || d.Person(uint32(i)).UID != u {
			t.Errorf("ID %d is %q, want %q", i, d.UID(uint32(i)), u)
		}
	}
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"carol", "Carol", true}, {"CAROL", "Carol", true}, {"Carol", "Carol", true}, {"zed", "ZED", true},
		{"ALICE", "alice", true}, {"émile", "Émile", true}, {"nobody", "", false}, {"", "", false}, {"bob ", "", false},
	} {
		id, ok := d.Lookup(c.in)
		if ok != c.ok || (ok && d.UID(id) != c.want) {
			t.Errorf("Lookup(%q) = %v %v, want %q %v", c.in, id, ok, c.want, c.ok)
		}
	}
	// The input slice is not reordered.
	in := persons("b", "a")
	if _, err := NewDirectory(in); err != nil || in[0].UID != "b" {
		t.Errorf("NewDirectory modified its input: %v %v", in, err)
	}
}

func TestDirectoryErrors(t *testing.T) {
	_, err := NewDirectory(persons("bob", "alice", "BOB"))
	var de *DuplicateError
	if !errors.As(err, &de) || !slices.Equal(sortedPair(de.A, de.B), []string{"BOB", "bob"}) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := NewDirectory(persons("alice", "Alice")); !errors.As(err, &de) {
		t.Errorf("Alice/alice: %v", err)
	}
	if _, err := NewDirectory(persons("alice", "")); err == nil || errors.As(err, &de) {
		t.Errorf("empty uid: %v", err)
	}
	d, err := NewDirectory(nil)
	if err != nil || d.Len() != 0 {
		t.Errorf("empty directory: %v", err)
	}
	if _, ok := d.Lookup("x"); ok {
		t.Error("lookup in an empty directory")
	}
}

func sortedPair(a, b string) []string {
	s := []string{a, b}
	slices.Sort(s)
	return s
}

func TestParseYAML(t *testing.T) {
	ps, err := ParseYAML([]byte(`pixiEbob:
  cn: Pixie
  status: [employee, remote]
  none: []
  gid: '010'
  manager: boss
  gone:
  since: "2020-01-01"
"no":
  cn: Quoted no
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].UID != "pixiEbob" || ps[1].UID != "no" {
		t.Fatalf("people %+v", ps)
	}
	want := map[string]any{"cn": "Pixie", "status": []any{"employee", "remote"}, "none": []any{}, "gid": "010", "manager": "boss",
		"since": "2020-01-01"}
	if !reflect.DeepEqual(ps[0].Attrs, want) {
		t.Errorf("attributes %#v\nwant %#v", ps[0].Attrs, want)
	}
	if _, ok := ps[0].Attrs["gone"]; ok {
		t.Error("null attribute kept")
	}

	for _, c := range []struct {
		name, text string
		line       int
	}{
		{"YAML 1.1 boolean uid", "alice: {}\nno: {}\n", 2},
		{"yes uid", "Yes: {cn: x}\n", 1},
		{"integer uid", "alice: {}\n123: {}\n", 2},
		{"person without attributes", "alice: {}\nbob:\n", 2},
		{"attributes are a list", "alice: [a]\n", 1},
		{"document is a list", "- alice\n", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseYAML([]byte(c.text))
			var le *LineError
			if !errors.As(err, &le) || le.Line != c.line || !strings.Contains(le.Error(), "line ") {
				t.Errorf("error %v, want a LineError at line %d", err, c.line)
			}
		})
	}
	if _, err := ParseYAML([]byte("a: [\n")); err == nil {
		t.Error("syntax error accepted")
	}
	if ps, err := ParseYAML([]byte("# nobody\n")); err != nil || ps != nil {
		t.Errorf("empty file: %v %v", ps, err)
	}
	if _, err := LoadYAML(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// Issue 23: a person's attribute is a string, a list of strings or null, as the reference's
// Person requires; anything else is refused, every one at its line, naming the person and
// the attribute, in one error.
func TestParseYAMLAttributeTypes(t *testing.T) {
	_, err := ParseYAML([]byte(`alice:
  cn: 123
  groups: [1, 2]
  ok: [a, b]
  flag: yes
  ratio: 1.5
  start: 2026-01-01
  address: {city: Paris}
bob:
  cn: Bob
  tags:
  - a
  - ~
  nested: [[a]]
  1: one
  off: x
carol: {cn: "123", flag: 'yes', start: '2026-01-01', none: [], gone: ~}
`))
	var les LineErrors
	if !errors.As(err, &les) {
		t.Fatalf("err = %v, want LineErrors", err)
	}
	var got []string
	for _, le := range les {
		got = append(got, le.Error())
	}
	const tail = "; an attribute is a string or a list of strings: quote the value"
	want := []string{
		`line 2: attribute "cn" of person "alice" is an Integer (123)` + tail,
		`line 3: attribute "groups" of person "alice" is a list holding an Integer (1)` + tail,
		`line 5: attribute "flag" of person "alice" is a TrueClass (yes)` + tail,
		`line 6: attribute "ratio" of person "alice" is a Float (1.5)` + tail,
		`line 7: attribute "start" of person "alice" is a Date (2026-01-01)` + tail,
		`line 8: attribute "address" of person "alice" is a Hash ({"city"=>"Paris"})` + tail,
		`line 13: attribute "tags" of person "bob" is a list holding a NilClass (~)` + tail,
		`line 14: attribute "nested" of person "bob" is a list holding an Array (["a"])` + tail,
		`line 15: attribute name 1 of person "bob" is an Integer, not a string (quote it)`,
		`line 16: attribute name false of person "bob" is a FalseClass, not a string (quote it)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// org builds a directory and org chart from uid → manager lines.
func org(t *testing.T, uids []string, mm map[string]string) (*Directory, *Orgchart) {
	t.Helper()
	d, err := NewDirectory(persons(uids...))
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]Manager, len(mm))
	for k, v := range mm {
		m[k] = Manager{UID: v}
	}
	return d, NewOrgchart(d, m)
}

func uidsOf(d *Directory, b *roaring.Bitmap) []string {
	var out []string
	for _, id := range b.ToArray() {
		out = append(out, d.UID(id))
	}
	return out
}

func TestOrgchart(t *testing.T) {
	uids := []string{"boss", "alice", "bob", "Carol", "dave", "eve", "mallory"}
	mm := map[string]string{"boss": "boss", "alice": "boss", "bob": "alice", "carol": "ALICE", "dave": "bob",
		"eve": "boss", "mallory": "eve"}
	d, o := org(t, uids, mm)
	for _, c := range []struct {
		manager      string
		direct, all  []string
		err          error
		directErrMsg string
	}{
		{manager: "boss", direct: []string{"alice", "boss", "eve"}, all: []string{"Carol", "alice", "bob", "boss", "dave", "eve", "mallory"}},
		{manager: "ALICE", direct: []string{"Carol", "alice", "bob"}, all: []string{"Carol", "alice", "bob", "dave"}},
		{manager: "bob", direct: []string{"bob", "dave"}, all: []string{"bob", "dave"}},
		{manager: "mallory", err: ErrNoReports},
		{manager: "carol", err: ErrNoReports},
		{manager: "ghost", err: ErrUnknownManager},
	} {
		direct, err1 := o.DirectReports(c.manager)
		all, err2 := o.Management(c.manager)
		if c.err != nil {
			if !errors.Is(err1, c.err) || !errors.Is(err2, c.err) {
				t.Errorf("%s: errors %v / %v, want %v", c.manager, err1, err2, c.err)
			}
			if err2 != nil && !strings.Contains(err2.Error(), c.manager) {
				t.Errorf("%s: message %q does not name the manager as written", c.manager, err2)
			}
			continue
		}
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v %v", c.manager, err1, err2)
			continue
		}
		if got := uidsOf(d, direct); !slices.Equal(got, c.direct) {
			t.Errorf("DirectReports(%s) = %q, want %q", c.manager, got, c.direct)
		}
		if got := uidsOf(d, all); !slices.Equal(got, c.all) {
			t.Errorf("Management(%s) = %q, want %q", c.manager, got, c.all)
		}
	}

	id := func(u string) uint32 { i, _ := d.Lookup(u); return i }
	for _, c := range []struct {
		person, manager string
		want            []string
	}{
		{"dave", "alice", []string{"dave", "bob", "alice"}},
		{"dave", "BOSS", []string{"dave", "bob", "alice", "boss"}},
		{"Carol", "alice", []string{"Carol", "alice"}},
		{"alice", "alice", []string{"alice"}},
		{"eve", "alice", nil},
		{"boss", "alice", nil},
	} {
		if got := o.Chain(id(c.person), c.manager); !slices.Equal(got, c.want) {
			t.Errorf("Chain(%s, %s) = %q, want %q", c.person, c.manager, got, c.want)
		}
	}
}

func TestOrgchartCycles(t *testing.T) {
	// a → b → c → a, and d reports into the cycle.
	d, o := org(t, []string{"a", "b", "c", "d"}, map[string]string{"a": "c", "b": "a", "c": "b", "d": "a"})
	all, err := o.Management("a")
	if err != nil {
		t.Fatal(err)
	}
	if got := uidsOf(d, all); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("Management(a) in a cycle = %q", got)
	}
	if got := o.Chain(3, "zzz"); got != nil {
		t.Errorf("Chain through a cycle = %q, want nil", got)
	}
	// A root written with another letter case is still a root (Q-14 deviation).
	d, o = org(t, []string{"Boss", "x"}, map[string]string{"boss": "BOSS", "x": "boss"})
	all, err = o.Management("boss")
	if err != nil {
		t.Fatal(err)
	}
	if got := uidsOf(d, all); !slices.Equal(got, []string{"Boss", "x"}) {
		t.Errorf("Management(boss) = %q", got)
	}
	// A root is not its own report: a root with nobody below has no reports.
	_, o = org(t, []string{"solo", "x"}, map[string]string{"solo": "solo", "x": "x"})
	if _, err := o.Management("solo"); !errors.Is(err, ErrNoReports) {
		t.Errorf("lone root: %v", err)
	}
	if _, err := o.DirectReports("SOLO"); !errors.Is(err, ErrNoReports) {
		t.Errorf("lone root: %v", err)
	}
	// A manager who is not a person still groups reports but cannot be named.
	_, o = org(t, []string{"x", "y"}, map[string]string{"x": "ghost", "y": "x"})
	if _, err := o.Management("ghost"); !errors.Is(err, ErrUnknownManager) {
		t.Errorf("ghost manager: %v", err)
	}
}

func TestOrgchartMissingPeople(t *testing.T) {
	// Every person must be in the map with a manager, or every management rule fails.
	_, o := org(t, []string{"boss", "x", "y"}, map[string]string{"boss": "boss", "x": "boss"})
	for _, f := range []func(string) (*roaring.Bitmap, error){o.Management, o.DirectReports} {
		if _, err := f("boss"); err == nil || !strings.Contains(err.Error(), "User y is not included in manager map data!") {
			t.Errorf("missing person: %v", err)
		}
	}
	d, _ := org(t, []string{"boss", "X"}, nil)
	o = NewOrgchart(d, map[string]Manager{"boss": {UID: "boss"}, "x": {None: true}})
	if _, err := o.Management("boss"); err == nil || !strings.Contains(err.Error(), "User x does not have a manager listed") {
		t.Errorf("person without manager: %v", err)
	}
}

// Issue 23: in Ruby only nil and false are "no manager"; the empty string is a manager, one
// who is nobody, so the person is not a root and still has their own reports.
func TestOrgchartEmptyManagerIsAValue(t *testing.T) {
	d, o := org(t, []string{"alice", "bob", "carol"}, map[string]string{"alice": "alice", "bob": "", "carol": "bob"})
	for _, f := range []func(string) (*roaring.Bitmap, error){o.Management, o.DirectReports} {
		got, err := f("bob")
		if err != nil || !slices.Equal(uidsOf(d, got), []string{"bob", "carol"}) {
			t.Errorf("bob's organisation: %v %v, want [bob carol]", got, err)
		}
	}
	if _, err := o.Management("alice"); !errors.Is(err, ErrNoReports) {
		t.Errorf("alice: %v, want no reports (bob reports to \"\", not to alice)", err)
	}
	id, _ := d.Lookup("carol")
	if got := o.Chain(id, "bob"); !slices.Equal(got, []string{"carol", "bob"}) {
		t.Errorf("Chain(carol, bob) = %q", got)
	}
}

func TestLoadManagerMap(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mm, err := LoadManagerMap(write("m.yaml", "boss: {manager: boss, status: [x]}\nbob:\n  manager: Boss\nnomgr: {status: [y]}\n"+
		"nothing:\nnil: {manager: ~}\nno: {manager: no}\nempty: {manager: ''}\nnum: {manager: '123'}\nlist: [manager]\n"))
	if err != nil {
		t.Fatal(err)
	}
	none := Manager{None: true}
	want := map[string]Manager{"boss": {UID: "boss"}, "bob": {UID: "Boss"}, "nomgr": none, "nothing": none, "nil": none,
		"false": none, "empty": {UID: ""}, "num": {UID: "123"}, "list": none}
	if !reflect.DeepEqual(mm, want) {
		t.Errorf("manager map %v, want %v", mm, want)
	}
	// A manager that is neither a string nor null/false: every one is reported, at its line.
	_, err = LoadManagerMap(write("bad.yaml", "a: {manager: 123}\nb: {manager: a}\nc:\n  manager:\n  - a\nd: {manager: yes}\n"+
		"e: {manager: 2026-01-01}\nf: {manager: 1.5}\ng: {manager: {uid: a}}\n"))
	var les LineErrors
	if !errors.As(err, &les) {
		t.Fatalf("err = %v, want LineErrors", err)
	}
	var got []string
	for _, le := range les {
		got = append(got, le.Error())
	}
	wantErrs := []string{
		`line 1: manager of "a" is an Integer (123), not a string (quote it if it is a uid)`,
		`line 5: manager of "c" is an Array (["a"]), not a string (quote it if it is a uid)`,
		`line 6: manager of "d" is a TrueClass (yes), not a string (quote it if it is a uid)`,
		`line 7: manager of "e" is a Date (2026-01-01), not a string (quote it if it is a uid)`,
		`line 8: manager of "f" is a Float (1.5), not a string (quote it if it is a uid)`,
		`line 9: manager of "g" is a Hash ({"uid"=>"a"}), not a string (quote it if it is a uid)`,
	}
	if !slices.Equal(got, wantErrs) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantErrs, "\n"))
	}
	if mm, err := LoadManagerMap(write("e.yaml", "")); err != nil || len(mm) != 0 {
		t.Errorf("empty map: %v %v", mm, err)
	}
	if _, err := LoadManagerMap(write("l.yaml", "- a\n")); err == nil {
		t.Error("list accepted")
	}
	if _, err := LoadManagerMap(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
