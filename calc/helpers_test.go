package calc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/internal/corpus"
	"github.com/entitlements-go/entitlements/validate"
)

// Test fixtures: a small repository built in t.TempDir() from a map of path → content.
//
// Unless a test supplies its own, every repository gets
//   - config.yaml  = conf{}.String(): ldap OUs "a" and "b" (backend preset "l"), dummy OU "lib",
//     the orgchart extra, the yaml people source with an absolute filename;
//   - people.yaml  = stdPeople, manager-map.yaml = stdManagerMap;
//   - the directories ldap-config/a, ldap-config/b and ldap-config/lib.
//
// "{{ROOT}}" in any content is replaced by the absolute temp directory, so configs can name the
// people file absolutely (it is resolved against the working directory, not the config dir).

// testNow is "today" for every test that does not set its own: 2024-06-15, mid-day UTC.
var testNow = time.Date(2024, 6, 15, 12, 0, 0, 0, time.UTC)

// stdPeople, in byte order: Carol alice bob boss dave eve mallory.
const stdPeople = `boss: {cn: The Boss}
alice: {cn: Alice}
bob: {cn: Bob}
Carol: {cn: Carol}
dave: {cn: Dave}
eve: {cn: Eve}
mallory: {cn: Mallory}
`

// stdManagerMap: boss → alice → bob → dave, alice → carol, boss → eve → mallory.
const stdManagerMap = `boss: {manager: boss}
alice: {manager: boss}
bob: {manager: alice}
carol: {manager: alice}
dave: {manager: bob}
eve: {manager: boss}
mallory: {manager: eve}
`

var everyone = []string{"Carol", "alice", "bob", "boss", "dave", "eve", "mallory"}

const stdGroups = `  a:
    backend: l
    base: ou=a,dc=example
  b:
    backend: l
    base: ou=b,dc=example
  lib:
    type: dummy
`

// conf builds a config.yaml. Zero fields take the defaults described above.
type conf struct {
	Groups     string // lines under "groups:" (indented two spaces); default stdGroups
	Filters    string // lines under "filters:"
	Extras     string // extra lines under "extras:"
	NoOrgchart bool
	Top        string // extra top-level lines
	People     string // people file name (default {{ROOT}}/people.yaml)
}

func (c conf) String() string {
	var b strings.Builder
	b.WriteString("configuration_path: ./ldap-config\n")
	b.WriteString(`backends:
  l:
    type: ldap
    ldap_uri: ldaps://ldap.example.net
    ldap_binddn: uid=binder,ou=People,dc=example
    ldap_bindpw: secret
    person_dn_format: uid=%KEY%,ou=People,dc=example
`)
	people := c.People
	if people == "" {
		people = "{{ROOT}}/people.yaml"
	}
	fmt.Fprintf(&b, "people:\n  yaml:\n    type: yaml\n    config:\n      filename: %s\npeople_data_source: yaml\n", people)
	groups := c.Groups
	if groups == "" {
		groups = stdGroups
	}
	b.WriteString("groups:\n" + groups)
	if c.Filters != "" {
		b.WriteString("filters:\n" + c.Filters)
	}
	if !c.NoOrgchart || c.Extras != "" {
		b.WriteString("extras:\n")
		if !c.NoOrgchart {
			b.WriteString("  orgchart:\n    manager_map_file: ./manager-map.yaml\n")
		}
		b.WriteString(c.Extras)
	}
	b.WriteString(c.Top)
	return b.String()
}

// contractorsFilter is a MemberOfGroup filter on lib/contractors.
const contractorsFilter = `  contractors:
    class: Entitlements::Data::Groups::Calculated::Filters::MemberOfGroup
    config:
      group: lib/contractors
`

// build writes files into a fresh temporary directory and returns it.
func build(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	all := map[string]string{
		"config.yaml":      conf{}.String(),
		"people.yaml":      stdPeople,
		"manager-map.yaml": stdManagerMap,
	}
	for k, v := range files {
		all[k] = v
	}
	for _, d := range []string{"a", "b", "lib"} {
		if err := os.MkdirAll(filepath.Join(root, "ldap-config", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range all {
		p := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") { // a directory only
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "{{ROOT}}", root)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// defaults fills the options every test wants: the fixed clock, paths relative to root, and an
// empty environment.
func defaults(opt Options, root string) Options {
	if opt.Now.IsZero() {
		opt.Now = testNow
	}
	if opt.BaseDir == "" {
		opt.BaseDir = root
	}
	if opt.Getenv == nil {
		opt.Getenv = func(string) (string, bool) { return "", false }
	}
	if opt.Types == nil {
		opt.Types = backends.Types()
	}
	return opt
}

// loadRepo builds the files and loads the repository.
func loadRepo(t testing.TB, files map[string]string, opt Options) (*Repo, string, error) {
	t.Helper()
	root := build(t, files)
	repo, err := Load(context.Background(), filepath.Join(root, "config.yaml"), defaults(opt, root))
	return repo, root, err
}

// loadWarned is loadRepo that also returns the warnings the load emitted (Options.OnWarning),
// which a failed load does not keep anywhere else.
func loadWarned(t testing.TB, files map[string]string, opt Options) (*Repo, []validate.Warning, error) {
	t.Helper()
	var warns []validate.Warning
	opt.OnWarning = func(w validate.Warning) { warns = append(warns, w) }
	repo, _, err := loadRepo(t, files, opt)
	return repo, warns, err
}

// warningTexts renders warnings as "path:line: message".
func warningTexts(ws []validate.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

// run builds, loads and calculates. It returns either the result or the validation errors; any
// other kind of error fails the test.
func run(t testing.TB, files map[string]string, opt Options) (*Result, validate.List) {
	t.Helper()
	repo, _, err := loadRepo(t, files, opt)
	if err != nil {
		var l validate.List
		if errors.As(err, &l) {
			return nil, l
		}
		var e *validate.Error
		if errors.As(err, &e) {
			return nil, validate.List{e}
		}
		t.Fatalf("Load returned a non-validation error: %v", err)
	}
	res, err := repo.Calculate(context.Background())
	if err != nil {
		// A few problems are only known once members are (a broken filter-list entry that a
		// member reaches); they come back as validation errors too.
		var l validate.List
		if errors.As(err, &l) {
			return nil, l
		}
		t.Fatalf("Calculate failed after a successful Load: %v", err)
	}
	return res, nil
}

// mustRun is run for repositories that must load.
func mustRun(t testing.TB, files map[string]string, opt Options) *Result {
	t.Helper()
	res, errs := run(t, files, opt)
	if errs != nil {
		t.Fatalf("unexpected errors:\n%v", errs)
	}
	return res
}

// mustFail is run for repositories that must not load.
func mustFail(t testing.TB, files map[string]string, opt Options) validate.List {
	t.Helper()
	res, errs := run(t, files, opt)
	if errs == nil {
		var keys []string
		for _, g := range res.Groups {
			keys = append(keys, fmt.Sprintf("%s=%v", g.Key, g.Members))
		}
		t.Fatalf("calculation succeeded; want errors. groups: %v", keys)
	}
	return errs
}

// members returns the members of a group of the result (the test fails when it is absent).
func members(t testing.TB, res *Result, key string) []string {
	t.Helper()
	g := res.Group(key)
	if g == nil {
		var keys []string
		for _, g := range res.Groups {
			keys = append(keys, g.Key)
		}
		t.Fatalf("no group %s in the result (have %v)", key, keys)
	}
	return g.Members
}

// wantMembers asserts the exact member list (already byte-sorted by the engine).
func wantMembers(t testing.TB, res *Result, key string, want ...string) {
	t.Helper()
	got := members(t, res, key)
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: members %q, want %q", key, got, want)
	}
}

// wantKeys asserts the exact set of group keys of the result.
func wantKeys(t testing.TB, res *Result, want ...string) {
	t.Helper()
	var got []string
	for _, g := range res.Groups {
		got = append(got, g.Key)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("groups %q, want %q", got, want)
	}
}

// errSpec describes one expected validation error. Line -1 accepts any line; Msg is a substring
// the message must contain (empty: not checked).
type errSpec struct {
	Kind validate.Kind
	Path string
	Line int
	Msg  string
}

func (s errSpec) String() string { return fmt.Sprintf("%s:%d [%s] %q", s.Path, s.Line, s.Kind, s.Msg) }

func (s errSpec) matches(e *validate.Error) bool {
	return e.Kind == s.Kind && e.Path == s.Path && (s.Line < 0 || e.Line == s.Line) &&
		strings.Contains(e.Msg, s.Msg)
}

// wantErrs asserts that errs are exactly the expected errors (in any order).
func wantErrs(t testing.TB, errs validate.List, want ...errSpec) {
	t.Helper()
	used := make([]bool, len(errs))
	ok := len(errs) == len(want)
	for _, w := range want {
		found := false
		for i, e := range errs {
			if !used[i] && w.matches(e) {
				used[i], found = true, true
				break
			}
		}
		ok = ok && found
	}
	if !ok {
		var got []string
		for _, e := range errs {
			got = append(got, fmt.Sprintf("%s:%d [%s] %s", e.Path, e.Line, e.Kind, e.Msg))
		}
		var ws []string
		for _, w := range want {
			ws = append(ws, w.String())
		}
		t.Errorf("errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(ws, "\n  "))
	}
}

// wantOneErr asserts a single error of that kind at path:line.
func wantOneErr(t testing.TB, errs validate.List, kind validate.Kind, path string, line int) {
	t.Helper()
	wantErrs(t, errs, errSpec{Kind: kind, Path: path, Line: line})
}

// warningsOf returns the warnings of a loaded repository as "path:line: msg" strings.
func warningsOf(r *Repo) []string {
	var out []string
	for _, w := range r.Warnings() {
		out = append(out, w.String())
	}
	return out
}

func hasWarning(r *Repo, path, substr string) bool {
	for _, w := range r.Warnings() {
		if w.Path == path && strings.Contains(w.Msg, substr) {
			return true
		}
	}
	return false
}

// corpusFiles returns the contents of every corpus file with that extension (for fuzz seeds).
func corpusFiles(ext string) [][]byte {
	root, err := corpus.Find()
	if err != nil {
		return nil
	}
	var out [][]byte
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ext) {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
		return nil
	})
	return out
}
