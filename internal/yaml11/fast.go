package yaml11

import (
	"strings"
	"unicode/utf8"
)

// The fast path reads the block-style subset of YAML that machine-written and most
// hand-written entitlements files use (people lists, manager maps, group files): nested block
// mappings and sequences, one entry per line, plain scalars and quoted scalars without
// escapes, full-line comments. It builds the same tree as the yaml.v3 path without building
// yaml.v3's node tree first, which halves the cost of the largest inputs of a run (a 50,000
// person people file and its manager map). Anything outside the subset, however legal (flow
// collections, anchors, tags, block scalars, multi-line or escaped scalars, trailing comments,
// tabs, CR line ends, directives) makes it give up, and Parse takes the yaml.v3 path, which
// also produces every error message: the fast path never reports an error of its own.
// FuzzFastPath checks that whenever it answers, it answers exactly as the full path does.

type fastLine struct {
	ind int    // leading spaces
	s   string // the rest, without trailing spaces
	no  int    // 1-based line number
}

// maxFastDepth is the deepest nesting the fast path reads.
const maxFastDepth = 1000

type fastParser struct {
	c     *converter
	lines []fastLine
	i     int
	depth int
}

// fastParse returns the document's tree and true, or false when data is outside the subset.
func fastParse(data []byte, opt Options) (*Node, []Warning, bool) {
	// One string for the whole text: every key and value is a substring of it.
	text := string(data)
	if !fastText(text) {
		return nil, nil, false
	}
	return fastParseText(text, opt, nil)
}

// fastText reports whether text is free of what the fast path leaves to yaml.v3 before
// looking at its structure: tabs, carriage returns, a byte order mark, characters YAML does
// not allow.
func fastText(text string) bool {
	return len(text) > 0 && strings.IndexByte(text, '\t') < 0 && strings.IndexByte(text, '\r') < 0 &&
		!strings.HasPrefix(text, "\xef\xbb\xbf") && printableString(text)
}

// fastParseText is fastParse of text already checked for tabs, carriage returns, a byte
// order mark and non-printable characters. With an arena, the tree is built in its storage.
func fastParseText(text string, opt Options, a *arena) (*Node, []Warning, bool) {
	var lines []fastLine
	if a != nil {
		lines = a.lines[:0]
	}
	lines, ok := splitFastLines(text, lines)
	if a != nil {
		a.lines = lines
	}
	if !ok || len(lines) == 0 {
		return nil, nil, false
	}
	p := fastParser{lines: lines,
		// Three nodes per line covers the common shapes (a sequence item holding a key and its
		// value); deeper nesting on one line only falls back to allocating nodes one by one.
		c: &converter{allowDates: opt.AllowDates, allowControl: opt.AllowControl, more: 3*len(lines) + 1, arena: a}}
	if lines[0].ind == 0 && lines[0].s == "---" {
		p.i++
		if len(lines) == 1 {
			return nil, nil, false
		}
	}
	root, ok := p.node(0)
	if !ok || p.i != len(p.lines) {
		return nil, nil, false
	}
	return root, p.c.warnings, true
}

// splitFastLines cuts text into content lines (appended to lines), dropping blank and
// comment-only lines; it fails on document markers after the first line.
func splitFastLines(text string, lines []fastLine) ([]fastLine, bool) {
	if lines == nil {
		lines = make([]fastLine, 0, strings.Count(text, "\n")+1)
	}
	no := 0
	for len(text) > 0 {
		no++
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		ind := 0
		for ind < len(line) && line[ind] == ' ' {
			ind++
		}
		end := len(line)
		for end > ind && line[end-1] == ' ' {
			end--
		}
		if end == ind || line[ind] == '#' {
			continue
		}
		s := line[ind:end]
		if ind == 0 && (len(s) >= 3 && (s[:3] == "---" || s[:3] == "...") || s[0] == '%') && (len(lines) > 0 || s != "---") {
			return lines, false
		}
		lines = append(lines, fastLine{ind: ind, s: s, no: no})
	}
	return lines, true
}

// arena is storage a Parser reuses from one document to the next.
type arena struct {
	nodes []Node
	used  int
	ptrs  []*Node
	pused int
	lines []fastLine
}

func (a *arena) reset() { a.used, a.pused = 0, 0 }

func (a *arena) node() *Node {
	if a.used == len(a.nodes) {
		// The nodes handed out so far stay where they are (the tree points at them); the
		// next document starts in the larger block.
		a.nodes, a.used = make([]Node, max(2*len(a.nodes), 64)), 0
	}
	n := &a.nodes[a.used]
	a.used++
	*n = Node{}
	return n
}

func (a *arena) pointers(k int) []*Node {
	if a.pused+k > len(a.ptrs) {
		a.ptrs, a.pused = make([]*Node, max(2*len(a.ptrs), 64, k)), 0
	}
	s := a.ptrs[a.pused : a.pused+k : a.pused+k]
	a.pused += k
	clear(s)
	return s
}

// Parser parses documents one after another into storage it reuses: the tree a call returns
// is valid only until the next call. It suits callers that turn each tree into their own
// values at once, such as a people file read entry by entry (thousands of small documents
// whose nodes would otherwise all be garbage).
type Parser struct{ a arena }

// ParseString is Parse of text. The tree's strings are substrings of text.
func (p *Parser) ParseString(text string, opt Options) (*Node, []Warning, error) {
	p.a.reset()
	if fastText(text) {
		if root, warns, ok := fastParseText(text, opt, &p.a); ok {
			return root, warns, nil
		}
	}
	return parseFull([]byte(text), opt)
}

func isSeqItem(s string) bool { return s[0] == '-' && (len(s) == 1 || s[1] == ' ') }

// node reads the block node that starts at the current line, whose indentation must be at
// least min.
func (p *fastParser) node(min int) (*Node, bool) {
	// yaml.v3 refuses documents nested 10,000 levels deep; this path leaves deep ones to it.
	if p.i >= len(p.lines) || p.depth >= maxFastDepth {
		return nil, false
	}
	p.depth++
	defer func() { p.depth-- }()
	l := p.lines[p.i]
	if l.ind < min {
		return nil, false
	}
	if isSeqItem(l.s) {
		return p.seq(l.ind)
	}
	if _, _, ok := splitKey(l.s); !ok {
		return nil, false // a scalar on a line of its own, or not in the subset
	}
	return p.mapping(l.ind)
}

func (p *fastParser) seq(ind int) (*Node, bool) {
	n := p.c.newNode()
	n.Kind, n.Line = Seq, p.lines[p.i].no
	for p.i < len(p.lines) && p.lines[p.i].ind == ind && isSeqItem(p.lines[p.i].s) {
		l := &p.lines[p.i]
		k := 1
		for k < len(l.s) && l.s[k] == ' ' {
			k++
		}
		if k == len(l.s) {
			return nil, false // an empty item, or one whose content starts on the next line
		}
		// The item's content is a line of its own, indented to where it starts.
		l.ind, l.s = ind+k, l.s[k:]
		var item *Node
		var ok bool
		if _, _, isMap := splitKey(l.s); isMap || isSeqItem(l.s) {
			item, ok = p.node(l.ind)
		} else {
			item, ok = p.scalar(l.s, l.no)
			p.i++
		}
		if !ok {
			return nil, false
		}
		n.Items = append(n.Items, item)
	}
	if p.i < len(p.lines) && p.lines[p.i].ind > ind {
		return nil, false
	}
	return n, true
}

func (p *fastParser) mapping(ind int) (*Node, bool) {
	n := p.c.newNode()
	n.Kind, n.Line = Map, p.lines[p.i].no
	// Size the map for its entries (lines at its indentation that are not the items of a
	// compact sequence value), as the yaml.v3 path does from its node tree: one allocation
	// for keys and values, and a large map's index hashed without rehashing.
	pairs := 0
	for _, l := range p.lines[p.i:] {
		if l.ind < ind {
			break
		}
		if l.ind == ind && !isSeqItem(l.s) {
			pairs++
		}
	}
	var kv []*Node
	if p.c.arena != nil {
		kv = p.c.arena.pointers(2 * pairs)
	} else {
		kv = make([]*Node, 2*pairs)
	}
	n.Keys = kv[:0:pairs]
	n.Values = kv[pairs : pairs : 2*pairs]
	if pairs > smallMap {
		n.index = make(map[keyID]int, pairs)
	}
	for p.i < len(p.lines) && p.lines[p.i].ind == ind {
		l := p.lines[p.i]
		ks, vs, ok := splitKey(l.s)
		if !ok || len(ks) > 1024 {
			return nil, false
		}
		k, ok := p.scalar(ks, l.no)
		// A merge key, quoted or not (as on the yaml.v3 path, and in Psych), is never ours.
		if !ok || k.Kind == String && k.Str == "<<" {
			return nil, false
		}
		p.i++
		var v *Node
		switch {
		case vs != "":
			v, ok = p.scalar(vs, l.no)
		case p.i < len(p.lines) && p.lines[p.i].ind > ind:
			v, ok = p.node(ind + 1)
		case p.i < len(p.lines) && p.lines[p.i].ind == ind && isSeqItem(p.lines[p.i].s):
			v, ok = p.seq(ind)
		default:
			v, ok = p.scalar("", l.no)
		}
		if !ok {
			return nil, false
		}
		p.c.addPair(n, k, v)
	}
	if p.i < len(p.lines) && p.lines[p.i].ind > ind {
		return nil, false
	}
	if len(n.Keys) <= smallMap {
		n.index, n.indexLen = nil, 0 // duplicates made it small: no index, as on the yaml.v3 path
	}
	return n, true
}

// splitKey cuts "key: value" or "key:" at the first colon that ends a key.
func splitKey(s string) (key, value string, ok bool) {
	if s[0] == '"' || s[0] == '\'' {
		q := s[0]
		end := 1
		for end < len(s) && s[end] != q {
			end++
		}
		if end+1 >= len(s) || s[end+1] != ':' {
			return "", "", false
		}
		key, s = s[:end+1], s[end+2:]
	} else {
		i := 0
		for ; i < len(s); i++ {
			if s[i] == ':' && (i+1 == len(s) || s[i+1] == ' ') {
				break
			}
		}
		if i == len(s) || i == 0 || s[i-1] == ' ' {
			return "", "", false
		}
		key, s = s[:i], s[i+1:]
	}
	if s == "" {
		return key, "", true
	}
	if s[0] != ' ' {
		return "", "", false
	}
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	return key, s, true
}

// scalar converts one scalar of the subset, or fails for anything else.
func (p *fastParser) scalar(s string, no int) (*Node, bool) {
	n := p.c.newNode()
	n.Line = no
	if s == "" {
		n.Kind = Null
		return n, true
	}
	if q := s[0]; q == '"' || q == '\'' {
		if len(s) < 2 || s[len(s)-1] != q {
			return nil, false
		}
		body := s[1 : len(s)-1]
		for i := 0; i < len(body); i++ {
			if body[i] == q || body[i] == '\\' && q == '"' || body[i] < 0x20 || body[i] == 0x7f {
				return nil, false
			}
		}
		n.Kind, n.Str, n.Quoted = String, body, true
		return n, true
	}
	if !plainStart(s) {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20 || b == 0x7f || b == '#' || b == '[' || b == ']' || b == '{' || b == '}':
			return nil, false
		case b == ':' && (i+1 == len(s) || s[i+1] == ' '):
			return nil, false
		}
	}
	n.Str = s
	if err := p.c.resolveInto(n, s, no); err != nil {
		return nil, false
	}
	return n, true
}

// plainStart reports whether s may start a plain scalar of the subset: not an indicator.
func plainStart(s string) bool {
	switch s[0] {
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return false
	case '-':
		return len(s) > 1 && s[1] != ' '
	}
	return true
}

// printableString reports whether s is valid UTF-8 made only of line feeds and the characters
// YAML allows in content, excluding those yaml.v3 reads as line breaks or byte order marks
// (yaml.v3 checks the whole stream, comments included, before it parses).
func printableString(s string) bool {
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b < 0x20 && b != '\n' || b == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !printableRune(r, size) {
			return false
		}
		i += size
	}
	return true
}

func printableRune(r rune, size int) bool {
	return !(r == utf8.RuneError && size == 1 || r < 0xa0 || r == 0x2028 || r == 0x2029 ||
		r >= 0xd800 && r < 0xe000 || r == 0xfeff || r == 0xfffe || r == 0xffff)
}
