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
// leaf gets its target groups, every other method its memoised member set.
type rule struct {
	op     ruleOp
	kids   []*rule
	method string // canonical method name (aliases applied)
	value  string
	line   int
	// text is the rule as written, for explanations ("group = pizza_teams/sre").
	text string

	// Linked state.
	targets []*group        // group references (a wildcard can name several)
	leaf    *roaring.Bitmap // every other method
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
	// Linked state.
	targets []*group
	broken  *validate.Error // a reference that does not resolve (see linker.final)
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
}

func (d *definition) meta(key string) (any, bool) {
	for _, m := range d.metadata {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}
