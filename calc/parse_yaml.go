package calc

import (
	"strings"
	"unsafe"

	"github.com/entitlements-go/entitlements/internal/textsafe"
	"github.com/entitlements-go/entitlements/internal/yaml11"
	"github.com/entitlements-go/entitlements/validate"
)

// parseYAML parses the .yaml format (spec section 6).
func (p *parser) parseYAML(data []byte) *definition {
	var root *yaml11.Node
	var warns []yaml11.Warning
	var err error
	if p.scratch != nil {
		// Nothing of the tree outlives this parse (the definition keeps strings and Go
		// values only), so a parse worker's storage serves all its files.
		text := string(data)
		if p.ownsData && len(data) > 0 {
			text = unsafe.String(unsafe.SliceData(data), len(data))
		}
		root, warns, err = p.scratch.yaml.ParseString(text, yaml11.Options{AllowDates: true})
	} else {
		root, warns, err = yaml11.Parse(data, yaml11.Options{AllowDates: true})
	}
	for _, w := range warns {
		p.warn(w.Line, "%s", w.Msg)
	}
	if err != nil {
		line, msg := 0, err.Error()
		if e, ok := err.(*yaml11.Error); ok {
			line, msg = e.Line, e.Msg
		}
		p.fail(line, validate.KindRuleStructure, "invalid YAML: %s", msg)
		return nil
	}
	if root.Kind == yaml11.Null {
		root = &yaml11.Node{Kind: yaml11.Map, Line: 1}
	}
	if root.Kind != yaml11.Map {
		p.fail(root.Line, validate.KindRuleStructure, "a YAML definition must be a map, not %s", root.RubyClass())
		return nil
	}
	def := &definition{}
	if d := root.Get("description"); d != nil {
		if !d.IsString() {
			// `description:` with no value is nil, not "" (the reference's fetch default only
			// applies to a missing key).
			p.descFail(d.Line, validate.KindRuleStructure, "description must be a string, not %s", d.RubyClass())
		} else {
			def.description = d.Str
		}
	}
	if m := root.Get("metadata"); m != nil {
		p.yamlMetadata(def, m)
	}
	if root.Get("filter") != nil && root.Get("filters") == nil {
		p.warn(root.Get("filter").Line, "the key \"filter\" is ignored; per-file filter settings go under \"filters\"")
	}
	if f := root.Get("filters"); f != nil {
		p.yamlFilters(def, f)
	}
	if e := root.Get("expiration"); e != nil {
		// `expiration:` with no value fails the reference when the group has members
		// (parse_date(nil)); we check every date at load.
		d, err := validate.ParseFileDate(e.Text())
		if err != nil || (e.Kind != yaml11.String && e.Kind != yaml11.Date) {
			p.fail(e.Line, validate.KindExpirationDate, "Invalid expiration date %s for the whole file (expected YYYY-MM-DD)", textsafe.Excerpt(e.Text()))
		} else {
			def.fileExp, def.fileExpLine = d, e.Line
		}
	}
	rules := root.Get("rules")
	if rules == nil || rules.Kind != yaml11.Map {
		cls := "NilClass"
		line := 1
		if rules != nil {
			cls, line = rules.RubyClass(), rules.Line
		}
		p.fail(line, validate.KindRuleStructure, "Expected to find 'rules' as a Hash, but got %s!", cls)
		return nil
	}
	pruned, dropped := p.prune(rules)
	switch {
	case dropped:
		// The whole rule expired: an empty group (Q-06; the reference fails with "no keys").
		p.warn(rules.Line, "every rule of this file has expired; the group is empty")
		def.rules = &rule{op: opNone}
	default:
		def.rules = p.yamlRule(pruned)
	}
	if len(p.errs) > 0 {
		return nil
	}
	return def
}

func (p *parser) yamlMetadata(def *definition, m *yaml11.Node) {
	if m.Kind != yaml11.Map {
		p.fail(m.Line, validate.KindMetadata, "For metadata: expected Hash, got %s!", textsafe.ExcerptRaw(m.Inspect()))
		return
	}
	for i, k := range m.Keys {
		if k.Kind != yaml11.String {
			p.fail(k.Line, validate.KindMetadata, "For metadata: keys are expected to be strings, but %s is not!", textsafe.ExcerptRaw(k.Inspect()))
			continue
		}
		def.metadata = append(def.metadata, metaEntry{key: k.Str, value: m.Values[i].Interface()})
	}
}

func (p *parser) yamlFilters(def *definition, f *yaml11.Node) {
	if f.Kind != yaml11.Map {
		p.fail(f.Line, validate.KindFilter, "For filters: expected Hash, got %s!", textsafe.ExcerptRaw(f.Inspect()))
		return
	}
	for i, k := range f.Keys {
		name, v := k.Text(), f.Values[i]
		if !p.filters[name] {
			p.fail(k.Line, validate.KindFilter, "Filter %s is invalid (no such filter is configured)%s", textsafe.Excerpt(name), p.filterHint(name))
			continue
		}
		var values []filterEntry
		switch v.Kind {
		case yaml11.String:
			values = append(values, filterEntry{value: strings.TrimSpace(v.Str), line: v.Line})
		case yaml11.Seq:
			ok := true
			for _, it := range v.Items {
				switch it.Kind {
				case yaml11.String:
					values = append(values, filterEntry{value: strings.TrimSpace(it.Str), line: it.Line})
				case yaml11.Map:
					key := it.Get("key")
					if key == nil || !key.IsString() {
						p.fail(it.Line, validate.KindFilter, "filter %s: an item given as a map needs a string \"key\"", name)
						ok = false
						continue
					}
					if e := it.Get("expiration"); e != nil && !blankDate(e) {
						d, err := validate.ParseLineDate(e.Text())
						if err != nil {
							p.fail(e.Line, validate.KindExpirationDate, "Invalid expiration date %s (%v)", textsafe.Excerpt(e.Text()), err)
							ok = false
							continue
						}
						if p.reached(d) {
							p.expired = append(p.expired, expiredLine{line: it.Line, text: name + ": " + key.Str, date: d})
							continue
						}
					}
					values = append(values, filterEntry{value: key.Str, line: it.Line})
				default:
					p.fail(it.Line, validate.KindFilter, "Value %s for %s is invalid!", textsafe.ExcerptRaw(it.Inspect()), name)
					ok = false
				}
			}
			if !ok {
				continue
			}
		default:
			p.fail(v.Line, validate.KindFilter, "Value %s for %s is invalid!", textsafe.ExcerptRaw(v.Inspect()), name)
			continue
		}
		p.setFilter(def, name, values, k.Line)
	}
}

// prune runs the expiration pass of spec 6.2 over a rule map. It returns the pruned node and
// whether the node itself expired (and must disappear from its parent).
func (p *parser) prune(n *yaml11.Node) (*yaml11.Node, bool) {
	if n.Kind != yaml11.Map {
		return n, false
	}
	if len(n.Keys) == 1 {
		k, v := n.Keys[0], n.Values[0]
		switch {
		case v.Kind == yaml11.Seq:
			out := &yaml11.Node{Kind: yaml11.Seq, Line: v.Line}
			for _, it := range v.Items {
				c, gone := p.prune(it)
				// Expired children disappear, and so do empty maps ({}), which the
				// reference's pruning drops as well.
				if !gone && !(c.Kind == yaml11.Map && len(c.Keys) == 0) {
					out.Items = append(out.Items, c)
				}
			}
			return &yaml11.Node{Kind: yaml11.Map, Line: n.Line, Keys: n.Keys, Values: []*yaml11.Node{out}}, false
		case k.Text() == "not" && v.Kind == yaml11.Map && v.Get("expiration") != nil:
			// an expiration inside `not` applies to the whole `not` node.
			inner, gone := p.expireMap(v)
			if gone {
				return nil, true
			}
			return &yaml11.Node{Kind: yaml11.Map, Line: n.Line, Keys: n.Keys, Values: []*yaml11.Node{inner}}, false
		}
		return n, false
	}
	return p.expireMap(n)
}

// expireMap removes a map's `expiration` entry; the map is gone when that date has passed.
func (p *parser) expireMap(n *yaml11.Node) (*yaml11.Node, bool) {
	e := n.Get("expiration")
	if e == nil {
		return n, false
	}
	out := &yaml11.Node{Kind: yaml11.Map, Line: n.Line}
	for i, k := range n.Keys {
		if k.Text() != "expiration" {
			out.Keys = append(out.Keys, k)
			out.Values = append(out.Values, n.Values[i])
		}
	}
	if blankDate(e) {
		return out, false // no value or a blank string is no expiration, as in the reference
	}
	// Per-rule dates are strict YYYY-MM-DD; plain YAML dates are accepted too.
	d, err := validate.ParseLineDate(e.Text())
	if err != nil || (e.Kind != yaml11.String && e.Kind != yaml11.Date) {
		p.fail(e.Line, validate.KindExpirationDate, "Invalid expiration date %s (expected format: YYYY-MM-DD)", textsafe.Excerpt(e.Text()))
		return out, false
	}
	if p.reached(d) {
		text := ""
		if len(out.Keys) == 1 && out.Values[0].Kind != yaml11.Seq && out.Values[0].Kind != yaml11.Map {
			text = out.Keys[0].Text() + ": " + out.Values[0].Text()
		} else if len(out.Keys) > 0 {
			text = out.Keys[0].Text() + ": ..."
		}
		p.expiredRule(n.Line, text, d)
		return nil, true
	}
	return out, false
}

func (p *parser) expiredRule(line int, text string, d validate.Date) {
	p.expired = append(p.expired, expiredLine{line: line, text: text, date: d})
}

// yamlRule compiles a pruned rule map into a rule tree (spec 4.2).
func (p *parser) yamlRule(n *yaml11.Node) *rule {
	if n.Kind != yaml11.Map {
		p.fail(n.Line, validate.KindRuleStructure, "Invalid type: expected a rule map, got %s!", textsafe.ExcerptRaw(n.Inspect()))
		return nil
	}
	switch len(n.Keys) {
	case 0:
		p.fail(n.Line, validate.KindRuleStructure, "Rule Error: Rule had no keys!")
		return nil
	case 1:
	default:
		p.fail(n.Line, validate.KindRuleStructure, "Rule Error: Rule had multiple keys %s!", textsafe.ExcerptRaw(n.Inspect()))
		return nil
	}
	key, v := n.Keys[0].Text(), n.Values[0]
	switch key {
	case "or", "and":
		if v.Kind != yaml11.Seq {
			p.fail(v.Line, validate.KindRuleStructure, "Invalid type: expected %q to be a Array but got %s!", key, textsafe.ExcerptRaw(v.Inspect()))
			return nil
		}
		r := &rule{op: opOr, line: n.Line, text: key}
		if key == "and" {
			r.op = opAnd
			if len(v.Items) == 0 {
				// the reference crashes; an empty "and" is empty, never "everyone".
				p.warn(n.Line, "\"and\" has no (unexpired) conditions; it matches nobody")
				return &rule{op: opNone, line: n.Line, text: "and: []"}
			}
		}
		for _, it := range v.Items {
			if it.Kind != yaml11.Map {
				p.fail(it.Line, validate.KindRuleStructure, "Invalid type: expected %q to be a Array of rules but got %s!", key, textsafe.ExcerptRaw(it.Inspect()))
				continue
			}
			if c := p.yamlRule(it); c != nil {
				r.kids = append(r.kids, c)
			}
		}
		return r
	case "not":
		if v.Kind != yaml11.Map {
			p.fail(v.Line, validate.KindRuleStructure, "Invalid type: expected \"not\" to be a Hash but got %s!", textsafe.ExcerptRaw(v.Inspect()))
			return nil
		}
		c := p.yamlRule(v)
		if c == nil {
			return nil
		}
		return &rule{op: opNot, kids: []*rule{c}, line: n.Line, text: "not"}
	case "always":
		if v.Kind == yaml11.Bool && !v.Bool {
			return &rule{op: opNone, line: n.Line, text: "always: false"}
		}
	}
	if !p.checkMethod(n.Line, key) {
		return nil
	}
	if v.Kind != yaml11.String {
		// Rule methods take one string (quote numbers: `username: "0123"`).
		p.fail(v.Line, validate.KindRuleStructure, "Rule Error: %s takes one string value, not %s %s", key, v.RubyClass(), textsafe.ExcerptRaw(v.Inspect()))
		return nil
	}
	return &rule{op: opMethod, method: canonicalMethod(key), value: v.Text(), line: n.Line, text: key + ": " + v.Text()}
}

// blankDate reports a per-rule or filter-item expiration that the reference treats as "no
// expiration": null, or a string of blanks.
func blankDate(e *yaml11.Node) bool {
	return e.Kind == yaml11.Null || e.Kind == yaml11.String && strings.Trim(e.Str, rubySpace) == ""
}
