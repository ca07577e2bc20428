package yaml11

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file ports Psych::ScalarScanner#tokenize (Psych 4.0-5.0 as shipped
// with Ruby 3.x, default non-strict integer mode), the function that decides what Ruby type a plain
// scalar becomes. The branches run in Psych's order because the order is
// part of the behaviour: `y`, `n` and every word longer than five
// characters stay strings because an early "looks like a word" test returns
// before the boolean tests; `1e3` is a string because Psych's float pattern
// needs a dot; `12:30` is 45000, not 750, because Psych weights the parts of
// a two-part sexagesimal as hours and minutes. Hand-written matchers replace
// Psych's regular expressions on the hot path (every scalar of ~70,000
// files); the timestamp pattern, which only runs on date-like text, stays a
// regexp.

type resolved struct {
	kind Kind
	b    bool
	i    int64
	f    float64
	d    CivilDate
	big  string // decimal digits of an integer that overflows int64
}

// resolvePlain resolves a plain scalar. A non-empty message means the safe
// loader would refuse the value.
func resolvePlain(s string, allowDates bool) (resolved, string) {
	str := resolved{kind: String}
	if s == "" {
		return resolved{kind: Null}, ""
	}
	if looksLikeWord(s) || strings.IndexByte(s, '\n') >= 0 {
		if len(s) > 5 && utf8.RuneCountInString(s) > 5 {
			return str, ""
		}
		return resolveWord(s), ""
	}
	if len(s) >= 14 && (isDigit(s[0]) || s[0] == '-') && timeRE.MatchString(s) {
		return str, "timestamps are not allowed (" + s + "); quote the value or write a plain date YYYY-MM-DD"
	}
	if y, m, d, ok := dateShape(s); ok {
		if !allowDates {
			return str, "dates are not allowed here (" + s + "); quote the value to make it a string"
		}
		if validDate(y, m, d) {
			return resolved{kind: Date, d: CivilDate{int16(y), uint8(m), uint8(d)}}, ""
		}
		// Date.strptime raises ArgumentError, which Psych rescues: the
		// scalar stays a string.
		return str, ""
	}
	switch {
	case asciiEqualFold(s, ".inf") || asciiEqualFold(s, "+.inf"):
		return resolved{kind: Float, f: math.Inf(1)}, ""
	case asciiEqualFold(s, "-.inf"):
		return resolved{kind: Float, f: math.Inf(-1)}, ""
	case asciiEqualFold(s, ".nan"):
		return resolved{kind: Float, f: math.NaN()}, ""
	case len(s) >= 2 && s[0] == ':':
		return str, "symbols are not allowed (" + s + "); quote the value to make it a string"
	}
	if form := sexagesimalShape(s); form != notSexagesimal {
		return sexagesimal(s, form), ""
	}
	if floatShape(s) {
		if s == "." || s == "-." || s == "+." {
			return str, ""
		}
		return parseFloat(s)
	}
	if base, ok := integerShape(s); ok {
		return parseInteger(s, base)
	}
	return str, ""
}

// looksLikeWord is Psych's first test,
// %r{^[^\d.:-]?(?:[[:alpha:]]|[_\s!@#$%\^&*(){}<>|/\\~;=])+}: the first
// character, or the second one after any character other than a digit,
// '.', ':' or '-', is a letter or one of a few punctuation characters.
func looksLikeWord(s string) bool {
	r0, n0 := utf8.DecodeRuneInString(s)
	if wordRune(r0) {
		return true
	}
	if r0 < utf8.RuneSelf && (isDigit(byte(r0)) || r0 == '.' || r0 == ':' || r0 == '-') {
		return false
	}
	if n0 >= len(s) {
		return false
	}
	r1, _ := utf8.DecodeRuneInString(s[n0:])
	return wordRune(r1)
}

// wordPunct marks the ASCII characters of Psych's word class other than
// letters (\s in Ruby is ASCII whitespace, including \v).
var wordPunct = func() (t [utf8.RuneSelf]bool) {
	for _, c := range "_ \t\n\v\f\r!@#$%^&*(){}<>|/\\~;=" {
		t[c] = true
	}
	return t
}()

func wordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return wordPunct[r] || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	// [[:alpha:]] in Onigmo is the Unicode Alphabetic property.
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic)
}

// resolveWord handles the short (at most five characters) or multi-line
// scalars that passed looksLikeWord. Psych tests them with ^ and $, which in
// Ruby match at every line boundary, so a line-wise check is kept even
// though multi-line plain scalars this short are freaks.
func resolveWord(s string) resolved {
	str := resolved{kind: String}
	// /^[^ytonf~]/i
	for start := 0; start < len(s); {
		switch s[start] {
		case 'y', 'Y', 't', 'T', 'o', 'O', 'n', 'N', 'f', 'F', '~':
		default:
			return str
		}
		nl := strings.IndexByte(s[start:], '\n')
		if nl < 0 {
			break
		}
		start += nl + 1
	}
	if s == "~" || anyLine(s, "null") {
		return resolved{kind: Null}
	}
	if anyLine(s, "yes", "true", "on") {
		return resolved{kind: Bool, b: true}
	}
	if anyLine(s, "no", "false", "off") {
		return resolved{kind: Bool, b: false}
	}
	return str
}

// anyLine reports whether some line of s equals one of words, ignoring
// ASCII case.
func anyLine(s string, words ...string) bool {
	for {
		line, rest, more := strings.Cut(s, "\n")
		for _, w := range words {
			if asciiEqualFold(line, w) {
				return true
			}
		}
		if !more {
			return false
		}
		s = rest
	}
}

func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// timeRE is Psych's TIME pattern. Any scalar it matches loads as a Ruby
// Time, which the safe loader never permits.
var timeRE = regexp.MustCompile(`\A-?\d{4}-\d{1,2}-\d{1,2}(?:[Tt]|[ \t\n\v\f\r]+)\d{1,2}:\d\d:\d\d(?:\.\d*)?(?:[ \t\n\v\f\r]*(?:Z|[-+]\d{1,2}:?(?:\d\d)?))?\z`)

// dateShape matches /^\d{4}-(?:1[012]|0\d|\d)-(?:[12]\d|3[01]|0\d|\d)$/,
// which admits one-digit months and days and impossible dates like
// 2018-02-30 (Date.strptime rejects those later).
func dateShape(s string) (y, m, d int, ok bool) {
	if len(s) < 8 || len(s) > 10 || s[4] != '-' {
		return
	}
	for i := 0; i < 4; i++ {
		if !isDigit(s[i]) {
			return
		}
	}
	ms, ds, found := strings.Cut(s[5:], "-")
	if !found {
		return
	}
	switch {
	case len(ms) == 1 && isDigit(ms[0]):
	case len(ms) == 2 && (ms[0] == '1' && '0' <= ms[1] && ms[1] <= '2' || ms[0] == '0' && isDigit(ms[1])):
	default:
		return
	}
	switch {
	case len(ds) == 1 && isDigit(ds[0]):
	case len(ds) == 2 && ((ds[0] == '1' || ds[0] == '2') && isDigit(ds[1]) ||
		ds[0] == '3' && (ds[1] == '0' || ds[1] == '1') ||
		ds[0] == '0' && isDigit(ds[1])):
	default:
		return
	}
	y = int(s[0]-'0')*1000 + int(s[1]-'0')*100 + int(s[2]-'0')*10 + int(s[3]-'0')
	m = atoiSmall(ms)
	d = atoiSmall(ds)
	return y, m, d, true
}

func atoiSmall(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// validDate checks a date in the proleptic Gregorian calendar (Psych 5
// parses with Date::GREGORIAN).
func validDate(y, m, d int) bool {
	if m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

type sexagesimalForm uint8

const (
	notSexagesimal sexagesimalForm = iota
	sexagesimalInt
	sexagesimalFloat
)

// sexagesimalShape matches Psych's base-60 patterns
// /^[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,2}$/ and the same followed by
// /\.[0-9_]*$/ for floats.
func sexagesimalShape(s string) sexagesimalForm {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i >= len(s) || !isDigit(s[i]) {
		return notSexagesimal
	}
	for i++; i < len(s) && (isDigit(s[i]) || s[i] == '_'); i++ {
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		i++
		switch {
		case i+1 < len(s) && '0' <= s[i] && s[i] <= '5' && isDigit(s[i+1]):
			i += 2
		case i < len(s) && isDigit(s[i]):
			i++
		default:
			return notSexagesimal
		}
		groups++
	}
	if groups < 1 || groups > 2 {
		return notSexagesimal
	}
	if i == len(s) {
		return sexagesimalInt
	}
	if s[i] != '.' {
		return notSexagesimal
	}
	for i++; i < len(s); i++ {
		if !isDigit(s[i]) && s[i] != '_' {
			return notSexagesimal
		}
	}
	return sexagesimalFloat
}

// sexagesimal computes the value exactly as Psych does:
// sum of part[e] * 60 ** (e - 2).abs. With three parts that is
// h*3600 + m*60 + s; with two it is a*3600 + b*60, so "12:30" is 45000 and
// "1:30" is 5400 (Ruby users get the same surprise). Each part goes through
// Ruby's lenient String#to_i / #to_f, so a sign only affects the first part.
func sexagesimal(s string, form sexagesimalForm) resolved {
	parts := strings.Split(s, ":")
	if form == sexagesimalFloat {
		f := 0.0
		for e, p := range parts {
			f += rubyToF(p) * math.Pow(60, math.Abs(float64(e-2)))
		}
		return resolved{kind: Float, f: f}
	}
	sum := new(big.Int)
	for e, p := range parts {
		v := rubyToI(p)
		w := int64(1)
		for k := 0; k < abs(e-2); k++ {
			w *= 60
		}
		sum.Add(sum, v.Mul(v, big.NewInt(w)))
	}
	return bigResult(sum)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func bigResult(v *big.Int) resolved {
	if v.IsInt64() {
		return resolved{kind: Int, i: v.Int64()}
	}
	f, _ := new(big.Float).SetInt(v).Float64()
	return resolved{kind: Float, f: f, big: v.String()}
}

// rubyDigits returns the leading "[sign]digits(_digits)*" of s with the
// underscores removed, the prefix Ruby's String#to_i reads.
func rubyDigits(s string) string {
	var b strings.Builder
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		b.WriteByte(s[i])
		i++
	}
	for ; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			b.WriteByte(c)
			continue
		}
		if c == '_' && b.Len() > 0 && isDigit(s[i-1]) && i+1 < len(s) && isDigit(s[i+1]) {
			continue
		}
		break
	}
	return b.String()
}

func rubyToI(s string) *big.Int {
	v, ok := new(big.Int).SetString(rubyDigits(s), 10)
	if !ok {
		return new(big.Int)
	}
	return v
}

func rubyToF(s string) float64 {
	intPart, frac, _ := strings.Cut(s, ".")
	num := rubyDigits(intPart)
	if fd := rubyDigits(frac); fd != "" && fd[0] != '-' && fd[0] != '+' {
		num += "." + fd
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !isRangeErr(err) {
		return 0
	}
	return f
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// floatShape matches Psych's FLOAT, /^[-+]?([0-9][0-9_,]*)?\.[0-9]*([eE][-+][0-9]+)?$/.
// A dot is mandatory, and so is the exponent's sign: `1e3` and `1.0e3`
// are strings to Psych.
func floatShape(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i < len(s) && isDigit(s[i]) {
		for i++; i < len(s) && (isDigit(s[i]) || s[i] == '_' || s[i] == ','); i++ {
		}
	}
	if i >= len(s) || s[i] != '.' {
		return false
	}
	for i++; i < len(s) && isDigit(s[i]); i++ {
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i >= len(s) || (s[i] != '-' && s[i] != '+') {
			return false
		}
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i++; i < len(s) && isDigit(s[i]); i++ {
		}
	}
	return i == len(s)
}

// parseFloat is Float(s.delete(",_").sub(/\.([Ee]|$)/, '\1')).
func parseFloat(s string) (resolved, string) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ',' || c == '_':
		case c == '.' && (i+1 == len(s) || s[i+1] == 'e' || s[i+1] == 'E'):
		default:
			b = append(b, c)
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !isRangeErr(err) {
		// Kernel#Float raises ArgumentError here (for example on "-.e+5")
		// and Psych does not rescue it.
		return resolved{kind: String}, "invalid value for Float(): " + strconv.Quote(s)
	}
	return resolved{kind: Float, f: f}, ""
}

// integerShape matches Psych's INTEGER_LEGACY pattern (the default; it
// accepts commas as digit separators, so "1,000" is 1000):
//
//	[-+]?0b[0-1_,]+                           binary
//	[-+]?0[0-7_,]+                            octal
//	[-+]?(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)  decimal
//	[-+]?0x[0-9a-fA-F_,]+                     hex
//
// It returns the base to parse with. (Psych 5.1 later required a digit after
// the prefix; the difference only shows on freaks like "0b_".)
func integerShape(s string) (int, bool) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	r := s[i:]
	if r == "" {
		return 0, false
	}
	allOf := func(r string, ok func(byte) bool) bool {
		if r == "" {
			return false
		}
		for j := 0; j < len(r); j++ {
			if !ok(r[j]) && r[j] != '_' && r[j] != ',' {
				return false
			}
		}
		return true
	}
	switch {
	case strings.HasPrefix(r, "0b"):
		return 2, allOf(r[2:], func(c byte) bool { return c == '0' || c == '1' })
	case strings.HasPrefix(r, "0x"):
		return 16, allOf(r[2:], isHex)
	case r == "0":
		return 10, true
	case r[0] == '0':
		return 8, allOf(r[1:], func(c byte) bool { return '0' <= c && c <= '7' })
	case '1' <= r[0] && r[0] <= '9':
		for j := 1; j < len(r); j++ {
			switch {
			case isDigit(r[j]):
			case (r[j] == ',' || r[j] == '_') && j+1 < len(r) && isDigit(r[j+1]):
				j++
			default:
				return 0, false
			}
		}
		return 10, true
	}
	return 0, false
}

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// parseInteger is Integer(s.delete(",_")) for a string integerShape
// accepted with the given base. Kernel#Integer raises (and Psych lets the
// ArgumentError through) when only a prefix is left, as for "0b_".
func parseInteger(s string, base int) (resolved, string) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != ',' && s[i] != '_' {
			b = append(b, s[i])
		}
	}
	sign := ""
	if b[0] == '-' || b[0] == '+' {
		sign = string(b[:1])
		b = b[1:]
	}
	switch base {
	case 2, 16:
		b = b[2:]
	case 8:
		b = b[1:]
		if len(b) == 0 { // "0_" or "0,": Integer("0")
			return resolved{kind: Int}, ""
		}
	}
	if len(b) == 0 {
		return resolved{kind: String}, "invalid value for Integer(): " + strconv.Quote(s)
	}
	digits := sign + string(b)
	if v, err := strconv.ParseInt(digits, base, 64); err == nil {
		return resolved{kind: Int, i: v}, ""
	}
	v, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return resolved{kind: String}, "invalid value for Integer(): " + strconv.Quote(s)
	}
	return bigResult(v), ""
}

func floatBits(f float64) uint64 { return math.Float64bits(f) }

// PlainString reports whether s, written as a plain scalar, loads as the string s itself
// (not a number, boolean, null or date).
func PlainString(s string) bool {
	r, msg := resolvePlain(s, true)
	return msg == "" && r.kind == String
}
