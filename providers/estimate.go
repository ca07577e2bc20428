package providers

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Estimate is what applying a target's changes will cost: the writes it sends by kind (as the
// provider names them: "invitation", "role_change", "team_member", ...), how long the
// provider's write budgets make it take, and notes (budgets that will run out).
type Estimate struct {
	Writes   map[string]int
	Duration time.Duration
	Notes    []string
}

// Total is the number of writes.
func (e Estimate) Total() int {
	n := 0
	for _, v := range e.Writes {
		n += v
	}
	return n
}

// String is the estimate on one line: "12 writes (invitation 2, team_member 10), about 11s".
func (e Estimate) String() string {
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(e.Writes)) {
		if e.Writes[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, e.Writes[k]))
		}
	}
	s := fmt.Sprintf("%d writes", e.Total())
	if len(kinds) > 0 {
		s += " (" + strings.Join(kinds, ", ") + ")"
	}
	s += ", about " + e.Duration.Round(time.Second).String()
	if len(e.Notes) > 0 {
		s += "; " + strings.Join(e.Notes, "; ")
	}
	return s
}

// Estimator is implemented by providers that can say, at plan time, what applying a target's
// changes will cost (deploy.TargetPlan.Estimate). Called once per planned target, in plan
// order, after the target was read.
type Estimator interface {
	Estimate(changes []*Change) Estimate
}
