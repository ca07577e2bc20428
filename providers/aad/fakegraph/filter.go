package fakegraph

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// maxInValues is Graph's default limit on the values of one `in` clause.
const maxInValues = 15

// filter is a parsed OData $filter over the few properties the fake knows. Comparisons of
// strings are case-insensitive, as Graph compares directory string properties.
type filter struct {
	or [][]cond // disjunction of conjunctions; empty means "match everything"
}

type cond struct {
	op     string // eq, ne, in, startswith
	prop   string
	values []any
}

func (f filter) match(props map[string]any) bool {
	if len(f.or) == 0 {
		return true
	}
	for _, and := range f.or {
		ok := true
		for _, c := range and {
			if !c.match(props[c.prop]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (c cond) match(v any) bool {
	eq := func(a, b any) bool {
		as, aok := a.(string)
		bs, bok := b.(string)
		if aok && bok {
			return strings.EqualFold(as, bs)
		}
		return a == b
	}
	switch c.op {
	case "eq":
		return eq(v, c.values[0])
	case "ne":
		return !eq(v, c.values[0])
	case "in":
		return slices.ContainsFunc(c.values, func(x any) bool { return eq(v, x) })
	case "startswith":
		s, ok := v.(string)
		p, _ := c.values[0].(string)
		return ok && strings.HasPrefix(strings.ToLower(s), strings.ToLower(p))
	}
	return false
}

// lookup returns the values when the filter only selects prop by equality (eq / in / or of
// those), so that the server can use an index.
func (f filter) lookup(prop string) ([]string, bool) {
	if len(f.or) == 0 {
		return nil, false
	}
	var out []string
	for _, and := range f.or {
		if len(and) != 1 || !strings.EqualFold(and[0].prop, prop) || (and[0].op != "eq" && and[0].op != "in") {
			return nil, false
		}
		for _, v := range and[0].values {
			s, ok := v.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
	}
	return out, true
}

// parseFilter parses: expr := and ("or" and)*; and := atom ("and" atom)*;
// atom := "(" expr ")" | prop ("eq"|"ne") lit | prop "in" "(" lit {"," lit} ")" |
// "startswith(" prop "," lit ")". Nested parentheses inside "and" are not supported.
func parseFilter(s string) (filter, error) {
	if strings.TrimSpace(s) == "" {
		return filter{}, nil
	}
	toks, err := tokenize(s)
	if err != nil {
		return filter{}, err
	}
	p := &parser{toks: toks}
	f, err := p.expr()
	if err != nil {
		return filter{}, err
	}
	if p.i != len(p.toks) {
		return filter{}, fmt.Errorf("unexpected %q in filter", p.toks[p.i].text)
	}
	return f, nil
}

type tok struct {
	text string
	str  bool // a quoted string literal
}

func tokenize(s string) ([]tok, error) {
	var out []tok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case c == '(' || c == ')' || c == ',':
			out = append(out, tok{text: string(c)})
			i++
		case c == '\'':
			var b strings.Builder
			i++
			for {
				if i >= len(s) {
					return nil, fmt.Errorf("unterminated string in filter")
				}
				if s[i] == '\'' {
					if i+1 < len(s) && s[i+1] == '\'' {
						b.WriteByte('\'')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			out = append(out, tok{text: b.String(), str: true})
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" (),'", rune(s[j])) {
				j++
			}
			out = append(out, tok{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}

type parser struct {
	toks []tok
	i    int
}

func (p *parser) peek(word string) bool {
	return p.i < len(p.toks) && !p.toks[p.i].str && strings.EqualFold(p.toks[p.i].text, word)
}

func (p *parser) expect(word string) error {
	if !p.peek(word) {
		got := "end of filter"
		if p.i < len(p.toks) {
			got = p.toks[p.i].text
		}
		return fmt.Errorf("expected %q in filter, got %q", word, got)
	}
	p.i++
	return nil
}

func (p *parser) expr() (filter, error) {
	var f filter
	for {
		and, err := p.and()
		if err != nil {
			return filter{}, err
		}
		f.or = append(f.or, and...)
		if !p.peek("or") {
			return f, nil
		}
		p.i++
	}
}

// and returns the disjunction equivalent of a conjunction (a parenthesised "or" inside an
// "and" is only supported when it stands alone).
func (p *parser) and() ([][]cond, error) {
	var conj []cond
	for {
		if p.peek("(") {
			p.i++
			inner, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			if !p.peek("and") && len(conj) == 0 {
				return inner.or, nil
			}
			if len(inner.or) != 1 {
				return nil, fmt.Errorf("unsupported filter: parenthesised 'or' inside 'and'")
			}
			conj = append(conj, inner.or[0]...)
		} else {
			c, err := p.atom()
			if err != nil {
				return nil, err
			}
			conj = append(conj, c)
		}
		if !p.peek("and") {
			return [][]cond{conj}, nil
		}
		p.i++
	}
}

func (p *parser) atom() (cond, error) {
	if p.i >= len(p.toks) {
		return cond{}, fmt.Errorf("filter ends early")
	}
	if p.peek("startswith") {
		p.i++
		if err := p.expect("("); err != nil {
			return cond{}, err
		}
		prop := p.next()
		if err := p.expect(","); err != nil {
			return cond{}, err
		}
		v, err := p.lit()
		if err != nil {
			return cond{}, err
		}
		return cond{op: "startswith", prop: prop, values: []any{v}}, p.expect(")")
	}
	prop := p.next()
	switch {
	case p.peek("eq"), p.peek("ne"):
		op := strings.ToLower(p.next())
		v, err := p.lit()
		return cond{op: op, prop: prop, values: []any{v}}, err
	case p.peek("in"):
		p.i++
		if err := p.expect("("); err != nil {
			return cond{}, err
		}
		c := cond{op: "in", prop: prop}
		for {
			v, err := p.lit()
			if err != nil {
				return cond{}, err
			}
			c.values = append(c.values, v)
			if p.peek(")") {
				p.i++
				break
			}
			if err := p.expect(","); err != nil {
				return cond{}, err
			}
		}
		if len(c.values) > maxInValues {
			return cond{}, fmt.Errorf("Too many child clauses specified in search filter expression containing 'OR' operators: %d. Max allowed: %d.", len(c.values), maxInValues)
		}
		return c, nil
	}
	return cond{}, fmt.Errorf("unsupported filter near %q", prop)
}

func (p *parser) next() string {
	if p.i >= len(p.toks) {
		return ""
	}
	p.i++
	return p.toks[p.i-1].text
}

func (p *parser) lit() (any, error) {
	if p.i >= len(p.toks) {
		return nil, fmt.Errorf("filter ends early")
	}
	t := p.toks[p.i]
	p.i++
	if t.str {
		return t.text, nil
	}
	switch strings.ToLower(t.text) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	return nil, fmt.Errorf("unsupported literal %q in filter", t.text)
}

func sortObjects(os []*object) {
	slices.SortFunc(os, func(a, b *object) int { return cmp.Compare(a.id, b.id) })
}
