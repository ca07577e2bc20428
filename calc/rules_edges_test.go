package calc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

// Cases written from mutation testing (issue 15): each one fails under a small deliberate
// bug of the evaluator or the reference parser that the other tests let through.

func TestAndOfThreeOrMore(t *testing.T) {
	runFileCases(t, []fileCase{
		// management alice = alice bob Carol dave; management bob = bob dave. The third term
		// removes dave, who is in both of the others: an and that looked at two terms only
		// would keep him.
		yc("the third term of an and counts", "rules:\n  and:\n    - management: alice\n    - management: bob\n    - not:\n        username: dave\n", "bob"),
		yc("so does the first", "rules:\n  and:\n    - not:\n        username: dave\n    - management: alice\n    - management: bob\n", "bob"),
		// Only an and of nots is merged into its parent and: an or of nots is not (bob and dave
		// are each outside one of the nots, so the or keeps both).
		yc("or of nots inside an and", "rules:\n  and:\n    - management: alice\n    - or:\n        - not:\n            username: bob\n        - not:\n            username: dave\n", "Carol", "alice", "bob", "dave"),
		yc("and of nots inside an and", "rules:\n  and:\n    - management: alice\n    - and:\n        - not:\n            username: bob\n        - not:\n            username: dave\n", "Carol", "alice"),
		yc("and of four", "rules:\n  and:\n    - management: boss\n    - management: alice\n    - management: bob\n    - username: dave\n", "dave"),
	})
}

func TestWildcardIsAnchored(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "a*b matches ab and axb, not axbc or xab", files: map[string]string{
			ax:                         "group = b/a*b\n",
			"ldap-config/b/ab.txt":     "username = alice\n",
			"ldap-config/b/axb.txt":    "username = bob\n",
			"ldap-config/b/axbc.txt":   "username = dave\n",
			"ldap-config/b/xab.txt":    "username = eve\n",
			"ldap-config/b/a-b-b.yaml": "rules:\n  username: mallory\n"},
			want: map[string][]string{"a/x": {"alice", "bob", "mallory"}}},
	})
}

func TestEmptyOUInAReference(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "group = /y", files: map[string]string{ax: "username = bob\ngroup = /y\n", ay: "username = alice\n"},
			errs: []errSpec{ee(validate.KindInvalidReference, ax, 2)}},
		{name: "yaml group: /y", files: map[string]string{"ldap-config/a/x.yaml": "rules:\n  or:\n    - username: bob\n    - group: /y\n", ay: "username = alice\n"},
			errs: []errSpec{ee(validate.KindInvalidReference, "ldap-config/a/x.yaml", 4)}},
	})
}

// A wildcard's matches are taken in the reference's file order ("foo-bar.txt" before
// "foo.txt"), which decides the order of an explanation's groups; each is shown with its
// own rules.
func TestWildcardMatchesInFileOrder(t *testing.T) {
	res := mustRun(t, map[string]string{
		ax:                          "group = b/foo*\n",
		"ldap-config/b/foo.txt":     "username = bob\n",
		"ldap-config/b/foo-bar.txt": "username = alice\nusername = bob\n",
	}, Options{})
	ex, err := res.Explain("a/x", "bob")
	if err != nil {
		t.Fatal(err)
	}
	tr := findTrace(ex.Rules, func(tr *Trace) bool { return len(tr.Via) > 0 })
	if tr == nil || len(tr.Via) != 2 || tr.Via[0].Group != "b/foo-bar" || tr.Via[1].Group != "b/foo" {
		t.Fatalf("via %+v; want b/foo-bar then b/foo", tr)
	}
	var buf bytes.Buffer
	ex.WriteText(&buf)
	want := "        via b/foo-bar (ldap-config/b/foo-bar.txt)\n" +
		"          + any of\n" +
		"            - username = alice (line 1)\n" +
		"            + username = bob (line 2)\n" +
		"        via b/foo (ldap-config/b/foo.txt)\n" +
		"          + any of\n" +
		"            + username = bob (line 1)\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("text:\n%s\nwant it to contain:\n%s", buf.String(), want)
	}
}

func TestWildcardSeveralStars(t *testing.T) {
	files := map[string]string{ax: "group = b/a*b*c\n"}
	for cn, in := range map[string]bool{"abc": true, "a-b-c": true, "axxbyyc": true, "abbc": true, "a_c_b_c": true,
		"acb": false, "abcd": false, "a-c": false, "xabc": false, "ab": false} {
		uid := "nobody"
		if in {
			uid = "bob"
		}
		files["ldap-config/b/"+cn+".txt"] = "username = " + uid + "\n"
	}
	res := mustRun(t, files, Options{})
	ex, err := res.Explain("a/x", "bob")
	if err != nil {
		t.Fatal(err)
	}
	tr := findTrace(ex.Rules, func(tr *Trace) bool { return len(tr.Via) > 0 })
	var got []string
	for _, v := range tr.Via {
		got = append(got, v.Group)
	}
	if want := []string{"b/a-b-c", "b/a_c_b_c", "b/abbc", "b/abc", "b/axxbyyc"}; !slices.Equal(got, want) {
		t.Errorf("a*b*c matched %v; want %v", got, want)
	}
}

// A wildcard that matches groups being computed skips them: silently when it is the group
// itself, with a warning otherwise (the result depends on the order of evaluation).
func TestWildcardSkipsGroupsBeingComputed(t *testing.T) {
	repo, ws, err := loadWarned(t, map[string]string{
		ax:                      "group = b/w\nusername = alice\n",
		az:                      "username = bob\n",
		"ldap-config/b/w.txt":   "group = a/*\n",
		"ldap-config/b/v.txt":   "group = b/*\nusername = eve\n",
		"ldap-config/b/u-1.txt": "username = dave\n",
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ldap-config/b/w.txt:1: wildcard a/* skips a/x, which is being computed (an order-dependent cycle)"}
	if warns := warningTexts(ws); !slices.Equal(warns, want) {
		t.Errorf("warnings %q; want %q", warns, want)
	}
	res, err := repo.Calculate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantMembers(t, res, "a/x", "alice", "bob")
	wantMembers(t, res, "b/w", "bob")
	wantMembers(t, res, "b/v", "bob", "dave", "eve") // b/u-1, b/w and its own line
}

// Messages are compared whole: a suggestion where none fits, or the text of the sentinel
// error that classified a problem, must not leak into them.
func TestErrorMessagesExact(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		opt   Options
		kind  validate.Kind
		msg   string
	}{
		{"unknown manager with a close uid", map[string]string{ax: "management = alcie\n"}, Options{},
			validate.KindUnknownManager, `Manager alcie does not exist! Did you mean "alice"?`},
		{"unknown manager without one", map[string]string{ax: "management = qqqqqqqqqqqqq\n"}, Options{},
			validate.KindUnknownManager, "Manager qqqqqqqqqqqqq does not exist!"},
		{"a person missing from the manager map", map[string]string{
			"manager-map.yaml": strings.Replace(stdManagerMap, "dave: {manager: bob}\n", "", 1), ax: "management = eve\n"}, Options{},
			validate.KindPeople, "User dave is not included in manager map data!"},
		{"an LDAP group that does not exist", map[string]string{"config.yaml": conf{Extras: "  ldap_group: {}\n"}.String(),
			ax: "ldap_group = cn=nope,ou=groups,dc=example\n"},
			Options{LDAPGroups: NewLDAPSnapshot()},
			validate.KindLDAPGroup, "Failed to read ldap_group = cn=nope,ou=groups,dc=example (no such LDAP group)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := mustFail(t, c.files, c.opt)
			if len(errs) != 1 || errs[0].Kind != c.kind || errs[0].Msg != c.msg {
				t.Fatalf("errors %v; want one %s: %q", errs, c.kind, c.msg)
			}
			if msg := errs[0].Msg; strings.Contains(msg, errLDAPGroupNotFound.Error()) || strings.Contains(msg, people.ErrManagerMap.Error()) {
				t.Errorf("message %q ends with the text of its sentinel error", msg)
			}
		})
	}
}

// A group that fails to link still has its filter entries checked: under Strict, a filter
// list naming nobody is an error next to the broken reference.
func TestFilterEntriesOfABrokenGroup(t *testing.T) {
	errs := mustFail(t, map[string]string{
		"config.yaml":                     conf{Filters: contractorsFilter}.String(),
		"ldap-config/lib/contractors.txt": "username = mallory\n",
		ax:                                "group = a/missing\ncontractors = ghost\n",
	}, Options{Strict: true})
	wantErrs(t, errs, ee(validate.KindMissingReference, ax, 1),
		ee(validate.KindUnknownPerson, ax, 2, `filter contractors entry "ghost" names nobody`))
}

// A referenced dummy group that fails is reported as an error once; its description
// problems (which the reference never reads for a referenced file) add no warning.
func TestFailedReferencedDummyGroupWarnsNothing(t *testing.T) {
	_, ws, err := loadWarned(t, map[string]string{
		ax:                         "group = lib/t\n",
		"ldap-config/lib/t.txt":    "description != x\ngroup = lib/missing\n",
		"ldap-config/lib/ok.txt":   "username = bob\n",
		"ldap-config/lib/bad.yaml": "rules: [\n",
	}, Options{})
	warns := warningTexts(ws)
	var errs validate.List
	if !errors.As(err, &errs) {
		t.Fatalf("load: %v", err)
	}
	wantErrs(t, errs, ee(validate.KindMissingReference, "ldap-config/lib/t.txt", 2))
	// The unreferenced broken file is a warning; the referenced one is not warned about.
	if len(warns) != 1 || !strings.HasPrefix(warns[0], "ldap-config/lib/bad.yaml:") {
		t.Errorf("warnings %q; want one, for lib/bad.yaml", warns)
	}
}

// An error of LDAPGroupsFor fails the load, wrapped so that callers can tell what it was.
func TestLDAPGroupsForError(t *testing.T) {
	errBroken := errors.New("no LDAP settings")
	_, _, err := loadRepo(t, map[string]string{ax: "username = bob\n"}, Options{
		LDAPGroupsFor: func(*config.Config) (LDAPGroupReader, error) { return nil, errBroken },
	})
	if !errors.Is(err, errBroken) {
		t.Fatalf("load error %v; want %v", err, errBroken)
	}
}

// LDAPGroups, when set, wins over LDAPGroupsFor, which is then never called.
func TestLDAPGroupsWinsOverLDAPGroupsFor(t *testing.T) {
	res := mustRun(t, map[string]string{ax: "username = bob\n"}, Options{
		LDAPGroups:    NewLDAPSnapshot(),
		LDAPGroupsFor: func(*config.Config) (LDAPGroupReader, error) { return nil, errors.New("LDAPGroupsFor called") },
	})
	wantMembers(t, res, "a/x", "bob")
}

// Combined people sources may nest eight deep (the yaml source at depth eight); one more is
// refused rather than followed.
func TestCombinedPeopleNestingLimit(t *testing.T) {
	config := func(levels int) string {
		var b strings.Builder
		b.WriteString("people:\n  main:\n    type: yaml\n    config:\n      filename: {{ROOT}}/people.yaml\n")
		for i := range levels {
			next := fmt.Sprintf("c%d", i+1)
			if i == levels-1 {
				next = "main"
			}
			fmt.Fprintf(&b, "  c%d:\n    type: combined\n    config:\n      operator: or\n      components: [%s]\n", i, next)
		}
		b.WriteString("people_data_source: c0\n")
		return strings.Replace(conf{}.String(), "people:\n  yaml:\n    type: yaml\n    config:\n      filename: {{ROOT}}/people.yaml\npeople_data_source: yaml\n", b.String(), 1)
	}
	res := mustRun(t, map[string]string{"config.yaml": config(8), ax: "username = bob\n"}, Options{})
	wantMembers(t, res, "a/x", "bob")
	errs := mustFail(t, map[string]string{"config.yaml": config(9), ax: "username = bob\n"}, Options{})
	wantErrs(t, errs, ee(validate.KindPeople, "config.yaml", -1, "nest too deeply"))
}

// A reference may name a file of an OU that is not enumerated (a member_of OU's directory):
// its record is made and parsed when the reference is linked.
func TestReferenceIntoAnOUThatIsNotEnumerated(t *testing.T) {
	groups := stdGroups + "  mo:\n    type: member_of\n    memberof_attribute: shellentitlements\n    ou: [a]\n" +
		"    ldap_uri: ldaps://ldap.example.net\n    ldap_binddn: uid=binder,dc=example\n    ldap_bindpw: x\n    person_dn_format: uid=%KEY%,dc=example\n"
	res := mustRun(t, map[string]string{"config.yaml": conf{Groups: groups}.String(),
		ax: "username = bob\n", by: "group = mo/x\ngroup = mo/z\n",
		"ldap-config/mo/x.txt": "username = alice\n", "ldap-config/mo/z.txt": "username = eve\n"}, Options{})
	wantKeys(t, res, "a/x", "b/y")
	wantMembers(t, res, "b/y", "alice", "eve")
}

// readAheadFS is a file system that is told the order of the reads ahead (as a git tree is).
type readAheadFS struct {
	fstest.MapFS
	mu    sync.Mutex
	ahead [][]string
	reads []string
}

func (f *readAheadFS) ReadAhead(names []string) {
	f.mu.Lock()
	f.ahead = append(f.ahead, slices.Clone(names))
	f.mu.Unlock()
}

func (f *readAheadFS) Open(name string) (fs.File, error) {
	f.record(name)
	return f.MapFS.Open(name)
}

func (f *readAheadFS) ReadFile(name string) ([]byte, error) {
	f.record(name)
	return f.MapFS.ReadFile(name)
}

func (f *readAheadFS) record(name string) {
	if strings.HasPrefix(name, "ldap-config/") && strings.HasSuffix(name, ".txt") {
		f.mu.Lock()
		f.reads = append(f.reads, name)
		f.mu.Unlock()
	}
}

// A full load announces every group file it will parse, and then reads them in that order
// (with one parse worker), not in the order references are followed. An incremental load
// that reuses the base's definitions announces nothing.
func TestReadAheadOrder(t *testing.T) {
	m := fstest.MapFS{
		"config.yaml":      {Data: []byte(conf{People: "people.yaml"}.String())},
		"people.yaml":      {Data: []byte(stdPeople)},
		"manager-map.yaml": {Data: []byte(stdManagerMap)},
		ax:                 {Data: []byte("group = b/y\n")},
		ay:                 {Data: []byte("username = bob\n")},
		by:                 {Data: []byte("username = alice\n")},
		// Not announced: a Ruby file is never read, a duplicate cn is an error before any read.
		"ldap-config/lib/r.rb":   {Data: []byte("# ruby\n")},
		"ldap-config/lib/d.txt":  {Data: []byte("username = bob\n")},
		"ldap-config/lib/d.yaml": {Data: []byte("rules:\n  username: bob\n")},
	}
	fsys := &readAheadFS{MapFS: m}
	opt := Options{Now: testNow, Parallelism: 1, Types: backends.Types()}
	base, err := LoadFS(t.Context(), fsys, "config.yaml", opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ax, ay, by}
	if len(fsys.ahead) != 1 || !slices.Equal(fsys.ahead[0], want) || !slices.Equal(fsys.reads, want) {
		t.Errorf("announced %q, read %q; want %q both", fsys.ahead, fsys.reads, want)
	}
	if _, err := base.Calculate(t.Context()); err != nil {
		t.Fatal(err)
	}
	again := &readAheadFS{MapFS: m}
	opt.Incremental = &Incremental{Base: base, Changed: func(string) bool { return false }}
	if _, err := LoadFS(t.Context(), again, "config.yaml", opt); err != nil {
		t.Fatal(err)
	}
	if len(again.ahead) != 0 || len(again.reads) != 0 {
		t.Errorf("incremental load announced %q and read %q; want nothing", again.ahead, again.reads)
	}
}

// An unknown filter key suggests the closest configured filter, or says there is none.
func TestUnknownFilterHint(t *testing.T) {
	runRepoCases(t, []repoCase{
		{name: "with filters configured", files: map[string]string{
			"config.yaml": conf{Filters: contractorsFilter}.String(), "ldap-config/lib/contractors.txt": "username = mallory\n",
			ax: "username = bob\nfilter_contractor = all\n"},
			errs: []errSpec{ee(validate.KindFilter, ax, 2, `the key filter_contractor is invalid (no filter "contractor" is configured); did you mean "contractors"? (configured filters: contractors)`)}},
		{name: "without filters", files: map[string]string{ax: "username = bob\nfilter_contractors = all\n"},
			errs: []errSpec{ee(validate.KindFilter, ax, 2, `the key filter_contractors is invalid (no filter "contractors" is configured); the configuration defines no filters`)}},
	})
}

// A comment may take a whole value; "&=" lines of single-valued keys are ignored with a
// warning, and only they are warned about.
func TestTxtCommentsAndIgnoredLines(t *testing.T) {
	cases := []struct {
		name, body string
		warns      []string
		meta       map[string]any
		desc       string
	}{
		{"a value that is all comment", "username = bob\nusername = # c\n",
			[]string{`ldap-config/a/x.txt:2: username "" names nobody in the people data`}, map[string]any{}, "x"},
		{"a metadata value that is all comment", "username = bob\nmetadata_owner = # c\n", nil, map[string]any{"owner": ""}, "x"},
		{"one metadata line", "username = bob\nmetadata_owner = x\n", nil, map[string]any{"owner": "x"}, "x"},
		{"a metadata &= line", "username = bob\nmetadata_owner = x\nmetadata_owner &= y\n",
			[]string{"ldap-config/a/x.txt:3: the '&=' line of metadata_owner is ignored"}, map[string]any{"owner": "x"}, "x"},
		{"a description &= line", "description = A\ndescription &= B\nusername = bob\n",
			[]string{"ldap-config/a/x.txt:2: the '&=' line of description is ignored"}, map[string]any{}, "A"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo, _, err := loadRepo(t, map[string]string{ax: c.body}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := warningsOf(repo); !slices.Equal(got, c.warns) {
				t.Errorf("warnings %q; want %q", got, c.warns)
			}
			res, err := repo.Calculate(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			g := res.Group("a/x")
			if fmt.Sprint(g.Metadata) != fmt.Sprint(c.meta) || g.Description != c.desc {
				t.Errorf("metadata %v, description %q; want %v, %q", g.Metadata, g.Description, c.meta, c.desc)
			}
		})
	}
}

// Group names are ASCII letters, digits, "_" and "-", the ends of each range included.
func TestGroupNameCharacters(t *testing.T) {
	res := mustRun(t, map[string]string{
		"ldap-config/a/azAZ09_-.txt": "username = bob\n", ax: "group = a/azAZ09_-\n",
		"ldap-config/a/Z.txt": "username = alice\n", "ldap-config/a/9.yaml": "rules:\n  username: eve\n",
	}, Options{})
	wantKeys(t, res, "a/9", "a/Z", "a/azAZ09_-", "a/x")
	wantMembers(t, res, "a/x", "bob")
}

// An explanation lists a YAML file's expired rules by their first key: with its value when
// that is a scalar, with "..." when it is a list or a map.
func TestExplainExpiredYAMLRules(t *testing.T) {
	res := mustRun(t, map[string]string{"ldap-config/a/x.yaml": `rules:
  or:
    - username: bob
      expiration: "2020-01-01"
    - and:
        - management: alice
      expiration: "2020-01-02"
    - not:
        username: eve
      expiration: "2020-01-03"
    - not:
        expiration: "2020-01-04"
    - username: eve
`}, Options{})
	ex, err := res.Explain("a/x", "eve")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ex.ExpiredLines {
		got = append(got, fmt.Sprintf("%d %q %s", l.Line, l.Text, l.Date))
	}
	want := []string{`3 "username: bob" 2020-01-01`, `5 "and: ..." 2020-01-02`, `8 "not: ..." 2020-01-03`, `12 "" 2020-01-04`}
	if !slices.Equal(got, want) {
		t.Errorf("expired lines %q; want %q", got, want)
	}
}

// A snapshot's attributes: a list, a single value (lower-cased names), or null for none.
func TestLDAPSnapshotAttributes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "groups.yaml")
	text := "cn=ops,ou=Groups,dc=example:\n  objectClass: [groupOfNames]\n  Member: uid=bob,ou=People,dc=example\n  description:\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadLDAPSnapshot(p)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := s.ReadLDAPGroups(t.Context(), []string{"CN=ops,ou=groups,dc=example"})
	if err != nil {
		t.Fatal(err)
	}
	g := gs["CN=ops,ou=groups,dc=example"] // found by normalised DN, keyed as asked
	want := map[string][]string{"objectclass": {"groupOfNames"}, "member": {"uid=bob,ou=People,dc=example"}}
	if g == nil || fmt.Sprint(g.Attrs) != fmt.Sprint(want) {
		t.Fatalf("snapshot groups %v; want one with attributes %v", gs, want)
	}
}
