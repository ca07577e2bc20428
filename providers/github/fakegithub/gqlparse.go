package fakegithub

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a small, strict GraphQL parser: executable documents with one operation,
// variable definitions, aliases, arguments of every literal kind and nested selection sets.
// Fragments and directives are rejected with a clear error; the client under test does not
// send them, and a fake that silently ignored them would hide bugs. A real parser (instead of
// matching query text with regular expressions, as the Ruby acceptance fake does) is what
// lets the fake answer aliased batches and check that every variable is declared and used.

// gqlDoc is a parsed operation.
type gqlDoc struct {
	Op      string // query or mutation
	Name    string
	VarDefs []gqlVarDef
	Sel     []*gqlField
}

type gqlVarDef struct {
	Name     string
	Type     string // as written, e.g. "String!" or "[String!]"
	NonNull  bool
	Default  *gqlValue
	Position int
}

// gqlField is one field selection.
type gqlField struct {
	Alias, Name string
	Args        []gqlArg
	Sel         []*gqlField
	Pos         int
}

// Key is the response key of the field (its alias, or its name).
func (f *gqlField) Key() string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

type gqlArg struct {
	Name  string
	Value gqlValue
}

type gqlValueKind uint8

const (
	gvVar gqlValueKind = iota
	gvString
	gvInt
	gvFloat
	gvBool
	gvNull
	gvEnum
	gvList
	gvObject
)

type gqlValue struct {
	Kind gqlValueKind
	Str  string // variable name, string, enum, or number text
	Bool bool
	List []gqlValue
	Obj  []gqlArg
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tPunct
	tName
	tInt
	tFloat
	tString
)

type token struct {
	kind tokKind
	text string
	pos  int
}

type gqlLexer struct {
	src string
	pos int
}

func (l *gqlLexer) next() (token, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			l.pos++
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' && l.src[l.pos] != '\r' {
				l.pos++
			}
		case c == 0xEF && strings.HasPrefix(l.src[l.pos:], "\uFEFF"):
			l.pos += 3
		default:
			return l.token()
		}
	}
	return token{kind: tEOF, pos: l.pos}, nil
}

func isNameStart(c byte) bool { return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isNameChar(c byte) bool  { return isNameStart(c) || ('0' <= c && c <= '9') }

func (l *gqlLexer) token() (token, error) {
	start := l.pos
	c := l.src[l.pos]
	switch {
	case strings.HasPrefix(l.src[l.pos:], "..."):
		l.pos += 3
		return token{kind: tPunct, text: "...", pos: start}, nil
	case strings.IndexByte("!$&():=@[]{}|", c) >= 0:
		l.pos++
		return token{kind: tPunct, text: string(c), pos: start}, nil
	case isNameStart(c):
		for l.pos < len(l.src) && isNameChar(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tName, text: l.src[start:l.pos], pos: start}, nil
	case c == '-' || ('0' <= c && c <= '9'):
		return l.number()
	case c == '"':
		if strings.HasPrefix(l.src[l.pos:], `"""`) {
			return token{}, fmt.Errorf("block strings are not supported by the fake (offset %d)", start)
		}
		return l.str()
	}
	return token{}, fmt.Errorf("unexpected character %q at offset %d", c, start)
}

func (l *gqlLexer) number() (token, error) {
	start := l.pos
	if l.src[l.pos] == '-' {
		l.pos++
	}
	digits := func() int {
		n := 0
		for l.pos < len(l.src) && '0' <= l.src[l.pos] && l.src[l.pos] <= '9' {
			l.pos++
			n++
		}
		return n
	}
	if digits() == 0 {
		return token{}, fmt.Errorf("malformed number at offset %d", start)
	}
	kind := tInt
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		l.pos++
		kind = tFloat
		if digits() == 0 {
			return token{}, fmt.Errorf("malformed number at offset %d", start)
		}
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		l.pos++
		kind = tFloat
		if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
			l.pos++
		}
		if digits() == 0 {
			return token{}, fmt.Errorf("malformed number at offset %d", start)
		}
	}
	if l.pos < len(l.src) && isNameStart(l.src[l.pos]) {
		return token{}, fmt.Errorf("malformed number at offset %d", start)
	}
	return token{kind: kind, text: l.src[start:l.pos], pos: start}, nil
}

func (l *gqlLexer) str() (token, error) {
	start := l.pos
	l.pos++
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '"':
			l.pos++
			return token{kind: tString, text: b.String(), pos: start}, nil
		case c == '\n' || c == '\r':
			return token{}, fmt.Errorf("unterminated string at offset %d", start)
		case c == '\\':
			if l.pos+1 >= len(l.src) {
				return token{}, fmt.Errorf("unterminated string at offset %d", start)
			}
			e := l.src[l.pos+1]
			l.pos += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if l.pos+4 > len(l.src) {
					return token{}, fmt.Errorf("bad unicode escape at offset %d", l.pos)
				}
				n, err := strconv.ParseUint(l.src[l.pos:l.pos+4], 16, 32)
				if err != nil {
					return token{}, fmt.Errorf("bad unicode escape at offset %d", l.pos)
				}
				b.WriteRune(rune(n))
				l.pos += 4
			default:
				return token{}, fmt.Errorf("bad escape \\%c at offset %d", e, l.pos-2)
			}
		default:
			r, size := utf8.DecodeRuneInString(l.src[l.pos:])
			b.WriteRune(r)
			l.pos += size
		}
	}
	return token{}, fmt.Errorf("unterminated string at offset %d", start)
}

type gqlParser struct {
	lex gqlLexer
	tok token
}

// parseGraphQL parses a document holding exactly one operation (or one anonymous selection
// set, the query shorthand).
func parseGraphQL(src string) (*gqlDoc, error) {
	p := &gqlParser{lex: gqlLexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	doc := &gqlDoc{Op: "query"}
	switch {
	case p.is(tPunct, "{"):
	case p.tok.kind == tName && (p.tok.text == "query" || p.tok.text == "mutation"):
		doc.Op = p.tok.text
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.kind == tName {
			doc.Name = p.tok.text
			if err := p.advance(); err != nil {
				return nil, err
			}
		}
		if p.is(tPunct, "(") {
			defs, err := p.varDefs()
			if err != nil {
				return nil, err
			}
			doc.VarDefs = defs
		}
		if p.is(tPunct, "@") {
			return nil, p.errf("directives are not supported by the fake")
		}
	case p.tok.kind == tName && p.tok.text == "fragment":
		return nil, p.errf("fragments are not supported by the fake")
	default:
		return nil, p.errf("expected an operation")
	}
	sel, err := p.selectionSet()
	if err != nil {
		return nil, err
	}
	doc.Sel = sel
	if p.tok.kind != tEOF {
		return nil, p.errf("only one operation per document is supported")
	}
	return doc, nil
}

func (p *gqlParser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *gqlParser) is(k tokKind, text string) bool { return p.tok.kind == k && p.tok.text == text }

func (p *gqlParser) errf(format string, args ...any) error {
	what := p.tok.text
	if p.tok.kind == tEOF {
		what = "end of document"
	}
	return fmt.Errorf("%s (at offset %d, near %q)", fmt.Sprintf(format, args...), p.tok.pos, what)
}

func (p *gqlParser) expect(text string) error {
	if !p.is(tPunct, text) {
		return p.errf("expected %q", text)
	}
	return p.advance()
}

func (p *gqlParser) name() (string, error) {
	if p.tok.kind != tName {
		return "", p.errf("expected a name")
	}
	n := p.tok.text
	return n, p.advance()
}

func (p *gqlParser) varDefs() ([]gqlVarDef, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var out []gqlVarDef
	seen := map[string]bool{}
	for !p.is(tPunct, ")") {
		pos := p.tok.pos
		if err := p.expect("$"); err != nil {
			return nil, err
		}
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("variable $%s is declared twice", n)
		}
		seen[n] = true
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		typ, nonNull, err := p.typeRef()
		if err != nil {
			return nil, err
		}
		d := gqlVarDef{Name: n, Type: typ, NonNull: nonNull, Position: pos}
		if p.is(tPunct, "=") {
			if err := p.advance(); err != nil {
				return nil, err
			}
			v, err := p.value(true)
			if err != nil {
				return nil, err
			}
			d.Default = &v
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, p.errf("empty variable definitions")
	}
	return out, p.advance()
}

func (p *gqlParser) typeRef() (string, bool, error) {
	var typ string
	if p.is(tPunct, "[") {
		if err := p.advance(); err != nil {
			return "", false, err
		}
		inner, _, err := p.typeRef()
		if err != nil {
			return "", false, err
		}
		if err := p.expect("]"); err != nil {
			return "", false, err
		}
		typ = "[" + inner + "]"
	} else {
		n, err := p.name()
		if err != nil {
			return "", false, err
		}
		typ = n
	}
	if p.is(tPunct, "!") {
		return typ + "!", true, p.advance()
	}
	return typ, false, nil
}

func (p *gqlParser) selectionSet() ([]*gqlField, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var out []*gqlField
	for !p.is(tPunct, "}") {
		if p.is(tPunct, "...") {
			return nil, p.errf("fragments are not supported by the fake")
		}
		f, err := p.field()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, p.errf("empty selection set")
	}
	return out, p.advance()
}

func (p *gqlParser) field() (*gqlField, error) {
	f := &gqlField{Pos: p.tok.pos}
	n, err := p.name()
	if err != nil {
		return nil, err
	}
	if p.is(tPunct, ":") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		f.Alias = n
		if n, err = p.name(); err != nil {
			return nil, err
		}
	}
	f.Name = n
	if p.is(tPunct, "(") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for !p.is(tPunct, ")") {
			an, err := p.name()
			if err != nil {
				return nil, err
			}
			if seen[an] {
				return nil, p.errf("argument %s given twice", an)
			}
			seen[an] = true
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			v, err := p.value(false)
			if err != nil {
				return nil, err
			}
			f.Args = append(f.Args, gqlArg{Name: an, Value: v})
		}
		if len(f.Args) == 0 {
			return nil, p.errf("empty argument list")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	if p.is(tPunct, "@") {
		return nil, p.errf("directives are not supported by the fake")
	}
	if p.is(tPunct, "{") {
		sel, err := p.selectionSet()
		if err != nil {
			return nil, err
		}
		f.Sel = sel
	}
	return f, nil
}

func (p *gqlParser) value(constant bool) (gqlValue, error) {
	t := p.tok
	switch {
	case t.kind == tPunct && t.text == "$":
		if constant {
			return gqlValue{}, p.errf("variables are not allowed in default values")
		}
		if err := p.advance(); err != nil {
			return gqlValue{}, err
		}
		n, err := p.name()
		return gqlValue{Kind: gvVar, Str: n}, err
	case t.kind == tString:
		return gqlValue{Kind: gvString, Str: t.text}, p.advance()
	case t.kind == tInt:
		return gqlValue{Kind: gvInt, Str: t.text}, p.advance()
	case t.kind == tFloat:
		return gqlValue{Kind: gvFloat, Str: t.text}, p.advance()
	case t.kind == tName:
		var v gqlValue
		switch t.text {
		case "true", "false":
			v = gqlValue{Kind: gvBool, Bool: t.text == "true"}
		case "null":
			v = gqlValue{Kind: gvNull}
		default:
			v = gqlValue{Kind: gvEnum, Str: t.text}
		}
		return v, p.advance()
	case t.kind == tPunct && t.text == "[":
		if err := p.advance(); err != nil {
			return gqlValue{}, err
		}
		v := gqlValue{Kind: gvList}
		for !p.is(tPunct, "]") {
			e, err := p.value(constant)
			if err != nil {
				return gqlValue{}, err
			}
			v.List = append(v.List, e)
		}
		return v, p.advance()
	case t.kind == tPunct && t.text == "{":
		if err := p.advance(); err != nil {
			return gqlValue{}, err
		}
		v := gqlValue{Kind: gvObject}
		for !p.is(tPunct, "}") {
			n, err := p.name()
			if err != nil {
				return gqlValue{}, err
			}
			if err := p.expect(":"); err != nil {
				return gqlValue{}, err
			}
			e, err := p.value(constant)
			if err != nil {
				return gqlValue{}, err
			}
			v.Obj = append(v.Obj, gqlArg{Name: n, Value: e})
		}
		return v, p.advance()
	}
	return gqlValue{}, p.errf("expected a value")
}

// usedVars collects the variables referenced in a selection tree.
func usedVars(sel []*gqlField, out map[string]bool) {
	var walk func(v gqlValue)
	walk = func(v gqlValue) {
		switch v.Kind {
		case gvVar:
			out[v.Str] = true
		case gvList:
			for _, e := range v.List {
				walk(e)
			}
		case gvObject:
			for _, a := range v.Obj {
				walk(a.Value)
			}
		}
	}
	for _, f := range sel {
		for _, a := range f.Args {
			walk(a.Value)
		}
		usedVars(f.Sel, out)
	}
}
