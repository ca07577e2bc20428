package yaml11

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Inspect renders n as Ruby's #inspect would, because the Ruby app puts
// inspected values into its error messages and the Go port must print the
// same text: "kittens" (quoted and escaped), 12345, 1.5, true, nil,
// ["a", "b"], {"foo"=>"bar"} (the Ruby < 3.4 Hash format). Dates render as
// #<Date: 2018-04-01>, a shortened form of Ruby's Date#inspect, which also
// prints Julian day numbers nobody compares.
//
// Secrets are never rendered: the value of a map key that SecretKey recognises, and every
// scalar that came from environment substitution, print as [FILTERED].
func (n *Node) Inspect() string {
	var b strings.Builder
	n.inspect(&b)
	return b.String()
}

// Filtered replaces a secret in messages.
const Filtered = "[FILTERED]"

// SecretKey reports whether a configuration key names a secret whose value no message may
// show: *pw, *passw*, *secret*, *token*, *sshkey*, *ssh_key*, *private_key*, *privatekey*,
// *credential*, *api_key*, *apikey*.
func SecretKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasSuffix(k, "pw") {
		return true
	}
	for _, w := range []string{"passw", "secret", "token", "sshkey", "ssh_key", "private_key", "privatekey", "credential", "api_key", "apikey"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

func (n *Node) inspect(b *strings.Builder) {
	if n == nil {
		b.WriteString("nil")
		return
	}
	if n.Substituted {
		b.WriteString(Filtered)
		return
	}
	switch n.Kind {
	case Null:
		b.WriteString("nil")
	case Bool, Int, Float:
		b.WriteString(n.Text())
	case String:
		b.WriteString(RubyInspectString(n.Str))
	case Date:
		b.WriteString("#<Date: ")
		b.WriteString(n.Date.String())
		b.WriteByte('>')
	case Seq:
		b.WriteByte('[')
		for i, it := range n.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			it.inspect(b)
		}
		b.WriteByte(']')
	case Map:
		b.WriteByte('{')
		for i, k := range n.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			k.inspect(b)
			b.WriteString("=>")
			if i < len(n.Values) && n.Values[i] != nil && n.Values[i].Kind != Null && SecretKey(k.Text()) {
				b.WriteString(Filtered)
			} else if i < len(n.Values) {
				n.Values[i].inspect(b)
			} else {
				b.WriteString("nil")
			}
		}
		b.WriteByte('}')
	default:
		b.WriteString("nil")
	}
}

// RubyClass names the Ruby class the node loads as, for messages such as
// "expected String, got Integer".
func (n *Node) RubyClass() string {
	if n == nil {
		return "NilClass"
	}
	switch n.Kind {
	case Null:
		return "NilClass"
	case Bool:
		if n.Bool {
			return "TrueClass"
		}
		return "FalseClass"
	case Int:
		return "Integer"
	case Float:
		if n.bigInt != "" {
			return "Integer"
		}
		return "Float"
	case String:
		return "String"
	case Date:
		return "Date"
	case Seq:
		return "Array"
	case Map:
		return "Hash"
	}
	return "NilClass"
}

// Text renders a scalar as Ruby's #to_s does, for callers that accept
// "anything scalar" as text: the String value, integers in decimal, floats
// in Ruby notation (1.0, 1.0e+20, Infinity), true/false, YYYY-MM-DD for
// dates and "" for null. Sequences and maps render as Inspect.
func (n *Node) Text() string {
	if n == nil {
		return ""
	}
	switch n.Kind {
	case Null:
		return ""
	case Bool:
		return strconv.FormatBool(n.Bool)
	case Int:
		return strconv.FormatInt(n.Int, 10)
	case Float:
		if n.bigInt != "" {
			return n.bigInt
		}
		return RubyFloatString(n.Float)
	case String:
		return n.Str
	case Date:
		return n.Date.String()
	}
	return n.Inspect()
}

// Interface converts n into plain Go values (for JSON output): string,
// int64, json.Number (its exact digits) for integers beyond int64, float64, bool, nil, dates as
// "YYYY-MM-DD" strings, []any and map[string]any. Non-string map keys are
// rendered with Text; should two keys then collide, the later one wins.
// NaN and infinities are returned as is, which encoding/json refuses.
func (n *Node) Interface() any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case Null:
		return nil
	case Bool:
		return n.Bool
	case Int:
		return n.Int
	case Float:
		if n.bigInt != "" {
			// Exact, as Ruby's arbitrary-precision Integer (encoding/json writes it as is).
			return json.Number(n.bigInt)
		}
		return n.Float
	case String:
		return n.Str
	case Date:
		return n.Date.String()
	case Seq:
		out := make([]any, len(n.Items))
		for i, it := range n.Items {
			out[i] = it.Interface()
		}
		return out
	case Map:
		out := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			if i < len(n.Values) {
				out[k.Text()] = n.Values[i].Interface()
			}
		}
		return out
	}
	return nil
}

// RubyFloatString formats f as Ruby's Float#to_s: shortest round-trip
// digits, always with a fractional part, switching to exponent notation
// below 1e-4 and from 1e15 on.
func RubyFloatString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.dddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1

	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case decpt > 0 && decpt <= 15:
		if len(digits) <= decpt {
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", decpt-len(digits)))
			b.WriteString(".0")
		} else {
			b.WriteString(digits[:decpt])
			b.WriteByte('.')
			b.WriteString(digits[decpt:])
		}
	case decpt <= 0 && decpt > -4:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		b.WriteByte('.')
		if len(digits) > 1 {
			b.WriteString(digits[1:])
		} else {
			b.WriteByte('0')
		}
		b.WriteByte('e')
		x := decpt - 1
		if x < 0 {
			b.WriteByte('-')
			x = -x
		} else {
			b.WriteByte('+')
		}
		if x < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// RubyInspectString quotes s as Ruby's String#inspect does for a UTF-8
// string: double quotes, backslash escapes for quotes, backslashes, "#{",
// "#$" and "#@" (which would interpolate) and control characters, \u
// escapes for other unprintable characters and \x escapes for invalid bytes.
// (It assumes a UTF-8 locale; under LANG=C Ruby escapes all non-ASCII.)
func RubyInspectString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x`)
			b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:]))
			i++
			continue
		}
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\f':
			b.WriteString(`\f`)
		case '\v':
			b.WriteString(`\v`)
		case '\b':
			b.WriteString(`\b`)
		case '\a':
			b.WriteString(`\a`)
		case 0x1b:
			b.WriteString(`\e`)
		case '#':
			if i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '$' || s[i+1] == '@') {
				b.WriteByte('\\')
			}
			b.WriteByte('#')
		default:
			switch {
			case r < utf8.RuneSelf && r >= 0x20 && r < 0x7f:
				b.WriteRune(r)
			case r >= utf8.RuneSelf && rubyPrintable(r):
				b.WriteRune(r)
			case r < 0x10000:
				b.WriteString(`\u`)
				h := strings.ToUpper(strconv.FormatUint(uint64(r), 16))
				b.WriteString(strings.Repeat("0", 4-len(h)))
				b.WriteString(h)
			default:
				b.WriteString(`\u{`)
				b.WriteString(strings.ToUpper(strconv.FormatUint(uint64(r), 16)))
				b.WriteByte('}')
			}
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// rubyPrintable is Onigmo's [[:print:]] for non-ASCII characters, which
// decides what String#inspect writes raw: every assigned character
// (format and private-use ones included) except controls, surrogates and
// the line and paragraph separators, plus U+0085, which Onigmo counts as
// a space.
func rubyPrintable(r rune) bool {
	if r == 0x85 {
		return true
	}
	if unicode.In(r, unicode.Cc, unicode.Cs, unicode.Zl, unicode.Zp) {
		return false
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs, unicode.Cf, unicode.Co)
}
