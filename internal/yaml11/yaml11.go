// Package yaml11 reads YAML the way the Ruby entitlements app does: with
// Psych's safe loader, which resolves plain scalars by YAML 1.1 rules.
//
// Go's YAML libraries implement YAML 1.2, where `yes`, `on`, `010` or `1_000`
// stay strings. Psych turns them into true, true, 8 and 1000, and the Ruby app
// depends on that (for example `always: no` works because it is boolean
// false, and a uid `no:` breaks a run because it is not a string). So this
// package uses go.yaml.in/yaml/v3 only as a syntax parser, walks its node
// tree, and re-resolves every plain scalar with a port of
// Psych::ScalarScanner#tokenize. Working on the node tree (instead of decoding
// into Go maps) is also what lets duplicate keys through: Psych accepts them
// and the last value wins.
//
// The safe loader's restrictions are reproduced as errors: aliases
// (Psych::BadAlias), tags, symbols and timestamps (Psych::DisallowedClass),
// and dates unless the caller allows them.
package yaml11

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Kind is the Ruby type a YAML node loads as.
type Kind uint8

// The node kinds. They map one-to-one onto the Ruby classes Psych produces
// (see Node.RubyClass); TrueClass and FalseClass share Bool.
const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	Date
	Seq
	Map
)

var kindNames = [...]string{"Null", "Bool", "Int", "Float", "String", "Date", "Seq", "Map"}

// String returns the constant's name, for test output and debugging.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Node is one loaded YAML value.
//
// Only the fields that belong to Kind are meaningful, except Str, which holds
// the source text of every scalar (so callers can quote the file in error
// messages, or recover the original spelling of a value such as `0755`).
type Node struct {
	Kind Kind
	Bool bool
	// Quoted reports a quoted or block scalar. Those are always strings;
	// only plain scalars go through YAML 1.1 resolution.
	Quoted bool
	// Substituted marks a scalar whose text came (partly) from environment substitution
	// (see Substitute): messages must not quote it.
	Substituted bool
	// Line is the 1-based line of the node in the source.
	Line int
	// Str is the value of a String node and the source text of every other
	// scalar (for quoted scalars: the text after unquoting).
	Str   string
	Int   int64
	Float float64
	Date  CivilDate
	// Items holds the elements of a Seq.
	Items []*Node
	// Keys and Values hold the entries of a Map in document order. A
	// duplicate key keeps the position of its first occurrence and takes the
	// value of its last one, as a Ruby Hash does when Psych assigns into it.
	Keys, Values []*Node

	// bigInt holds the decimal digits of an integer too large for int64.
	// Such a node has Kind Float (so numeric callers still get a value) but
	// is an Integer to Ruby, which has arbitrary precision.
	bigInt string
	// index speeds up Get and duplicate detection on large maps; indexLen
	// is len(Keys) when it was built, so a mutated map falls back to a scan.
	index    map[keyID]int
	indexLen int
}

// CivilDate is a calendar date, the value of a Ruby Date loaded from
// `YYYY-MM-DD`. (It cannot be called Date: that name is the Kind constant.)
// Its fields are small because every Node carries one.
type CivilDate struct {
	Year       int16
	Month, Day uint8
}

// String formats the date as YYYY-MM-DD, as Ruby's Date#to_s does.
func (d CivilDate) String() string {
	var b [10]byte
	buf := b[:0]
	if d.Year < 0 || d.Year > 9999 {
		return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day)
	}
	buf = appendPadded(buf, int(d.Year), 4)
	buf = append(buf, '-')
	buf = appendPadded(buf, int(d.Month), 2)
	buf = append(buf, '-')
	buf = appendPadded(buf, int(d.Day), 2)
	return string(buf)
}

func appendPadded(buf []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

// Options selects the loader's restrictions for one kind of file.
type Options struct {
	// AllowDates makes plain YYYY-MM-DD scalars Date nodes, as in group,
	// people and manager-map files (Psych with permitted_classes: [Date]).
	// When false they are an error, as in the config file.
	AllowDates bool
	// AllowControl accepts control characters in scalars. By default a scalar holding one
	// (other than tab and line feed: C0, DEL, C1, also when written as an escape such as
	// "\0") is an error, because a NUL in a username silently matches nobody and one in a
	// description is sent to a provider.
	AllowControl bool
}

// Error is a load failure, with the 1-based line it was found on (0 when
// the parser could not tell).
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return "line " + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return e.Msg
}

// Warning is something Ruby accepts silently but a user probably did not
// mean, such as a duplicate mapping key.
type Warning struct {
	Line int
	Msg  string
}

func (w Warning) String() string {
	if w.Line > 0 {
		return "line " + strconv.Itoa(w.Line) + ": " + w.Msg
	}
	return w.Msg
}

// Parse loads one YAML document.
//
// An empty document (or one holding only comments) loads as a Null node,
// as Psych.safe_load returns nil for it. A stream with more than one
// document is an error: Psych would silently use only the first one, which
// is never what the author of an entitlements file meant.
//
// Parse never panics: a panic inside the YAML parser becomes an *Error.
func Parse(data []byte, opt Options) (*Node, []Warning, error) {
	if root, warns, ok := fastParse(data, opt); ok {
		return root, warns, nil
	}
	return parseFull(data, opt)
}

// parseFull is Parse through yaml.v3's node tree: all of YAML, and every error message.
func parseFull(data []byte, opt Options) (*Node, []Warning, error) {
	doc, err := parseSingleDocument(data)
	if err != nil {
		return nil, nil, err
	}
	if doc == nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return &Node{Kind: Null, Line: 1}, nil, nil
	}
	top := doc.Content[0]
	c := converter{allowDates: opt.AllowDates, allowControl: opt.AllowControl, slab: make([]Node, countNodes(top))}
	root, err := c.convert(top)
	if err != nil {
		return nil, nil, err
	}
	return root, c.warnings, nil
}

// parseSingleDocument runs yaml.v3 and returns the first document (nil for an
// empty stream). It converts a panic inside yaml.v3 into an *Error;
// the recover is confined to the third-party parser so that fuzzing still
// exposes bugs in this package's own code.
func parseSingleDocument(data []byte) (*yaml.Node, error) {
	doc, err := parseRaw(data)
	if e, ok := err.(*Error); ok {
		if e.Line > 0 {
			e.Line = problemLine(data, e)
		} else {
			e.Line = anchorLine(data, e.Msg)
		}
	}
	return doc, err
}

func parseRaw(data []byte) (doc *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, &Error{Msg: fmt.Sprintf("YAML parser failure: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	doc = new(yaml.Node)
	if err := dec.Decode(doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, convertYAMLError(err)
	}
	// Like Psych's load, only the first document counts: what follows a second `---` is
	// never parsed (a trailing `---` is common in hand-written files).
	return doc, nil
}

// convertYAMLError turns yaml.v3's "yaml: line N: msg" into an *Error.
func convertYAMLError(err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, convErr := strconv.Atoi(rest[:i]); convErr == nil {
				return &Error{Line: n, Msg: strings.TrimSpace(rest[i+1:])}
			}
		}
	}
	return &Error{Msg: msg}
}

// countNodes sizes the slab so that converting a document costs one
// allocation for all its nodes instead of one per node (Parse runs on tens
// of thousands of small files). The price is that any retained node keeps
// its whole document alive, which suits callers that use trees whole.
func countNodes(y *yaml.Node) int {
	n := 1
	for _, c := range y.Content {
		n += countNodes(c)
	}
	return n
}

type converter struct {
	allowDates   bool
	allowControl bool
	warnings     []Warning
	slab         []Node
	// more is how many nodes may still be needed beyond slab (an upper bound): they are
	// allocated in chunks, so that a loose bound on a large file does not allocate (and
	// clear) far more than the tree uses.
	more int
	// arena, when set, provides the nodes instead (Parser).
	arena *arena
}

const slabChunk = 1024

func (c *converter) newNode() *Node {
	if c.arena != nil {
		return c.arena.node()
	}
	if len(c.slab) == 0 {
		if c.more <= 0 {
			return &Node{}
		}
		k := min(c.more, slabChunk)
		c.slab, c.more = make([]Node, k), c.more-k
	}
	n := &c.slab[0]
	c.slab = c.slab[1:]
	return n
}

// standardTags are the only explicit tags accepted. Psych's safe loader
// refuses Ruby-class tags (!ruby/object:..., !!set, !!omap) but quietly
// ignores unknown local tags (`!foo x` is "x") and decodes !!binary.
// Refusing those too is deliberate: the entitlements file formats have no
// use for tags, so a tag is a mistake worth reporting.
var standardTags = map[string]bool{
	"!!str": true, "!!int": true, "!!float": true, "!!bool": true,
	"!!null": true, "!!map": true, "!!seq": true,
}

func (c *converter) convert(y *yaml.Node) (*Node, error) {
	if y.Kind == yaml.AliasNode {
		return nil, &Error{Line: y.Line, Msg: fmt.Sprintf("aliases are not allowed (*%s); Ruby's safe YAML loader rejects them", y.Value)}
	}
	tagged := y.Style&yaml.TaggedStyle != 0
	if tagged && !standardTags[y.Tag] {
		return nil, &Error{Line: y.Line, Msg: fmt.Sprintf("YAML tag %s is not allowed", y.Tag)}
	}
	n := c.newNode()
	n.Line = y.Line
	switch y.Kind {
	case yaml.ScalarNode:
		if err := c.scalar(n, y, tagged); err != nil {
			return nil, err
		}
	case yaml.SequenceNode:
		if tagged && y.Tag != "!!seq" {
			return nil, &Error{Line: y.Line, Msg: fmt.Sprintf("YAML tag %s cannot be applied to a sequence", y.Tag)}
		}
		n.Kind = Seq
		n.Items = make([]*Node, 0, len(y.Content))
		for _, yc := range y.Content {
			item, err := c.convert(yc)
			if err != nil {
				return nil, err
			}
			n.Items = append(n.Items, item)
		}
	case yaml.MappingNode:
		if tagged && y.Tag != "!!map" {
			return nil, &Error{Line: y.Line, Msg: fmt.Sprintf("YAML tag %s cannot be applied to a mapping", y.Tag)}
		}
		if err := c.mapping(n, y); err != nil {
			return nil, err
		}
	default:
		return nil, &Error{Line: y.Line, Msg: "unexpected YAML node"}
	}
	return n, nil
}

func (c *converter) scalar(n *Node, y *yaml.Node, tagged bool) error {
	n.Str = y.Value
	if !c.allowControl {
		if r, bad := controlIn(y.Value); bad {
			return &Error{Line: y.Line, Msg: fmt.Sprintf("control character U+%04X in a value (values may contain tabs, not control characters)", r)}
		}
	}
	quoted := y.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0
	n.Quoted = quoted
	switch {
	case tagged && y.Tag == "!!str":
		n.Kind = String
		return nil
	case tagged:
		// Psych resolves the text of !!int, !!bool and !!null scalars like
		// a plain scalar (quoted or not) and only insists on !!float.
		if err := c.resolveInto(n, y.Value, y.Line); err != nil {
			return err
		}
		if y.Tag == "!!float" {
			return toFloat(n)
		}
		return nil
	case quoted:
		n.Kind = String
		return nil
	}
	return c.resolveInto(n, y.Value, y.Line)
}

func (c *converter) resolveInto(n *Node, s string, line int) error {
	r, msg := resolvePlain(s, c.allowDates)
	if msg != "" {
		return &Error{Line: line, Msg: msg}
	}
	// n is a new (zeroed) node: only the value's own fields are written, so that a string
	// touches the first cache line of the node and nothing else.
	n.Kind = r.kind
	switch r.kind {
	case String:
		n.Str = s
	case Bool:
		n.Bool = r.b
	case Int:
		n.Int = r.i
	case Float:
		n.Float = r.f
		if r.big != "" {
			n.bigInt = r.big
		}
	case Date:
		n.Date = r.d
	}
	return nil
}

// toFloat applies !!float the way Psych does: Float(tokenized value).
func toFloat(n *Node) error {
	switch n.Kind {
	case Float:
		n.bigInt = ""
		return nil
	case Int:
		n.Kind, n.Float = Float, float64(n.Int)
		return nil
	case String:
		if f, err := strconv.ParseFloat(strings.TrimSpace(n.Str), 64); err == nil {
			n.Kind, n.Float = Float, f
			return nil
		}
	}
	return &Error{Line: n.Line, Msg: fmt.Sprintf("invalid value for !!float: %q", n.Str)}
}

// smallMap is the size up to which maps are searched linearly; a hash index
// costs more than it saves on the 2-10 key maps that make up most files.
const smallMap = 8

func (c *converter) mapping(n *Node, y *yaml.Node) error {
	n.Kind = Map
	pairs := len(y.Content) / 2
	// Keys and values share one allocation; the capacities are capped, so an append past
	// either half copies instead of overwriting the other.
	kv := make([]*Node, 2*pairs)
	n.Keys = kv[:0:pairs]
	n.Values = kv[pairs : pairs : 2*pairs]
	for i := 0; i+1 < len(y.Content); i += 2 {
		yk, yv := y.Content[i], y.Content[i+1]
		k, err := c.convert(yk)
		if err != nil {
			return err
		}
		if k.Kind == String && k.Str == "<<" && !(yk.Style&yaml.TaggedStyle != 0) {
			// Psych merges a mapping or sequence given under `<<` into the
			// enclosing hash (any other value is an ordinary "<<" key).
			switch yv.Kind {
			case yaml.MappingNode, yaml.SequenceNode, yaml.AliasNode:
				return &Error{Line: yk.Line, Msg: "merge keys (<<) are not supported"}
			}
		}
		v, err := c.convert(yv)
		if err != nil {
			return err
		}
		c.addPair(n, k, v)
	}
	return nil
}

// addPair stores k: v in the map n the way a Ruby Hash does: a duplicate key keeps its place
// and takes the new value, with a warning.
func (c *converter) addPair(n, k, v *Node) {
	id := k.id()
	if at := n.find(id); at >= 0 {
		n.Values[at] = v
		c.warnings = append(c.warnings, Warning{
			Line: k.Line,
			Msg:  fmt.Sprintf("duplicate key %s (first at line %d; last one wins)", k.Inspect(), n.Keys[at].Line),
		})
		return
	}
	n.Keys = append(n.Keys, k)
	n.Values = append(n.Values, v)
	if n.index != nil {
		n.index[id] = len(n.Keys) - 1
		n.indexLen = len(n.Keys)
	} else if len(n.Keys) > smallMap {
		n.buildIndex()
	}
}

// keyID identifies a key the way Ruby's Hash does (eql?): 1, 1.0 and "1"
// are three different keys.
type keyID struct {
	kind Kind
	s    string
	n    uint64
}

func (n *Node) id() keyID {
	switch n.Kind {
	case String:
		return keyID{kind: String, s: n.Str}
	case Int:
		return keyID{kind: Int, n: uint64(n.Int)}
	case Float:
		if n.bigInt != "" {
			return keyID{kind: Int, s: n.bigInt}
		}
		return keyID{kind: Float, n: floatBits(n.Float)}
	case Bool:
		if n.Bool {
			return keyID{kind: Bool, n: 1}
		}
		return keyID{kind: Bool}
	case Date:
		return keyID{kind: Date, n: uint64(n.Date.Year)<<16 | uint64(n.Date.Month)<<8 | uint64(n.Date.Day)}
	case Null:
		return keyID{kind: Null}
	default:
		return keyID{kind: n.Kind, s: n.Inspect()}
	}
}

func (n *Node) buildIndex() {
	n.index = make(map[keyID]int, len(n.Keys)*2)
	for i, k := range n.Keys {
		n.index[k.id()] = i
	}
	n.indexLen = len(n.Keys)
}

// find returns the position of the key with identity id, or -1.
func (n *Node) find(id keyID) int {
	if n.index != nil && n.indexLen == len(n.Keys) {
		if i, ok := n.index[id]; ok && i < len(n.Keys) && n.Keys[i].id() == id {
			return i
		}
		return -1
	}
	if id.kind == String {
		for i, k := range n.Keys {
			if k.Kind == String && k.Str == id.s {
				return i
			}
		}
		return -1
	}
	for i, k := range n.Keys {
		if k.id() == id {
			return i
		}
	}
	return -1
}

// Get returns the value stored under the string key, or nil when the key is
// absent, n is not a map, or n is nil. Non-string keys (such as an Int key
// `12345:`) never match, as in Ruby where hash["12345"] misses hash[12345].
//
// Maps with more than a few keys carry an index built by Parse, so Get is
// O(1) on large files such as people lists. The index notices appended or
// removed entries; a caller that rewrites Keys in place must not rely on Get.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != Map {
		return nil
	}
	if i := n.find(keyID{kind: String, s: key}); i >= 0 && i < len(n.Values) {
		return n.Values[i]
	}
	return nil
}

// IsString reports whether n is a String node (false for nil).
func (n *Node) IsString() bool { return n != nil && n.Kind == String }

// controlIn finds a control character other than tab and line feed.
func controlIn(s string) (rune, bool) {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return r, true
		}
	}
	return 0, false
}

// Substitute replaces the text of every scalar (keys included) through expand, which puts the
// deferred values of environment substitution back into the parsed tree. A changed scalar is a
// String holding exactly the expanded text, with Substituted set, so that a value is never
// read as YAML. Two cases keep a YAML meaning, because configs rely on them: a plain scalar
// that was exactly one empty substitution is Null (as `key:` with nothing after it), and one
// that was exactly one substitution of `true`, `false` or a decimal integer is a Bool or Int
// (its Str is still the text as given).
func (n *Node) Substitute(expand func(string) (out string, subst, whole bool)) {
	if n == nil {
		return
	}
	switch n.Kind {
	case Seq:
		for _, it := range n.Items {
			it.Substitute(expand)
		}
		return
	case Map:
		for i, k := range n.Keys {
			k.Substitute(expand)
			n.Values[i].Substitute(expand)
		}
		if n.index != nil {
			n.buildIndex() // keys may have changed
		}
		return
	}
	out, subst, whole := expand(n.Str)
	if !subst {
		return
	}
	line, quoted := n.Line, n.Quoted
	*n = Node{Kind: String, Line: line, Str: out, Quoted: quoted, Substituted: true}
	if !whole || quoted {
		return
	}
	switch {
	case out == "":
		n.Kind = Null
	case out == "true" || out == "false":
		n.Kind, n.Bool = Bool, out == "true"
	case decimal(out):
		if v, err := strconv.ParseInt(out, 10, 64); err == nil {
			n.Kind, n.Int = Int, v
		}
	}
}

func decimal(s string) bool {
	t := strings.TrimPrefix(s, "-")
	if t == "" || len(t) > 1 && t[0] == '0' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}
