package calc

import (
	"github.com/RoaringBitmap/roaring/v2"
	"github.com/entitlements-go/entitlements/validate"
)

// ruleOp is the kind of a rule-tree node. Every definition format compiles to the same tree.
type ruleOp uint8

const (
	opOr ruleOp = iota
	opAnd
	opNot
	opNone   // always: false, or a branch whose conditions all expired
	opMethod // a leaf: method = value
)

// rule is one node of a compiled rule tree. Leaves are resolved during linking: a `group`
// leaf gets its target groups, every other method its memoised member set; both are kept in
// the group's links at the node's id, not in the node, so that a parsed definition never
// changes and every Repo that loads the same file shares it (an incremental load links it
// again without copying it).
type rule struct {
	op     ruleOp
	id     int32 // index of the node's link (definition.number)
	kids   []*rule
	method string // canonical method name (aliases applied)
	value  string
	line   int
	// text is the rule as written, for explanations ("group = pizza_teams/sre").
	text string
}

// link returns the linked state of the rule node or filter entry id of g's definition (zero
// when nothing was linked for it).
func (g *group) link(id int32) link {
	if int(id) < len(g.links) {
		return g.links[id]
	}
	return link{}
}

// link is the linked state of one rule node or filter entry of a group's definition.
type link struct {
	targets []*group        // group references (a wildcard can name several)
	leaf    *roaring.Bitmap // every other method
	broken  *validate.Error // filter entry: a reference that does not resolve (see linker.final)
}

// filterMode is a group's setting for one filter.
type filterMode uint8

const (
	filterNone filterMode = iota // default: remove everyone in the filter's population
	filterAll                    // filter switched off for this group
	filterList                   // remove the population except the listed people/groups
)

// filterSetting is a definition's explicit setting for one filter.
type filterSetting struct {
	mode    filterMode
	entries []filterEntry
	line    int
}

type filterEntry struct {
	value string // a username, or a group reference when it contains "/"
	line  int
	id    int32 // index of the entry's link (definition.number)
}

// expiredLine records a rule line or filter entry that was dropped because its date passed;
// explanations show them so "why did I lose access" has an answer.
type expiredLine struct {
	line int
	text string
	date validate.Date
}

// metaEntry is one metadata key. Values are strings for .txt files and YAML-typed for .yaml.
type metaEntry struct {
	key   string
	value any
}

// definition is one parsed group file. It is immutable after parsing.
type definition struct {
	description string
	metadata    []metaEntry
	// fileExp is the whole-file expiration (zero when none).
	fileExp     validate.Date
	fileExpLine int
	rules       *rule
	filters     map[string]*filterSetting
	expired     []expiredLine
	// nlinks is the number of rule nodes and filter entries, the size of a group's links.
	nlinks int
	// ldapDNs are the values of its ldap_group rules (read in bulk before linking).
	ldapDNs []string
}

// number gives every rule node and filter entry of d its index into a group's links, and
// collects its ldap_group values.
func (d *definition) number() {
	n := 0
	var walk func(r *rule)
	walk = func(r *rule) {
		if r == nil {
			return
		}
		r.id = int32(n)
		n++
		if r.op == opMethod && r.method == "ldap_group" {
			d.ldapDNs = append(d.ldapDNs, r.value)
		}
		for _, k := range r.kids {
			walk(k)
		}
	}
	walk(d.rules)
	for _, s := range d.filters {
		for i := range s.entries {
			s.entries[i].id = int32(n)
			n++
		}
	}
	d.nlinks = n
}

func (d *definition) meta(key string) (any, bool) {
	for _, m := range d.metadata {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}
