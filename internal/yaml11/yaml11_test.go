package yaml11

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string, opt Options) (*Node, []Warning) {
	t.Helper()
	n, w, err := Parse([]byte(src), opt)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return n, w
}

// TestResolvePlain covers every YAML 1.1 resolution rule, as Psych applies
// it, through a whole Parse of `v: SCALAR`.
func TestResolvePlain(t *testing.T) {
	tests := []struct {
		in, class, inspect string
	}{
		// null
		{"", "NilClass", "nil"},
		{"~", "NilClass", "nil"},
		{"null", "NilClass", "nil"},
		{"Null", "NilClass", "nil"},
		{"NULL", "NilClass", "nil"},
		{"nUlL", "NilClass", "nil"},
		{"nil", "String", `"nil"`},
		// booleans: only yes/true/on and no/false/off, any case; not y/n
		{"yes", "TrueClass", "true"},
		{"Yes", "TrueClass", "true"},
		{"YES", "TrueClass", "true"},
		{"yEs", "TrueClass", "true"},
		{"true", "TrueClass", "true"},
		{"True", "TrueClass", "true"},
		{"TRUE", "TrueClass", "true"},
		{"on", "TrueClass", "true"},
		{"On", "TrueClass", "true"},
		{"ON", "TrueClass", "true"},
		{"no", "FalseClass", "false"},
		{"No", "FalseClass", "false"},
		{"NO", "FalseClass", "false"},
		{"false", "FalseClass", "false"},
		{"FALSE", "FalseClass", "false"},
		{"off", "FalseClass", "false"},
		{"Off", "FalseClass", "false"},
		{"OFF", "FalseClass", "false"},
		{"y", "String", `"y"`},
		{"Y", "String", `"Y"`},
		{"n", "String", `"n"`},
		{"N", "String", `"N"`},
		{"yess", "String", `"yess"`},
		{"onoff", "String", `"onoff"`},
		// integers
		{"0", "Integer", "0"},
		{"12345", "Integer", "12345"},
		{"-12", "Integer", "-12"},
		{"+12", "Integer", "12"},
		{"1_000", "Integer", "1000"},
		{"1,000", "Integer", "1000"},
		{"1__000", "String", `"1__000"`},
		{"1_", "String", `"1_"`},
		{"010", "Integer", "8"},
		{"0755", "Integer", "493"},
		{"-0755", "Integer", "-493"},
		{"08", "String", `"08"`},
		{"0o17", "String", `"0o17"`},
		{"0x1F", "Integer", "31"},
		{"0x1f", "Integer", "31"},
		{"-0x1F", "Integer", "-31"},
		{"0X1F", "String", `"0X1F"`},
		{"0b101", "Integer", "5"},
		{"0b1_01", "Integer", "5"},
		{"0_", "Integer", "0"},
		{"9223372036854775807", "Integer", "9223372036854775807"},
		{"-9223372036854775808", "Integer", "-9223372036854775808"},
		{"99999999999999999999", "Integer", "99999999999999999999"},
		// sexagesimal, weighted as Psych does (two parts: hours and minutes)
		{"1:30", "Integer", "5400"},
		{"12:30", "Integer", "45000"},
		{"12:30:00", "Integer", "45000"},
		{"1:02:03", "Integer", "3723"},
		{"-1:30", "Integer", "-1800"},
		{"1:60", "String", `"1:60"`},
		{"1:2:3:4", "String", `"1:2:3:4"`},
		{"1:30.5", "Float", "5430.0"},
		// floats: a dot is required, an exponent needs its sign
		{"1.5", "Float", "1.5"},
		{"1.", "Float", "1.0"},
		{".5", "Float", "0.5"},
		{"-.5", "Float", "-0.5"},
		{"1_000.5", "Float", "1000.5"},
		{"1,000.5", "Float", "1000.5"},
		{"1.5e+3", "Float", "1500.0"},
		{"1.5e-3", "Float", "0.0015"},
		{"1.e+5", "Float", "100000.0"},
		{"1e3", "String", `"1e3"`},
		{"1.0e3", "String", `"1.0e3"`},
		{".", "String", `"."`},
		{"-.", "String", `"-."`},
		{"1.2.3", "String", `"1.2.3"`},
		{".inf", "Float", "Infinity"},
		{".Inf", "Float", "Infinity"},
		{"+.inf", "Float", "Infinity"},
		{"-.INF", "Float", "-Infinity"},
		{".nan", "Float", "NaN"},
		{".NaN", "Float", "NaN"},
		{"1.0e+20", "Float", "1.0e+20"},
		{"0.00001", "Float", "1.0e-05"},
		// dates (allowed in this table)
		{"2018-04-01", "Date", "#<Date: 2018-04-01>"},
		{"2018-4-1", "Date", "#<Date: 2018-04-01>"},
		{"2020-02-29", "Date", "#<Date: 2020-02-29>"},
		{"2018-02-29", "String", `"2018-02-29"`},
		{"2018-02-30", "String", `"2018-02-30"`},
		{"2018-13-01", "String", `"2018-13-01"`},
		{"2018-04-00", "String", `"2018-04-00"`},
		{"18-04-01", "String", `"18-04-01"`},
		// strings
		{"kittens", "String", `"kittens"`},
		{"a:b", "String", `"a:b"`},
		{"-foo", "String", `"-foo"`},
		{"http://example.com/#x", "String", `"http://example.com/#x"`},
		{"a#{b}", "String", `"a\#{b}"`},
		{"ünïcode", "String", `"ünïcode"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			n, _ := mustParse(t, "v: "+tc.in+"\n", Options{AllowDates: true})
			v := n.Get("v")
			if v.RubyClass() != tc.class || v.Inspect() != tc.inspect {
				t.Errorf("%q: got %s %s, want %s %s", tc.in, v.RubyClass(), v.Inspect(), tc.class, tc.inspect)
			}
			if v.Quoted {
				t.Error("plain scalar marked Quoted")
			}
			if v.Kind != Null && v.Str != tc.in {
				t.Errorf("Str = %q, want the source text %q", v.Str, tc.in)
			}
		})
	}
}

func TestQuotedAndBlockScalarsAreStrings(t *testing.T) {
	n, _ := mustParse(t, "a: 'yes'\nb: \"0755\"\nc: |\n  on\nd: >-\n  12345\ne: ''\n", Options{})
	for key, want := range map[string]string{"a": "yes", "b": "0755", "c": "on\n", "d": "12345", "e": ""} {
		v := n.Get(key)
		if v.Kind != String || !v.Quoted || v.Str != want {
			t.Errorf("%s: got %+v, want quoted string %q", key, v, want)
		}
	}
}

func TestSafeLoaderErrors(t *testing.T) {
	tests := []struct {
		name, src string
		opt       Options
		line      int
		msg       string
	}{
		{"date in config", "a: b\nd: 2018-04-01\n", Options{}, 2, "dates are not allowed"},
		{"impossible date in config", "d: 2018-02-30\n", Options{}, 1, "dates are not allowed"},
		{"date key in config", "2018-04-01: x\n", Options{}, 1, "dates are not allowed"},
		{"timestamp", "d: 2018-04-01 12:00:00\n", Options{AllowDates: true}, 1, "timestamps are not allowed"},
		{"timestamp T Z", "d: 2018-04-01T12:00:00Z\n", Options{}, 1, "timestamps are not allowed"},
		{"timestamp offset", "- 2018-04-01 12:00:00.5 +01:00\n", Options{AllowDates: true}, 1, "timestamps are not allowed"},
		{"symbol", "a:\n  - :foo\n", Options{}, 2, "symbols are not allowed"},
		{"symbol key", ":foo: 1\n", Options{}, 1, "symbols are not allowed"},
		{"alias", "a: &x 1\nb: *x\n", Options{}, 2, "aliases are not allowed"},
		{"alias of map", "a: &x {k: v}\nb:\n  c: *x\n", Options{}, 3, "aliases are not allowed"},
		{"merge key", "a: 1\n<<: {b: 2}\n", Options{}, 2, "merge keys (<<) are not supported"},
		{"quoted merge key", "'<<': [{b: 2}]\n", Options{}, 1, "merge keys"},
		{"custom tag", "a: !foo x\n", Options{}, 1, "YAML tag !foo is not allowed"},
		{"ruby tag", "a: !ruby/object:Set {}\n", Options{}, 1, "YAML tag !ruby/object:Set is not allowed"},
		{"binary tag", "a: !!binary aGk=\n", Options{}, 1, "!!binary"},
		{"set tag", "a: !!set {x}\n", Options{}, 1, "!!set"},
		{"map tag on seq", "a: !!map [1]\n", Options{}, 1, "cannot be applied to a sequence"},
		{"str tag on map", "a: !!str {x: y}\n", Options{}, 1, "cannot be applied to a mapping"},
		{"bad float tag", "a: !!float abc\n", Options{}, 1, "!!float"},
		{"integer prefix only", "a: 0b_\n", Options{}, 1, "invalid value for Integer()"},
		{"float without digits", "a: -.e+5\n", Options{}, 1, "invalid value for Float()"},
		{"syntax error", "a: b\nc: [1,\n", Options{}, 2, ""},
		{"bad indentation", "a:\n  b: 1\n c: 2\n", Options{}, 3, "did not find expected key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, _, err := Parse([]byte(tc.src), tc.opt)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) = %v, %v; want *Error", tc.src, n, err)
			}
			if n != nil {
				t.Error("node returned with error")
			}
			if e.Line != tc.line || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got line %d %q, want line %d containing %q", e.Line, e.Msg, tc.line, tc.msg)
			}
			if want := "line "; !strings.HasPrefix(e.Error(), want) {
				t.Errorf("Error() = %q", e.Error())
			}
		})
	}
}

func TestAcceptedTagsAndAnchors(t *testing.T) {
	n, _ := mustParse(t, "a: !!str 123\nb: !!int \"12\"\nc: !!float 1\nd: !!bool yes\ne: !!null ~\nf: !!map {x: 1}\ng: !!seq [1]\nh: &anchor 5\nk: !<tag:yaml.org,2002:str> yes\n", Options{})
	want := `{"a"=>"123", "b"=>12, "c"=>1.0, "d"=>true, "e"=>nil, "f"=>{"x"=>1}, "g"=>[1], "h"=>5, "k"=>"yes"}`
	if got := n.Inspect(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// `<<` with a scalar value is an ordinary key in Psych.
	n, _ = mustParse(t, "<<: 1\n", Options{})
	if n.Get("<<").Int != 1 {
		t.Errorf("<<: 1 -> %s", n.Inspect())
	}
}

func TestEmptyDocuments(t *testing.T) {
	for _, src := range []string{"", "\n\n", "# just a comment\n", "---\n", "--- # c\n...\n", "~\n"} {
		n, w := mustParse(t, src, Options{})
		if n == nil || n.Kind != Null || len(w) != 0 || n.Inspect() != "nil" {
			t.Errorf("Parse(%q) = %+v, %v", src, n, w)
		}
	}
}

func TestDuplicateKeys(t *testing.T) {
	n, w := mustParse(t, "a: 1\nb: 2\na: 3\n12345: x\n\"12345\": y\n12345: z\n", Options{})
	if got, want := n.Inspect(), `{"a"=>3, "b"=>2, 12345=>"z", "12345"=>"y"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if n.Keys[0].Line != 1 || n.Values[0].Line != 3 {
		t.Errorf("key keeps first line, value the last: %d %d", n.Keys[0].Line, n.Values[0].Line)
	}
	want := []Warning{
		{3, `duplicate key "a" (first at line 1; last one wins)`},
		{6, `duplicate key 12345 (first at line 4; last one wins)`},
	}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("warnings = %#v", w)
	}
	if got := w[0].String(); got != `line 3: duplicate key "a" (first at line 1; last one wins)` {
		t.Errorf("Warning.String() = %q", got)
	}
}

func TestDuplicateKeysLargeMap(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(": 1\n")
	}
	b.WriteString("kxxx: 2\nyes: a\ntrue: b\n")
	n, w := mustParse(t, b.String(), Options{})
	if len(n.Keys) != 51 || len(w) != 2 {
		t.Fatalf("%d keys, warnings %v", len(n.Keys), w)
	}
	if v := n.Get("kxxx"); v == nil || v.Int != 2 {
		t.Errorf("Get(kxxx) = %v", v)
	}
	if v := n.Get("k" + strings.Repeat("x", 49)); v == nil || v.Int != 1 {
		t.Errorf("Get(last) = %v", v)
	}
	if n.Get("absent") != nil || n.Get("yes") != nil {
		t.Error("Get found an absent or non-string key")
	}
	if v := n.Values[50]; v.Str != "b" || n.Keys[50].Kind != Bool {
		t.Errorf("yes/true are the same key: %s", n.Inspect())
	}
	// A caller mutating the map must not get stale answers from the index.
	n.Keys = append(n.Keys, &Node{Kind: String, Str: "added"})
	n.Values = append(n.Values, &Node{Kind: Int, Int: 7})
	if v := n.Get("added"); v == nil || v.Int != 7 {
		t.Errorf("Get after append = %v", v)
	}
}

func TestNonStringKeys(t *testing.T) {
	n, _ := mustParse(t, "12345: a\nyes: b\n~: c\n1.5: d\n[1, 2]: e\n", Options{})
	classes := []string{}
	for _, k := range n.Keys {
		classes = append(classes, k.RubyClass())
	}
	if want := []string{"Integer", "TrueClass", "NilClass", "Float", "Array"}; !reflect.DeepEqual(classes, want) {
		t.Errorf("key classes %v, want %v", classes, want)
	}
	if n.Get("12345") != nil || n.Get("yes") != nil {
		t.Error("string lookup matched a non-string key")
	}
	if n.Keys[0].IsString() {
		t.Error("IsString on Int")
	}
}

func TestLineNumbers(t *testing.T) {
	src := "# header\n---\ndescription: x\nrules:\n  or:\n    - username: a\n    - group: b/c\nmetadata:\n\n  gid: 1\n"
	n, _ := mustParse(t, src, Options{})
	or := n.Get("rules").Get("or")
	checks := []struct {
		node *Node
		line int
	}{
		{n, 3}, {n.Keys[0], 3}, {n.Get("description"), 3}, {n.Get("rules"), 5}, {or, 6},
		{or.Items[1], 7}, {or.Items[1].Get("group"), 7}, {n.Get("metadata").Get("gid"), 10},
	}
	for i, c := range checks {
		if c.node.Line != c.line {
			t.Errorf("check %d: line %d, want %d (%s)", i, c.node.Line, c.line, c.node.Inspect())
		}
	}
}

func TestInspect(t *testing.T) {
	n, _ := mustParse(t, `{"foo": bar, "fizz": buzz, list: [a, 'b', 1, 1.5, ~, true, 2018-04-01], q: "say \"hi\"\n\ttab\\ \u00e9 \u0001 #@x #$y #z"}`, Options{AllowDates: true, AllowControl: true})
	want := `{"foo"=>"bar", "fizz"=>"buzz", "list"=>["a", "b", 1, 1.5, nil, true, #<Date: 2018-04-01>], "q"=>"say \"hi\"\n\ttab\\ é \u0001 \#@x \#$y #z"}`
	if got := n.Inspect(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := (&Node{Kind: Seq}).Inspect(); got != "[]" {
		t.Errorf("empty seq %s", got)
	}
	if got := (&Node{Kind: Map}).Inspect(); got != "{}" {
		t.Errorf("empty map %s", got)
	}
	var nilNode *Node
	if nilNode.Inspect() != "nil" || nilNode.RubyClass() != "NilClass" || nilNode.Text() != "" || nilNode.Interface() != nil || nilNode.Get("x") != nil || nilNode.IsString() {
		t.Error("nil receiver")
	}
	// Checked against Ruby 3.1: U+200B (a format character) prints raw,
	// U+2028 (a line separator) is escaped.
	if got := RubyInspectString("\xff\x1b\u200b\U0001F600\x7f\u2028"); got != `"\xFF\e`+"\u200b\U0001F600"+`\u007F\u2028"` {
		t.Errorf("RubyInspectString = %s", got)
	}
}

func TestRubyFloatString(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", -2.5: "-2.5", 100: "100.0", 0.1: "0.1", 1e14: "100000000000000.0",
		123456789012345: "123456789012345.0", 1e15: "1.0e+15", 1234567890123456: "1.234567890123456e+15",
		1e20: "1.0e+20", 0.0001: "0.0001", 0.00012: "0.00012", 0.00001: "1.0e-05", 1.5e-7: "1.5e-07",
		1e100: "1.0e+100", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", math.Copysign(0, -1): "-0.0", 0: "0.0",
	} {
		if got := RubyFloatString(f); got != want {
			t.Errorf("RubyFloatString(%g) = %s, want %s", f, got, want)
		}
	}
	if RubyFloatString(math.NaN()) != "NaN" {
		t.Error("NaN")
	}
}

func TestTextAndClasses(t *testing.T) {
	n, _ := mustParse(t, "s: str\ni: 0x10\nf: 2.50\nt: on\nf2: off\nn: ~\nd: 2018-4-1\nq: [a]\nm: {a: 1}\nbig: 18446744073709551616\n", Options{AllowDates: true})
	tests := []struct{ key, text, class string }{
		{"s", "str", "String"}, {"i", "16", "Integer"}, {"f", "2.5", "Float"},
		{"t", "true", "TrueClass"}, {"f2", "false", "FalseClass"}, {"n", "", "NilClass"},
		{"d", "2018-04-01", "Date"}, {"q", `["a"]`, "Array"}, {"m", `{"a"=>1}`, "Hash"},
		{"big", "18446744073709551616", "Integer"},
	}
	for _, tc := range tests {
		v := n.Get(tc.key)
		if v.Text() != tc.text || v.RubyClass() != tc.class {
			t.Errorf("%s: Text %q class %s, want %q %s", tc.key, v.Text(), v.RubyClass(), tc.text, tc.class)
		}
	}
	big := n.Get("big")
	if big.Kind != Float || big.Float != 18446744073709551616 || big.Str != "18446744073709551616" {
		t.Errorf("overflowing int: %+v", big)
	}
	if !n.Get("s").IsString() || n.Get("i").IsString() {
		t.Error("IsString")
	}
	if got := n.Get("d").Date.String(); got != "2018-04-01" {
		t.Errorf("CivilDate.String() = %s", got)
	}
	if Kind(Map).String() != "Map" || Kind(42).String() != "Kind(42)" {
		t.Error("Kind.String")
	}
}

func TestInterface(t *testing.T) {
	n, _ := mustParse(t, "a: [1, 1.5, x, yes, ~, 2018-04-01]\n12: {b: c}\n", Options{AllowDates: true})
	got, err := json.Marshal(n.Interface())
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"12":{"b":"c"},"a":[1,1.5,"x",true,null,"2018-04-01"]}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, ok := n.Get("a").Items[0].Interface().(int64); !ok {
		t.Error("ints are int64")
	}
}

func TestErrorFormatting(t *testing.T) {
	if got := (&Error{Msg: "boom"}).Error(); got != "boom" {
		t.Errorf("no line: %q", got)
	}
	if got := (&Error{Line: 4, Msg: "boom"}).Error(); got != "line 4: boom" {
		t.Errorf("with line: %q", got)
	}
	if got := (Warning{Msg: "w"}).String(); got != "w" {
		t.Errorf("warning without line: %q", got)
	}
}

var fuzzSeeds = []string{
	"", "a: 1\n", "a: 1\na: 2\n", "- yes\n- no\n- y\n", "a: &x 1\nb: *x\n", "a: !!binary aGk=\n",
	"<<: {a: 1}\n", "a: 2018-04-01\n", "a: 2018-04-01 12:00:00\n", "a: :sym\n", "a: 12:30\n",
	"a: 0b_\n", "a: -.e+5\n", "a: 99999999999999999999\n", "? [1, {a: b}]\n: x\n", "a: |\n  x\n",
	"a: 1\n---\nb: 2\n", "[[[[[[[]]]]]]]", "{a: [b, {c: d}]}", "a: !!float x\n", "'x': \"\\u00e9\"\n",
	"#\n- - QI\n- - [\n", "- &a\n- a\n-\n  &a : a\n  b: c\n", "\t", "a:\tb\n", "%YAML 1.1\n--- x\n",
	"%TAG ! tag:example.com,2000:\n--- !foo x\n", "a: !<!> x\n", "? ? ? x\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, allowDates bool) {
		n, _, err := Parse(data, Options{AllowDates: allowDates})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T", err)
			}
			if n != nil {
				t.Fatal("node with error")
			}
			return
		}
		// Inspect and Interface recurse over the whole tree; the walk
		// checks each node's invariants without re-rendering subtrees.
		_ = n.Inspect()
		_ = n.Interface()
		var walk func(*Node)
		walk = func(n *Node) {
			_ = n.RubyClass()
			if n.Kind != Seq && n.Kind != Map {
				_ = n.Text()
			}
			if n.Line < 1 {
				t.Fatalf("node without line: %+v", n)
			}
			if len(n.Keys) != len(n.Values) {
				t.Fatal("keys/values mismatch")
			}
			for _, c := range n.Items {
				walk(c)
			}
			for i, k := range n.Keys {
				walk(k)
				walk(n.Values[i])
				if k.Kind == String && n.Get(k.Str) != n.Values[i] {
					t.Fatalf("Get(%q) mismatch", k.Str)
				}
			}
		}
		walk(n)
	})
}

// benchGroupFile is a typical group file of the entitlements repos.
const benchGroupFile = `---
description: Admin access to the primary AWS account
owner: blackmanx
expiration: 2025-12-31
rules:
  or:
    - username: russianblue
    - username: BlackManx
    - username: chausie
    - group: pizza_teams/grumpy-cat
    - and:
      - ldap_group: cn=foo,ou=Groups,dc=kittens,dc=net
      - username: nebelung
metadata:
  gid_number: 12345
`

func BenchmarkParse(b *testing.B) {
	data := []byte(benchGroupFile)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(data, Options{AllowDates: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolvePlain isolates this package's share: scalar resolution.
func BenchmarkResolvePlain(b *testing.B) {
	scalars := []string{"description", "Admin access to the primary AWS account", "russianblue", "or", "username", "12345", "2025-12-31", "cn=foo,ou=Groups,dc=kittens,dc=net", "yes", "1.5"}
	for b.Loop() {
		for _, s := range scalars {
			resolvePlain(s, true)
		}
	}
}

// Psych's load returns the first document and never parses the rest.
func TestOnlyTheFirstDocumentCounts(t *testing.T) {
	for _, src := range []string{"a: 1\n---\nb: 2\n", "a: 1\n---\n", "a: 1\n---\n: : [ broken\n"} {
		n, _, err := Parse([]byte(src), Options{})
		if err != nil || n.Kind != Map || len(n.Keys) != 1 || n.Get("a") == nil {
			t.Errorf("Parse(%q) = %v, %v; want the map {a: 1}", src, n, err)
		}
	}
}

func TestControlCharactersRefused(t *testing.T) {
	for _, src := range []string{
		"a: \"x\\0y\"\n", "a: \"\\u0000\"\n", "a: \"x\\x7f\"\n", "a: \"\\u0085\"\n", "a: \"\\r\"\n",
		"\"k\\0\": v\n", "- \"\\e\"\n", "a: \"\\u009b\"\n",
	} {
		if _, _, err := Parse([]byte(src), Options{}); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("Parse(%q) = %v, want a control character error", src, err)
		}
		if _, _, err := Parse([]byte(src), Options{AllowControl: true}); err != nil {
			t.Errorf("Parse(%q, AllowControl) = %v", src, err)
		}
	}
	for _, src := range []string{"a: \"x\\ty\"\n", "a: |\n  two\n  lines\n", "a: \"\\u00e9\"\n"} {
		if _, _, err := Parse([]byte(src), Options{}); err != nil {
			t.Errorf("Parse(%q) = %v, want ok", src, err)
		}
	}
}

func TestSubstitute(t *testing.T) {
	var keys strings.Builder
	for i := range 40 { // large enough for an index
		fmt.Fprintf(&keys, "k%d: v\n", i)
	}
	n, _ := mustParse(t, keys.String()+"PH0: x\na: PH1\nb: [PH2]\nc: \"PH0 and PH1\"\nd: PH3\ne: PH4\nf: PH5\n", Options{})
	vals := map[string]string{"PH0": "key", "PH1": "*alias #c", "PH2": "", "PH3": "true", "PH4": "", "PH5": "-12"}
	n.Substitute(func(s string) (string, bool, bool) {
		if v, ok := vals[s]; ok {
			return v, true, true
		}
		out := s
		for k, v := range vals {
			out = strings.ReplaceAll(out, k, v)
		}
		return out, out != s, false
	})
	check := func(key string, kind Kind, str string) {
		t.Helper()
		v := n.Get(key)
		if v == nil || v.Kind != kind || v.Str != str || !v.Substituted {
			t.Errorf("%s = %+v, want %s %q", key, v, kind, str)
		}
	}
	if v := n.Get("key"); v == nil || v.Str != "x" { // a substituted key is found (index rebuilt)
		t.Errorf("key = %+v", v)
	}
	check("a", String, "*alias #c")
	check("c", String, "key and *alias #c")
	check("d", Bool, "true")
	check("e", Null, "")
	check("f", Int, "-12")
	if it := n.Get("b").Items[0]; it.Kind != Null {
		t.Errorf("b[0] = %+v", it)
	}
	if got := n.Get("a").Inspect(); got != Filtered {
		t.Errorf("Inspect of a substituted value: %s", got)
	}
}
