// Package erb renders the small subset of Ruby ERB that entitlements config
// files use, without executing any Ruby.
//
// The Ruby app renders its config file with ERB.new(text, trim_mode: "-")
// before parsing it as YAML. Real configs use that for exactly two things:
// `<%= ENV["NAME"] %>` substitutions and a leading `<%- require ... -%>`
// block that loads plugin code. This package evaluates the first (ENV
// lookups are the only expressions it understands), drops the second with a
// warning (Go cannot load Ruby plugins), and refuses every other output
// expression instead of guessing, so that a config never silently renders
// differently from Ruby.
//
// Tag scanning and trimming follow Ruby's ERB::Compiler::ExplicitScanner
// (trim mode "-") exactly, because trimming decides which blank lines
// survive into the YAML:
//
//   - `<%-` also removes the spaces and tabs before it, but only when
//     nothing else precedes it on its line. "Its line" starts after the
//     previous newline or after the previous tag (or `<%%`), because Ruby
//     matches /^[ \t]*<%-/ with a StringScanner that treats its current
//     position as a line start.
//   - `-%>` also removes one "\n" or "\r\n" directly after it; `%>` does not.
//   - `<%%` is a literal "<%" outside tags; `%%>` is a literal "%>" inside
//     them (and has no special meaning outside).
//
// As a Go-side convenience (not ERB), `${NAME}` in template text is also
// replaced by the environment variable NAME ("" when unset), and `$${`
// writes a literal "${".
package erb

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Options configures Render.
type Options struct {
	// Getenv looks up environment variables; nil means os.LookupEnv. Tests
	// and callers that snapshot the environment substitute their own.
	Getenv func(string) (string, bool)
	// Defer writes a placeholder (Rendered.Token, an index and "_") instead of each
	// substituted value, and keeps the values in Rendered.Values. The caller parses the text
	// and puts the values back into the parsed scalars (Rendered.Expand), so that a value is
	// never read as YAML syntax: `*x`, `!x`, `&x y`, `x #y`, quotes, colons and newlines stay
	// exactly as given, and a parse error never quotes a value.
	Defer bool
}

// Rendered is the result of RenderDeferred.
type Rendered struct {
	Text []byte
	// Token starts every placeholder; it does not occur in the source.
	Token string
	// Values are the substituted values, by placeholder index.
	Values []string
}

// Expand replaces the placeholders in s by their values. whole reports that s was exactly
// one placeholder; subst that it held at least one.
func (r *Rendered) Expand(s string) (out string, subst, whole bool) {
	if r == nil || len(r.Values) == 0 || !strings.Contains(s, r.Token) {
		return s, false, false
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, r.Token)
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		j := i + len(r.Token)
		k := j
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		n, err := strconv.Atoi(rest[j:k])
		if err != nil || k >= len(rest) || rest[k] != '_' || n >= len(r.Values) {
			// Not one of ours (a value cannot contain the token: it is chosen per source).
			b.WriteString(rest[i:j])
			rest = rest[j:]
			continue
		}
		if i == 0 && k+1 == len(rest) && b.Len() == 0 {
			whole = true
		}
		b.WriteString(r.Values[n])
		subst = true
		rest = rest[k+1:]
	}
	return b.String(), subst, whole
}

// RenderDeferred renders src with Options.Defer set.
func RenderDeferred(src []byte, opt Options) (*Rendered, []Warning, error) {
	token := "erbvalue"
	for {
		for bytes.Contains(src, []byte(token)) {
			token += "x"
		}
		r := renderer{src: src, out: make([]byte, 0, len(src)), getenv: opt.Getenv, line: 1,
			deferred: &Rendered{Token: token}}
		if r.getenv == nil {
			r.getenv = os.LookupEnv
		}
		if err := r.render(); err != nil {
			return nil, r.warnings, err
		}
		// Removing a tag can join template text into the token ("erbval<%# %>ue"): then
		// render again with a longer one.
		if bytes.Count(r.out, []byte(token)) == len(r.deferred.Values) {
			r.deferred.Text = r.out
			return r.deferred, r.warnings, nil
		}
		token += "x"
	}
}

// emit writes a substituted value (or its placeholder).
func (r *renderer) emit(v string) {
	if r.deferred == nil {
		r.out = append(r.out, v...)
		return
	}
	r.out = append(r.out, r.deferred.Token...)
	r.out = strconv.AppendInt(r.out, int64(len(r.deferred.Values)), 10)
	r.out = append(r.out, '_')
	r.deferred.Values = append(r.deferred.Values, v)
}

// Warning reports template content that Ruby would act on but Go ignores.
type Warning struct {
	Line int
	Msg  string
}

func (w Warning) String() string { return "line " + strconv.Itoa(w.Line) + ": " + w.Msg }

// Error is a template that cannot be rendered, with the 1-based line of the
// offending tag.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Msg }

type tagKind uint8

const (
	codeTag    tagKind = iota // <% and <%-
	outputTag                 // <%=
	commentTag                // <%#
)

type renderer struct {
	src      []byte
	out      []byte
	getenv   func(string) (string, bool)
	warnings []Warning
	deferred *Rendered

	// Line counting is incremental: positions only move forward.
	linePos, line int
}

// Render renders src. On error it returns nil output, the warnings
// collected so far, and an *Error.
func Render(src []byte, opt Options) ([]byte, []Warning, error) {
	if opt.Defer {
		d, w, err := RenderDeferred(src, opt)
		if err != nil {
			return nil, w, err
		}
		return d.Text, w, nil
	}
	r := renderer{src: src, out: make([]byte, 0, len(src)), getenv: opt.Getenv, line: 1}
	if r.getenv == nil {
		r.getenv = os.LookupEnv
	}
	if err := r.render(); err != nil {
		return nil, r.warnings, err
	}
	return r.out, r.warnings, nil
}

// lineAt returns the 1-based line of byte offset pos (pos never decreases
// between calls).
func (r *renderer) lineAt(pos int) int {
	if pos > r.linePos {
		r.line += bytes.Count(r.src[r.linePos:pos], []byte{'\n'})
		r.linePos = pos
	}
	return r.line
}

func (r *renderer) render() error {
	src := r.src
	p := 0 // scan position; Ruby's /^/ matches here as well as after "\n"
	for p < len(src) {
		i := bytes.Index(src[p:], []byte("<%"))
		if i < 0 {
			r.text(src[p:])
			return nil
		}
		i += p
		next := byte(0)
		if i+2 < len(src) {
			next = src[i+2]
		}
		if next == '%' { // <%% is a literal <%
			r.text(src[p:i])
			r.out = append(r.out, "<%"...)
			p = i + 3
			continue
		}
		textEnd, start, kind := i, i+2, codeTag
		switch next {
		case '-':
			start = i + 3
			ws := i
			for ws > p && (src[ws-1] == ' ' || src[ws-1] == '\t') {
				ws--
			}
			if ws == p || src[ws-1] == '\n' {
				textEnd = ws
			}
		case '=':
			start, kind = i+3, outputTag
		case '#':
			start, kind = i+3, commentTag
		}
		r.text(src[p:textEnd])
		line := r.lineAt(i)
		content, end, trim, ok := scanTag(src, start)
		if !ok {
			return &Error{Line: line, Msg: "unterminated ERB tag " + strconv.Quote(string(src[i:start])) + " (no closing %>)"}
		}
		if err := r.tag(kind, content, line); err != nil {
			return err
		}
		p = end
		if trim {
			if bytes.HasPrefix(src[p:], []byte("\r\n")) {
				p += 2
			} else if p < len(src) && src[p] == '\n' {
				p++
			}
		}
	}
	return nil
}

// scanTag reads a tag's content from start up to its closing "%>" or
// "-%>", turning "%%>" into "%>" on the way. It returns the offset after
// the closing delimiter and whether the delimiter was "-%>".
func scanTag(src []byte, start int) (content string, end int, trim, ok bool) {
	var b []byte // only allocated when the content contains %%>
	seg := start
	for j := start; j < len(src); j++ {
		switch {
		case src[j] == '-' && bytes.HasPrefix(src[j+1:], []byte("%>")):
			return joinContent(b, src[seg:j]), j + 3, true, true
		case src[j] == '%' && bytes.HasPrefix(src[j+1:], []byte("%>")):
			b = append(b, src[seg:j]...)
			b = append(b, "%>"...)
			j += 2
			seg = j + 1
		case src[j] == '%' && j+1 < len(src) && src[j+1] == '>':
			return joinContent(b, src[seg:j]), j + 2, false, true
		}
	}
	return "", 0, false, false
}

func joinContent(b, tail []byte) string {
	if b == nil {
		return string(tail)
	}
	return string(append(b, tail...))
}

func (r *renderer) tag(kind tagKind, content string, line int) error {
	switch kind {
	case commentTag:
		return nil
	case outputTag:
		v, msg := r.eval(content)
		if msg != "" {
			return &Error{Line: line, Msg: msg}
		}
		r.emit(v)
		return nil
	}
	code := strings.TrimSpace(content)
	switch {
	case code == "":
		return nil
	case code[0] == '=':
		// "<%-= x %>" or "<% = x %>" is Ruby code starting with "=": a
		// SyntaxError in Ruby, so not something to skip quietly.
		return &Error{Line: line, Msg: "invalid ERB code tag " + strconv.Quote(code) + " (Ruby raises a SyntaxError; write <%= ... %> to output a value)"}
	}
	r.warnings = append(r.warnings, Warning{Line: line, Msg: "ignored ERB code tag (Ruby code is never executed): " + abbreviate(code)})
	return nil
}

func abbreviate(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// text copies template text to the output, expanding ${NAME}.
func (r *renderer) text(t []byte) {
	for {
		i := bytes.IndexByte(t, '$')
		if i < 0 {
			r.out = append(r.out, t...)
			return
		}
		r.out = append(r.out, t[:i]...)
		t = t[i:]
		switch {
		case bytes.HasPrefix(t, []byte("$${")):
			r.out = append(r.out, "${"...)
			t = t[3:]
		case len(t) > 1 && t[1] == '{':
			if n := envRefLen(t[2:]); n > 0 {
				v, _ := r.getenv(string(t[2 : 2+n]))
				r.emit(v)
				t = t[3+n:]
			} else {
				r.out = append(r.out, "${"...)
				t = t[2:]
			}
		default:
			r.out = append(r.out, '$')
			t = t[1:]
		}
	}
}

// envRefLen returns the length of NAME when t starts with "NAME}", NAME
// being a shell-style variable name, else 0.
func envRefLen(t []byte) int {
	for i, c := range t {
		switch {
		case c == '}':
			return i
		case c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return 0
		}
	}
	return 0
}

// eval evaluates the only expressions real configs put into <%= %>:
// ENV["X"], ENV['X'], ENV.fetch("X") and ENV.fetch("X", default). It
// returns the rendered value or an error message.
func (r *renderer) eval(expr string) (string, string) {
	p := exprParser{s: expr}
	unsupported := fmt.Sprintf("unsupported ERB expression %q (only ENV[\"NAME\"] and ENV.fetch are supported; templates are never executed)", strings.TrimSpace(expr))
	p.ws()
	if !p.lit("ENV") {
		return "", unsupported
	}
	p.ws()
	switch {
	case p.lit("["):
		p.ws()
		name, ok := p.str()
		if !ok {
			return "", unsupported
		}
		p.ws()
		if !p.lit("]") || !p.end() {
			return "", unsupported
		}
		v, _ := r.getenv(name) // nil.to_s: an unset variable renders as ""
		return v, ""
	case p.lit("."):
		p.ws()
		if !p.lit("fetch") {
			return "", unsupported
		}
		p.ws()
		if !p.lit("(") {
			return "", unsupported
		}
		p.ws()
		name, ok := p.str()
		if !ok {
			return "", unsupported
		}
		p.ws()
		var def string
		hasDefault := false
		if p.lit(",") {
			p.ws()
			if def, ok = p.str(); !ok {
				if !p.word("nil") {
					return "", unsupported
				}
			}
			hasDefault = true
			p.ws()
		}
		if !p.lit(")") || !p.end() {
			return "", unsupported
		}
		if v, ok := r.getenv(name); ok {
			return v, ""
		}
		if !hasDefault {
			return "", "environment variable " + name + " is not set (ENV.fetch without a default raises KeyError)"
		}
		return def, ""
	}
	return "", unsupported
}

type exprParser struct {
	s string
	i int
}

func (p *exprParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *exprParser) lit(l string) bool {
	if strings.HasPrefix(p.s[p.i:], l) {
		p.i += len(l)
		return true
	}
	return false
}

// word is lit for an identifier: it must not run on into more identifier
// characters.
func (p *exprParser) word(w string) bool {
	if !strings.HasPrefix(p.s[p.i:], w) {
		return false
	}
	if j := p.i + len(w); j < len(p.s) && isIdent(p.s[j]) {
		return false
	}
	p.i += len(w)
	return true
}

func isIdent(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (p *exprParser) end() bool {
	p.ws()
	return p.i == len(p.s)
}

// str reads a Ruby string literal. Single quotes understand \' and \\ (a
// backslash before anything else is literal, as in Ruby). Double quotes
// understand \" \\ \n \t; other escapes and interpolation (#{ #@ #$) are
// refused rather than half-implemented.
func (p *exprParser) str() (string, bool) {
	if p.i >= len(p.s) {
		return "", false
	}
	q := p.s[p.i]
	if q != '"' && q != '\'' {
		return "", false
	}
	var b strings.Builder
	for j := p.i + 1; j < len(p.s); j++ {
		c := p.s[j]
		switch {
		case c == q:
			p.i = j + 1
			return b.String(), true
		case c == '\\' && j+1 < len(p.s):
			e := p.s[j+1]
			switch {
			case e == q || e == '\\':
				b.WriteByte(e)
			case q == '\'':
				b.WriteByte('\\')
				b.WriteByte(e)
			case e == 'n':
				b.WriteByte('\n')
			case e == 't':
				b.WriteByte('\t')
			default:
				return "", false
			}
			j++
		case c == '#' && q == '"' && j+1 < len(p.s) && (p.s[j+1] == '{' || p.s[j+1] == '@' || p.s[j+1] == '$'):
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}
