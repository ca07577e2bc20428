package calc

import (
	"fmt"
	"github.com/entitlements-go/entitlements/internal/yaml11"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/validate"
)

// parser carries what parsing one definition file needs. Its errors belong to that file: a file
// that turns out to be unreachable (an unreferenced file of a dummy OU) must not fail the run,
// as in the reference, so errors are kept per file and only reported when the file is used.
type parser struct {
	rel       string
	today     validate.Date
	ignoreExp bool
	// methods: every registered rule method; allowed: the OU's restriction (nil = none).
	methods map[string]bool
	allowed map[string]bool
	filters map[string]bool
	errs    []*validate.Error
	warns   []validate.Warning
	// expired collects dropped lines/rules/filter entries for explanations.
	expired []expiredLine
	// descErrs are description problems. The reference only reads a description when it
	// builds the group of an enumerated OU, so they do not fail a file that is only
	// referenced.
	descErrs []*validate.Error
	// refs are the group references of a file that failed to parse, kept so that the linker
	// still reports missing references and cycles through it in the same run.
	refs []*rule
	// ownsData: the caller hands its buffer over (it is never written again), so the text is
	// not copied; every value is a substring of it either way.
	ownsData bool
	// scratch is a parse worker's storage, reused from file to file (nil: none).
	scratch *parseScratch
}

// parseScratch is storage that nothing of a parsed definition keeps: a parse worker reuses it
// for every file it reads.
type parseScratch struct {
	yaml      yaml11.Parser
	lines     []txtLine
	ptrs      []*txtLine
	ruleLines []*txtLine
}

// methodHint suggests the rule method or filter name closest to an unknown key, and lists
// the valid ones.
func (p *parser) methodHint(key string) string {
	valid := mapKeys(p.methods)
	if p.allowed != nil {
		valid = mapKeys(p.allowed)
	}
	valid = append(valid, mapKeys(p.filters)...)
	return didYouMean(key, sliceSeq(valid)) + " (valid methods and filters: " + strings.Join(valid, ", ") + ")"
}

// filterHint suggests the configured filter closest to an unknown filter name.
func (p *parser) filterHint(name string) string {
	valid := mapKeys(p.filters)
	if len(valid) == 0 {
		return "; the configuration defines no filters"
	}
	return didYouMean(name, sliceSeq(valid)) + " (configured filters: " + strings.Join(valid, ", ") + ")"
}

// salvageRefs keeps the group references of a broken .txt file (see parser.refs). Problems of
// those lines were already reported or will be: a scratch parser swallows them.
func (p *parser) salvageRefs(lines []txtLine) {
	q := &parser{rel: p.rel, today: p.today}
	for i := range lines {
		l := &lines[i]
		if canonicalMethod(l.key) != "group" {
			continue
		}
		c := *l
		if !q.parseValue(&c) || (!c.exp.IsZero() && q.reached(c.exp)) {
			continue
		}
		p.refs = append(p.refs, &rule{op: opMethod, method: "group", value: c.value, line: c.line})
	}
}

func (p *parser) descFail(line int, kind validate.Kind, format string, args ...any) {
	p.descErrs = append(p.descErrs, &validate.Error{Path: p.rel, Line: line, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) fail(line int, kind validate.Kind, format string, args ...any) {
	p.errs = append(p.errs, &validate.Error{Path: p.rel, Line: line, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) warn(line int, format string, args ...any) {
	p.warns = append(p.warns, validate.Warning{Path: p.rel, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// reached reports whether an item dated d has expired (never, with ignore_expirations).
func (p *parser) reached(d validate.Date) bool { return !p.ignoreExp && d.Reached(p.today) }

// canonicalMethod applies the alias table.
func canonicalMethod(m string) string {
	if m == "entitlements_group" {
		return "group"
	}
	return m
}

// checkMethod enforces the registry and the OU's allowed_methods on a rule leaf. It is the one
// place both formats go through, so an OU's limits hold however the file is reached.
func (p *parser) checkMethod(line int, method string) bool {
	m := canonicalMethod(method)
	if !p.methods[m] {
		p.fail(line, validate.KindMethodNotAllowed, "Rule Error: %s is not a valid function (unknown rule method)%s", method, p.methodHint(method))
		return false
	}
	if p.allowed != nil && !p.allowed[m] {
		p.fail(line, validate.KindMethodNotAllowed, "Rule Error: %s is not a valid function (the method %q is not permitted here; allowed: %s)", method, method, strings.Join(mapKeys(p.allowed), ", "))
		return false
	}
	return true
}

type txtLine struct {
	key, op, value string
	exp            validate.Date
	line           int
	raw            string
}

// splitTxtLine splits "KEY OP VALUE" (KEY of [A-Za-z0-9_-], OP one of = != &=).
func splitTxtLine(s string) (key, op, value string, ok bool) {
	i := 0
	for i < len(s) && (isWord(s[i]) || s[i] == '-') {
		i++
	}
	if i == 0 {
		return "", "", "", false
	}
	key = s[:i]
	j := skipBlanks(s, i)
	switch {
	case strings.HasPrefix(s[j:], "!="):
		op, j = "!=", j+2
	case strings.HasPrefix(s[j:], "&="):
		op, j = "&=", j+2
	case strings.HasPrefix(s[j:], "="):
		op, j = "=", j+1
	default:
		return "", "", "", false
	}
	value = strings.TrimRight(s[skipBlanks(s, j):], " \t\r\n\v\f")
	if value == "" {
		return "", "", "", false
	}
	return key, op, value, true
}

// rubySpace is what Ruby's \s matches: ASCII whitespace only. Unicode spaces (NBSP, ...) are
// part of values, as in the reference.
const rubySpace = " \t\r\n\v\f"

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\v' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i
}

// parseValue strips a trailing comment and splits "value; expiration = D" predicates.
func (p *parser) parseValue(l *txtLine) bool {
	v := l.value
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = strings.TrimRight(v[:i], rubySpace)
	}
	if strings.IndexByte(v, ';') < 0 {
		// The common line has no predicate: no split, no allocation.
		l.value = strings.Trim(v, rubySpace)
		return true
	}
	parts := strings.Split(v, ";")
	for len(parts) > 1 && strings.Trim(parts[len(parts)-1], rubySpace) == "" {
		// Trailing ";" (even "; ;") is harmless: Ruby splits on /\s*;\s*/ and drops
		// trailing empty fields.
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 1 && strings.Contains(v, ";") && strings.Trim(parts[0], rubySpace) == "" {
		// "username = ;" splits into nothing at all in the reference: no value.
		p.fail(l.line, validate.KindTextFile, "Rule Error: %s has no value before ';'", l.key)
		return false
	}
	l.value = strings.Trim(parts[0], rubySpace)
	last := ""
	for _, part := range parts[1:] {
		part = strings.Trim(part, rubySpace)
		word, val, ok := splitPredicate(part)
		if !ok {
			p.fail(l.line, validate.KindTextFile, "Rule Error: Unparseable semicolon predicate %s", textsafe.Excerpt(part))
			return false
		}
		if word != "expiration" {
			p.fail(l.line, validate.KindTextFile, "Rule Error: Invalid semicolon predicate %s (only \"expiration\" is supported)", textsafe.Excerpt(word))
			return false
		}
		last = val // a repeated expiration: the last one counts (and is the one checked)
	}
	if last != "" {
		d, err := validate.ParseLineDate(last)
		if err != nil {
			p.fail(l.line, validate.KindExpirationDate, "Invalid expiration date %s (%v)", textsafe.Excerpt(last), err)
			return false
		}
		l.exp = d
	}
	return true
}

// splitPredicate parses "word = token" where token has no blanks.
func splitPredicate(s string) (word, val string, ok bool) {
	i := 0
	for i < len(s) && isWord(s[i]) {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	j := skipBlanks(s, i)
	if j >= len(s) || s[j] != '=' {
		return "", "", false
	}
	val = strings.Trim(s[j+1:], rubySpace)
	if val == "" || strings.ContainsAny(val, rubySpace) {
		return "", "", false
	}
	return s[:i], val, true
}

// parseTxt parses the .txt format (spec section 5).
func (p *parser) parseTxt(data []byte) *definition {
	if !utf8.Valid(data) {
		// The reference reads files as UTF-8 and fails on anything else.
		p.fail(0, validate.KindTextFile, "invalid byte sequence in UTF-8 (group files must be UTF-8)")
		return nil
	}
	if line, msg := textsafe.CheckControl(data); line > 0 {
		p.fail(line, validate.KindTextFile, "%s", msg)
		return nil
	}
	def := &definition{}
	var text string
	if p.ownsData {
		text = unsafe.String(unsafe.SliceData(data), len(data))
	} else {
		text = string(data)
	}
	// One record per line of the file, allocated at once: a group file has a handful to
	// thousands of lines, and a pointer per line was most of the parser's garbage.
	var lines []txtLine
	if p.scratch != nil {
		lines = p.scratch.lines[:0]
		defer func() { p.scratch.lines = lines[:0] }()
	} else {
		lines = make([]txtLine, 0, strings.Count(text, "\n")+1)
	}
	for n, rest := 0, text; rest != "" || n == 0; n++ {
		raw, tail, _ := strings.Cut(rest, "\n")
		rest = tail
		s := strings.Trim(raw, rubySpace+"\x00") // Ruby's String#strip
		if s == "" || s[0] == '#' {
			continue
		}
		key, op, value, ok := splitTxtLine(s)
		if !ok {
			p.fail(n+1, validate.KindTextFile, "Unparseable line %s", textsafe.Excerpt(s))
			continue
		}
		switch {
		case p.filters[key]:
			key = "filter_" + key
		case key == "expiration":
			key = "modifier_expiration"
		}
		if key == "contractor" {
			p.fail(n+1, validate.KindMethodNotAllowed, "Rule Error: contractor is not a valid function (did you mean contractors?)")
			continue
		}
		lines = append(lines, txtLine{key: key, op: op, value: value, line: n + 1, raw: s})
	}
	if len(p.errs) > 0 {
		p.salvageRefs(lines)
		return nil
	}

	// Group the reserved keys, keeping file order. A file has a few distinct reserved keys,
	// so a linear scan beats a map.
	type keyLines struct {
		key string
		ls  []*txtLine
	}
	reserved := make([]keyLines, 0, 4)
	// The lines of a key point into one shared slice; a key's second line copies them out.
	var ptrs, ruleLines []*txtLine
	if p.scratch != nil {
		ptrs = slices.Grow(p.scratch.ptrs[:0], len(lines))[:len(lines)]
		ruleLines = slices.Grow(p.scratch.ruleLines[:0], len(lines))
		defer func() { p.scratch.ptrs, p.scratch.ruleLines = ptrs[:0], ruleLines[:0] }()
	} else {
		ptrs = make([]*txtLine, len(lines))
		ruleLines = make([]*txtLine, 0, len(lines))
	}
	for j := range lines {
		l := &lines[j]
		ptrs[j] = l
		if l.key == "description" || strings.HasPrefix(l.key, "metadata_") ||
			strings.HasPrefix(l.key, "modifier_") || strings.HasPrefix(l.key, "filter_") {
			i := 0
			for i < len(reserved) && reserved[i].key != l.key {
				i++
			}
			if i == len(reserved) {
				reserved = append(reserved, keyLines{key: l.key, ls: ptrs[j : j+1 : j+1]})
			} else {
				reserved[i].ls = append(reserved[i].ls, l)
			}
			continue
		}
		if !p.methods[canonicalMethod(l.key)] {
			p.fail(l.line, validate.KindMethodNotAllowed, "The method %q is not allowed (unknown rule method)%s", l.key, p.methodHint(l.key))
			continue
		}
		ruleLines = append(ruleLines, l)
	}

	noConditionsOK := false
	for _, kl := range reserved {
		key, ls := kl.key, kl.ls
		switch {
		case key == "description":
			p.txtDescription(def, ls)
		case strings.HasPrefix(key, "filter_"):
			p.txtFilter(def, key, ls)
		default: // metadata_* and modifier_*
			v, ok := p.txtSingle(key, ls)
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(key, "metadata_"):
				name := strings.TrimPrefix(key, "metadata_")
				def.metadata = append(def.metadata, metaEntry{key: name, value: v.value})
				if name == "no_conditions_ok" && v.value == "true" {
					noConditionsOK = true
				}
			case key == "modifier_expiration":
				d, err := validate.ParseFileDate(v.value)
				if err != nil {
					p.fail(v.line, validate.KindExpirationDate, "Invalid expiration date %s for the whole file (%v)", textsafe.Excerpt(v.value), err)
					continue
				}
				def.fileExp, def.fileExpLine = d, v.line
			}
		}
	}

	// Rule records and the affirmative list are allocated once per file, not per line.
	rules := make([]rule, len(ruleLines)+1) // the last one is the root
	aff := make([]*rule, 0, len(ruleLines))
	var mand, neg []*rule
	for i, l := range ruleLines {
		if !p.parseValue(l) {
			continue
		}
		r := &rules[i]
		*r = rule{op: opMethod, method: canonicalMethod(l.key), value: l.value, line: l.line, text: l.raw}
		if !l.exp.IsZero() && p.reached(l.exp) {
			p.expired = append(p.expired, expiredLine{line: l.line, text: l.raw, date: l.exp})
			continue
		}
		if !p.checkMethod(l.line, l.key) {
			continue
		}
		switch l.op {
		case "=":
			aff = append(aff, r)
		case "&=":
			mand = append(mand, r)
		case "!=":
			neg = append(neg, r)
		}
	}
	if len(p.errs) > 0 {
		p.salvageRefs(lines)
		return nil
	}
	if len(aff) == 0 {
		// An expired file without live conditions is simply empty (this holds even with
		// ignore_expirations, as in the reference).
		if !def.fileExp.IsZero() && def.fileExp.Reached(p.today) {
			def.rules = &rule{op: opNone}
			return def
		}
		if noConditionsOK {
			def.rules = &rule{op: opNone}
			return def
		}
		p.fail(0, validate.KindNoConditions, "No conditions were found (at least one \"=\" rule line is needed, or metadata_no_conditions_ok = true)")
		return nil
	}
	tree := &rules[len(ruleLines)]
	*tree = rule{op: opOr, kids: aff}
	if len(neg) > 0 {
		nots := make([]*rule, len(neg))
		for i, n := range neg {
			nots[i] = &rule{op: opNot, kids: []*rule{n}}
		}
		tree = &rule{op: opAnd, kids: []*rule{tree, {op: opAnd, kids: nots}}}
	}
	switch len(mand) {
	case 0:
	case 1:
		tree = &rule{op: opAnd, kids: []*rule{mand[0], tree}}
	default:
		tree = &rule{op: opAnd, kids: []*rule{{op: opOr, kids: mand}, tree}}
	}
	def.rules = tree
	return def
}

func (p *parser) txtDescription(def *definition, ls []*txtLine) {
	eq := 0
	for _, l := range ls {
		switch l.op {
		case "!=":
			p.descFail(l.line, validate.KindTextFile, "The description cannot use '!=' operator")
			return
		case "=":
			eq++
			def.description = l.value // verbatim: no comment or ';' handling
		}
	}
	if eq != 1 {
		p.descFail(ls[len(ls)-1].line, validate.KindTextFile, "The description key is duplicated (exactly one \"description = ...\" line is allowed)")
		return
	}
	for _, l := range ls {
		if l.op == "&=" { // the reference ignores it next to a "=" line
			p.warn(l.line, "the '&=' line of description is ignored")
		}
	}
}

// txtSingle checks a metadata_/modifier_ key: exactly one "=" line, no predicates.
func (p *parser) txtSingle(key string, ls []*txtLine) (*txtLine, bool) {
	_, name, _ := strings.Cut(key, "_")
	if name == "" {
		p.fail(ls[0].line, validate.KindMetadata, "cannot have a key named %q", key)
		return nil, false
	}
	var eq []*txtLine
	for _, l := range ls {
		switch l.op {
		case "!=":
			p.fail(l.line, validate.KindMetadata, "The key %s cannot use '!=' operator", key)
			return nil, false
		case "&=":
			continue // ignored by the reference (a lone "&=" counts as no line: "repeated")
		}
		eq = append(eq, l)
	}
	if len(eq) != 1 {
		p.fail(ls[len(ls)-1].line, validate.KindMetadata, "the key %s is repeated (exactly one \"%s = ...\" line is allowed)", key, key)
		return nil, false
	}
	if len(ls) > 1 {
		p.warn(ls[len(ls)-1].line, "the '&=' line of %s is ignored", key)
	}
	l := eq[0]
	v := l.value
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = strings.TrimRight(v[:i], rubySpace)
	}
	first, rest, hasPred := strings.Cut(v, ";")
	if hasPred && strings.Trim(first, rubySpace) == "" && strings.Trim(rest, rubySpace+";") == "" {
		p.fail(l.line, validate.KindMetadata, "the key %s has no value before ';'", key)
		return nil, false
	}
	if hasPred && strings.Trim(rest, rubySpace+";") != "" {
		word, _, _ := splitPredicate(strings.Trim(rest, rubySpace))
		p.fail(l.line, validate.KindMetadata, "the key %s cannot have additional setting(s) %q", key, word)
		return nil, false
	}
	return &txtLine{key: key, op: "=", value: strings.Trim(first, rubySpace), line: l.line}, true
}

func (p *parser) txtFilter(def *definition, key string, ls []*txtLine) {
	name := strings.TrimPrefix(key, "filter_")
	if name == "" {
		p.fail(ls[0].line, validate.KindFilter, "cannot have a key named \"filter_\"")
		return
	}
	if !p.filters[name] {
		p.fail(ls[0].line, validate.KindFilter, "the key filter_%s is invalid (no filter %q is configured)%s", name, name, p.filterHint(name))
		return
	}
	var values []filterEntry
	for _, l := range ls {
		switch l.op {
		case "!=":
			p.fail(l.line, validate.KindFilter, "The filter %s cannot use '!=' operator", name)
			return
		case "&=":
			// The reference silently ignores these; say so instead of failing a config it accepts.
			p.warn(l.line, "the '&=' operator is ignored on filter lines (%s)", name)
			continue
		}
		if !p.parseValue(l) {
			return
		}
		if !l.exp.IsZero() && p.reached(l.exp) {
			p.expired = append(p.expired, expiredLine{line: l.line, text: l.raw, date: l.exp})
			continue
		}
		values = append(values, filterEntry{value: l.value, line: l.line})
	}
	p.setFilter(def, name, values, ls[0].line)
}

// setFilter applies the all/none/list rules shared by both formats.
func (p *parser) setFilter(def *definition, name string, values []filterEntry, line int) {
	if def.filters == nil {
		def.filters = map[string]*filterSetting{}
	}
	if len(values) == 0 {
		return // every entry expired: the default stays
	}
	for _, v := range values {
		if (v.value == "all" || v.value == "none") && len(values) > 1 {
			p.fail(v.line, validate.KindFilter, "filter %s cannot contain multiple entries when 'all' or 'none' is used", name)
			return
		}
	}
	switch values[0].value {
	case "all":
		def.filters[name] = &filterSetting{mode: filterAll, line: values[0].line}
	case "none":
		def.filters[name] = &filterSetting{mode: filterNone, line: values[0].line}
	default:
		def.filters[name] = &filterSetting{mode: filterList, entries: values, line: line}
	}
}
