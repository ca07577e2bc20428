package calc

import (
	"bytes"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/validate"
)

// The fuzz targets call the definition parsers directly. Property: they never panic, they are
// deterministic, and a definition they accept is internally consistent (a well-formed rule
// tree of registered methods, filter settings that obey the all/none rules, values stripped of
// comments and predicates). Seeds come from the conformance corpus when it is present.
//
//	go test -run='^$' -fuzz=FuzzParseTxt -fuzztime=45s ./calc
//	go test -run='^$' -fuzz=FuzzParseYAMLRules -fuzztime=45s ./calc

var fuzzMethods = map[string]bool{"username": true, "group": true, "management": true, "direct_report": true, "ldap_group": true}
var fuzzFilters = map[string]bool{"contractors": true, "pre-hires": true, "lockout": true}

// maxLines bounds the line numbers a message about data may carry: YAML also breaks lines at
// "\r" and at the Unicode line separators.
func maxLines(data []byte) int {
	n := 1
	for _, sep := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		n += bytes.Count(data, []byte(sep))
	}
	return n
}

func fuzzParser(ignore bool) *parser {
	return &parser{rel: "ldap-config/a/x", today: validate.Today(testNow), ignoreExp: ignore,
		methods: fuzzMethods, filters: fuzzFilters}
}

var txtSeeds = []string{
	"username = bob\n",
	"description = a; b # c\nusername = bob # x\nusername != alice; expiration = 2099-02-30;\n",
	"management &= alice\nusername &= bob ; expiration = 2020-01-01\ngroup = a/b*\n",
	"contractors = all\nfilter_pre-hires = none\nlockout = bob; expiration = 2099-01-01\n",
	"metadata_no_conditions_ok = true\nusername != bob\n",
	"expiration = 20200101\nusername = bob\n",
	"metadata_ = x\nfilter_ = y\nmodifier_ = z\n",
	"username == bob\r\n\tusername=alice\r\n",
	"username = bob;;expiration=x\nusername = ; \ncontractor = x\n",
}

func FuzzParseTxt(f *testing.F) {
	for _, s := range txtSeeds {
		f.Add([]byte(s))
	}
	for _, b := range corpusFiles(".txt") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTxtModel(t, data)
		for _, ignore := range []bool{false, true} {
			p := fuzzParser(ignore)
			def := p.parseTxt(data)
			checkParse(t, p, def, maxLines(data))
			if def == nil {
				continue
			}
			checkTxtDefinition(t, def)
			// Deterministic.
			p2 := fuzzParser(ignore)
			if def2 := p2.parseTxt(data); !reflect.DeepEqual(def, def2) || !reflect.DeepEqual(p.errs, p2.errs) {
				t.Fatalf("parseTxt is not deterministic")
			}
		}
	})
}

// checkParse: errors and a definition exclude each other; errors are well-formed.
func checkParse(t *testing.T, p *parser, def *definition, nlines int) {
	t.Helper()
	if (def == nil) == (len(p.errs) == 0) {
		t.Fatalf("definition %v with %d errors: %v", def != nil, len(p.errs), p.errs)
	}
	for _, e := range p.errs {
		if e.Path != p.rel || e.Kind == "" || e.Msg == "" || e.Line < 0 || e.Line > nlines {
			t.Fatalf("malformed error %+v (file has %d lines)", e, nlines)
		}
	}
	for _, w := range p.warns {
		if w.Path != p.rel || w.Line < 0 || w.Line > nlines {
			t.Fatalf("malformed warning %+v", w)
		}
	}
	for _, x := range p.expired {
		if x.date.IsZero() || (!p.ignoreExp && !x.date.Reached(p.today)) {
			t.Fatalf("expired line %+v has a date that is not reached", x)
		}
	}
	if p.ignoreExp && len(p.expired) > 0 {
		t.Fatalf("lines expired with ignore_expirations: %+v", p.expired)
	}
	if def != nil {
		if def.rules == nil {
			t.Fatal("definition without a rule tree")
		}
		checkTree(t, def.rules, 0)
		checkFilters(t, def)
		seen := map[string]bool{}
		for _, m := range def.metadata {
			if m.key == "" || seen[m.key] {
				t.Fatalf("metadata key %q empty or repeated", m.key)
			}
			seen[m.key] = true
		}
		if !def.fileExp.IsZero() && def.fileExpLine <= 0 {
			t.Fatalf("file expiration without a line")
		}
	}
}

func checkTree(t *testing.T, n *rule, depth int) {
	t.Helper()
	if n == nil {
		t.Fatal("nil rule node")
	}
	if depth > 1000 {
		t.Fatal("rule tree too deep")
	}
	switch n.op {
	case opNone:
		if len(n.kids) != 0 {
			t.Fatalf("opNone with children")
		}
	case opMethod:
		if len(n.kids) != 0 || !fuzzMethods[n.method] || n.method != canonicalMethod(n.method) {
			t.Fatalf("bad method node %+v", n)
		}
	case opNot:
		if len(n.kids) != 1 {
			t.Fatalf("not with %d children", len(n.kids))
		}
	case opAnd:
		if len(n.kids) == 0 {
			t.Fatalf("and without children (must be opNone, Q-05)")
		}
	case opOr:
	default:
		t.Fatalf("unknown op %d", n.op)
	}
	for _, k := range n.kids {
		checkTree(t, k, depth+1)
	}
}

func checkFilters(t *testing.T, def *definition) {
	t.Helper()
	for name, s := range def.filters {
		if !fuzzFilters[name] || s == nil {
			t.Fatalf("filter setting for %q", name)
		}
		switch s.mode {
		case filterAll, filterNone:
			if len(s.entries) != 0 {
				t.Fatalf("filter %s all/none with entries", name)
			}
		case filterList:
			if len(s.entries) == 0 {
				t.Fatalf("filter %s: empty list", name)
			}
			for _, e := range s.entries {
				if len(s.entries) > 1 && (e.value == "all" || e.value == "none") {
					t.Fatalf("filter %s: all/none among several entries", name)
				}
			}
		default:
			t.Fatalf("filter %s: mode %d", name, s.mode)
		}
	}
}

// asciiTrim trims the blanks the reference strips (Ruby's \s), not Unicode spaces.
func asciiTrim(s string) string { return strings.Trim(s, " \t\r\n\v\f") }

// checkTxtDefinition: text-format specifics. Rule values and filter entries are stripped of
// comments, predicates and surrounding blanks; the description is one trimmed line.
func checkTxtDefinition(t *testing.T, def *definition) {
	t.Helper()
	var walk func(n *rule)
	walk = func(n *rule) {
		if n.op == opMethod {
			if strings.ContainsAny(n.value, "#;\n") || n.value != asciiTrim(n.value) || n.line <= 0 {
				t.Fatalf("rule value %q (line %d) not clean", n.value, n.line)
			}
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(def.rules)
	for _, s := range def.filters {
		for _, e := range s.entries {
			if strings.ContainsAny(e.value, "#;\n") || e.value != asciiTrim(e.value) {
				t.Fatalf("filter entry %q not clean", e.value)
			}
		}
	}
	if strings.ContainsAny(def.description, "\n") || def.description != asciiTrim(def.description) {
		t.Fatalf("description %q", def.description)
	}
	for _, m := range def.metadata {
		v, ok := m.value.(string)
		if !ok || strings.ContainsAny(v, "#;\n") || v != asciiTrim(v) {
			t.Fatalf("metadata %s = %#v", m.key, m.value)
		}
	}
}

var yamlSeeds = []string{
	"rules:\n  username: bob\n",
	"description: d\nexpiration: 2099-01-01\nmetadata:\n  gid: 010\nfilters:\n  contractors: [bob, {key: x, expiration: 2020-01-01}]\nrules:\n  or:\n    - and:\n        - management: alice\n        - not:\n            username: bob\n            expiration: \"2020-01-01\"\n    - always: false\n",
	"rules:\n  and: []\n",
	"rules:\n  username: bob\n  expiration: 2020-01-01\n",
	"rules: {}\n",
	"filter:\n  contractors: all\nrules:\n  entitlements_group: a/b\n",
	"rules:\n  not:\n    - x\n",
	"a: &x 1\nb: *x\n",
	"rules:\n  or:\n    - username: bob\n      expiration:\n",
}

func FuzzParseYAMLRules(f *testing.F) {
	for _, s := range yamlSeeds {
		f.Add([]byte(s))
	}
	for _, b := range corpusFiles(".yaml") {
		if bytes.Contains(b, []byte("rules")) {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ignore := range []bool{false, true} {
			p := fuzzParser(ignore)
			def := p.parseYAML(data)
			checkParse(t, p, def, maxLines(data))
			if def == nil {
				continue
			}
			p2 := fuzzParser(ignore)
			if def2 := p2.parseYAML(data); !reflect.DeepEqual(def, def2) {
				t.Fatalf("parseYAML is not deterministic")
			}
		}
	})
}

// TestFuzzSeeds runs the fuzz properties over the seeds in the ordinary test run, so a
// regression shows up without -fuzz.
func TestFuzzSeedProperties(t *testing.T) {
	for _, s := range txtSeeds {
		p := fuzzParser(false)
		def := p.parseTxt([]byte(s))
		checkParse(t, p, def, maxLines([]byte(s)))
		if def != nil {
			checkTxtDefinition(t, def)
		}
	}
	for _, s := range yamlSeeds {
		p := fuzzParser(false)
		checkParse(t, p, p.parseYAML([]byte(s)), maxLines([]byte(s)))
	}
}

// A model of the reference's text parser (Entitlements::Data::Groups::Calculated::Text), written
// with the reference's own regular expressions, for differential checks. Ruby's \s and strip
// know only ASCII whitespace (strip also removes NUL).
var (
	rubyLineRE    = regexp.MustCompile(`^([A-Za-z0-9_\-]+)[ \t\r\n\f\v]*([&!]?=)[ \t\r\n\f\v]*(.+?)[ \t\r\n\f\v]*$`)
	rubyCommentRE = regexp.MustCompile(`[ \t\r\n\f\v]*#.*$`)
	rubySemiRE    = regexp.MustCompile(`[ \t\r\n\f\v]*;[ \t\r\n\f\v]*`)
	rubyPredRE    = regexp.MustCompile(`^(\w+)[ \t\r\n\f\v]*=[ \t\r\n\f\v]*([^ \t\r\n\f\v]+)[ \t\r\n\f\v]*$`)
)

type modelLine struct {
	line           int
	key, op, value string
	exp            string
	predErr        bool
}

// modelTxt returns the parsed lines and the numbers of the unparseable lines.
func modelTxt(data []byte) (lines []modelLine, bad []int) {
	for i, raw := range strings.Split(string(data), "\n") {
		s := strings.Trim(raw, " \t\n\v\f\r\x00")
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		m := rubyLineRE.FindStringSubmatch(s)
		if m == nil {
			bad = append(bad, i+1)
			continue
		}
		key := m[1]
		switch {
		case fuzzFilters[key]:
			key = "filter_" + key
		case key == "expiration":
			key = "modifier_expiration"
		}
		ml := modelLine{line: i + 1, key: key, op: m[2], value: m[3]}
		if key != "description" {
			v := rubyCommentRE.ReplaceAllString(m[3], "")
			if strings.Contains(v, ";") {
				parts := rubySemiRE.Split(v, -1)
				for len(parts) > 0 && parts[len(parts)-1] == "" { // Ruby drops trailing empty fields
					parts = parts[:len(parts)-1]
				}
				v = ""
				if len(parts) > 0 {
					v = parts[0]
				}
				for _, p := range parts[min(1, len(parts)):] {
					pm := rubyPredRE.FindStringSubmatch(p)
					if pm == nil || pm[1] != "expiration" {
						ml.predErr = true
						continue
					}
					ml.exp = pm[2]
				}
			}
			ml.value = v
		}
		lines = append(lines, ml)
	}
	return lines, bad
}

// TestTxtModel / FuzzParseTxt compare parseTxt with the model: the same unparseable lines, and
// for files that parse, the same description and the same live rule values.
func checkTxtModel(t *testing.T, data []byte) {
	t.Helper()
	p := fuzzParser(false)
	def := p.parseTxt(data)
	if !utf8.Valid(data) {
		// The reference cannot even split such a file into lines.
		if def != nil || len(p.errs) != 1 || !strings.Contains(p.errs[0].Msg, "UTF-8") {
			t.Fatalf("invalid UTF-8 accepted or misreported: %v (input %q)", p.errs, data)
		}
		return
	}
	if line, _ := textsafe.CheckControl(data); line > 0 {
		// Control characters (issue 10) refuse the whole file, at the first one's line.
		if def != nil || len(p.errs) != 1 || !strings.Contains(p.errs[0].Msg, "control character") || p.errs[0].Line != line {
			t.Fatalf("control character accepted or misreported: %v (input %q)", p.errs, data)
		}
		return
	}
	lines, bad := modelTxt(data)
	var unparseable []int
	for _, e := range p.errs {
		if strings.HasPrefix(e.Msg, "Unparseable line") {
			unparseable = append(unparseable, e.Line)
		}
	}
	if !slices.Equal(unparseable, bad) {
		t.Fatalf("unparseable lines %v, model %v (input %q)", unparseable, bad, data)
	}
	if def == nil || len(bad) > 0 {
		return
	}
	var want []string
	for _, l := range lines {
		switch {
		case l.key == "description":
			if len(p.descErrs) > 0 {
				continue // an invalid description is reported when the group is built
			}
			if def.description != l.value {
				t.Fatalf("description %q, model %q (input %q)", def.description, l.value, data)
			}
			continue
		case strings.HasPrefix(l.key, "metadata_") || strings.HasPrefix(l.key, "filter_") || strings.HasPrefix(l.key, "modifier_"):
			continue
		}
		if l.predErr {
			t.Fatalf("line %d has a bad predicate but the file parsed (input %q)", l.line, data)
		}
		d, err := validate.ParseLineDate(l.exp)
		if err != nil {
			t.Fatalf("line %d has a bad date but the file parsed (input %q)", l.line, data)
		}
		if d.Reached(p.today) {
			continue
		}
		want = append(want, canonicalMethod(l.key)+"="+l.value)
	}
	var got []string
	var walk func(n *rule)
	walk = func(n *rule) {
		if n.op == opMethod {
			got = append(got, n.method+"="+n.value)
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(def.rules)
	if def.rules.op == opNone {
		return // no live "=" line: checked by the unit tests
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("rule values %q, model %q (input %q)", got, want, data)
	}
}

func TestTxtModel(t *testing.T) {
	for _, s := range append(slices.Clone(txtSeeds),
		"username = bob\u00a0\n",    // NBSP is not whitespace to Ruby
		"\u00a0username = bob\n",    // ... so this line is unparseable
		"username = bob\n\u00a0\n",  // ... and so is this one
		"username = bob\u2003# c\n", // EM SPACE before a comment stays in the value
		"username = a ;\u00a0; \n",  // a trailing field of NBSP is not empty
		"description = \u00a0x\u00a0\nusername = bob\n",
		// Carriage returns at either end of a line are whitespace (issue 23).
		"username = bob\n\r", "username = bob\r\r\n", "\r description = d \r\nusername = bob\r",
		"username = bob # c\r\r\n", "username = bob; expiration = 2099-01-01\r\n",
	) {
		checkTxtModel(t, []byte(s))
	}
}
