package guard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/providers"
)

// Guard refuses plans that remove a lot of access at once: the most common way a tool like
// this hurts people is a bad input (an empty people source, a broken filter) turned into a
// mass removal. DefaultGuard is what the CLI uses; deploy.Options.Force switches it off.
type Guard struct {
	// MaxRemovalShare is the largest share of a target's current memberships that one plan
	// may remove (0.25 = 25%). A negative value or one of 1 or more means no limit.
	MaxRemovalShare float64
	// MinRemovals: plans removing fewer memberships than this are never refused by share, so
	// that small targets can still change.
	MinRemovals int
	// MaxDeletedGroups is the most groups one plan may delete in a target (negative: no limit).
	MaxDeletedGroups int
	// MaxGroupRemovalShare is the largest share of one group's members that a plan may
	// remove (when that is at least MinRemovals): wiping one big group is as harmful as a
	// target-wide removal, even when the target as a whole is large. Negative or ≥ 1: no limit.
	MaxGroupRemovalShare float64
	// MaxTotalRemovalShare is the largest share of all current memberships, counted over every
	// target of the run (group memberships and member_of values), that one run may remove
	// (when that is at least MinRemovals): six small targets that each stay under
	// MinRemovals can still lose everyone together. 0: the same as MaxRemovalShare (so a
	// Guard written before this field existed keeps a sensible limit); negative or ≥ 1: no
	// limit.
	MaxTotalRemovalShare float64
	// MaxPeopleLossShare is the largest share of the people who hold a membership in any
	// target now (the state the previous runs left) that may be missing from this run's
	// people data (when that is at least MinRemovals people): a people source that lost part
	// of the company removes those people everywhere, even when they hold few memberships.
	// 0: the same as MaxRemovalShare; negative or ≥ 1: no limit.
	MaxPeopleLossShare float64
}

// Limit names the limit that refused a plan.
type Limit string

// The limits of a Guard.
const (
	LimitShare   Limit = "share"   // MaxRemovalShare of a target
	LimitDeleted Limit = "deleted" // MaxDeletedGroups
	LimitGroup   Limit = "group"   // MaxGroupRemovalShare
	LimitTotal   Limit = "total"   // MaxTotalRemovalShare, over every target
	LimitPeople  Limit = "people"  // MaxPeopleLossShare, over every target
)

// DefaultGuard: refuse removing more than 25% of a target's memberships, more than 25% of all
// memberships of the run, or more than 50% of one group's members (when that is at least 10
// memberships), or deleting more than 10 groups.
func Default() Guard {
	return Guard{MaxRemovalShare: 0.25, MinRemovals: 10, MaxDeletedGroups: 10, MaxGroupRemovalShare: 0.5}
}

// Error is a refused plan. Worst lists the groups that lose the most members (for
// LimitTotal: the targets that remove the most). The target's changes are still planned, so
// that an operator can judge them; none is applied.
type Error struct {
	OU string
	// Limit is the limit that refused the plan.
	Limit               Limit
	Removed, Total      int
	Deleted, MaxDeleted int
	Share, MaxShare     float64
	Worst               []string
	// Group is set when one group alone lost too many members.
	Group                    string
	GroupRemoved, GroupTotal int
	MaxGroupShare            float64
}

func (e *Error) Error() string {
	var why string
	switch e.Limit {
	case LimitGroup:
		why = fmt.Sprintf("it removes %d of the %d members of %s (limit %.0f%% of a group)", e.GroupRemoved, e.GroupTotal, e.Group, e.MaxGroupShare*100)
	case LimitDeleted:
		why = fmt.Sprintf("it deletes %d groups (limit %d)", e.Deleted, e.MaxDeleted)
	case LimitPeople:
		return fmt.Sprintf("removal guard refused the plan for %s: %d of the %d people who hold memberships now are missing from the people data (%.0f%%, limit %.0f%%); for example: %s",
			e.OU, e.Removed, e.Total, e.Share*100, e.MaxShare*100, strings.Join(e.Worst, ", "))
	case LimitTotal:
		return fmt.Sprintf("removal guard refused the plan for %s: the run removes %d of %d memberships across all targets (%.0f%%, limit %.0f%%); most: %s",
			e.OU, e.Removed, e.Total, e.Share*100, e.MaxShare*100, strings.Join(e.Worst, ", "))
	default:
		why = fmt.Sprintf("it removes %d of %d memberships (%.0f%%, limit %.0f%%)", e.Removed, e.Total, e.Share*100, e.MaxShare*100)
	}
	return fmt.Sprintf("removal guard refused the plan for %s: %s; worst: %s", e.OU, why, strings.Join(e.Worst, ", "))
}

// Check inspects the changes of one target against its current state.
func (g Guard) Check(ou string, current *providers.State, changes []*providers.Change) error {
	total := 0
	for _, cg := range current.Groups {
		total += len(cg.Members)
	}
	removed, deleted := 0, 0
	type loss struct {
		dn string
		n  int
	}
	var losses []loss
	for _, c := range changes {
		switch c.Kind {
		case providers.DeleteGroup:
			deleted++
			removed += len(c.Remove)
			losses = append(losses, loss{c.DN + " (deleted)", len(c.Remove)})
		case providers.UpdateGroup:
			if len(c.Remove) > 0 {
				removed += len(c.Remove)
				losses = append(losses, loss{c.DN, len(c.Remove)})
			}
		}
	}
	share := 0.0
	if total > 0 {
		share = float64(removed) / float64(total)
	}
	tooMany := g.MaxDeletedGroups >= 0 && deleted > g.MaxDeletedGroups
	tooMuch := limited(g.MaxRemovalShare) && removed > 0 && removed >= g.MinRemovals && share > g.MaxRemovalShare
	var wiped *providers.Change
	if limited(g.MaxGroupRemovalShare) {
		for _, c := range changes {
			if c.Kind != providers.UpdateGroup || c.Current == nil || len(c.Remove) == 0 || len(c.Remove) < g.MinRemovals {
				continue
			}
			if float64(len(c.Remove))/float64(len(c.Current.Members)) > g.MaxGroupRemovalShare {
				wiped = c
				break
			}
		}
	}
	if !tooMany && !tooMuch && wiped == nil {
		return nil
	}
	slices.SortFunc(losses, func(a, b loss) int { return b.n - a.n })
	var worst []string
	for i, l := range losses {
		if i == 5 {
			break
		}
		worst = append(worst, fmt.Sprintf("%s -%d", l.dn, l.n))
	}
	ge := &Error{OU: ou, Limit: LimitShare, Removed: removed, Total: total, Deleted: deleted, MaxDeleted: g.MaxDeletedGroups,
		Share: share, MaxShare: g.MaxRemovalShare, Worst: worst}
	if tooMany {
		ge.Limit = LimitDeleted
	}
	if !tooMany && !tooMuch {
		ge.Limit = LimitGroup
		ge.Group = wiped.DN
		ge.GroupRemoved, ge.GroupTotal, ge.MaxGroupShare = len(wiped.Remove), len(wiped.Current.Members), g.MaxGroupRemovalShare
	}
	return ge
}

func limited(share float64) bool { return share >= 0 && share < 1 }

// CheckPeople inspects person-attribute changes (member_of): the share of all current values
// that the plan removes, given the total number of values people hold now.
func (g Guard) CheckPeople(ou string, totalValues int, changes []*providers.Change) error {
	removed := 0
	type loss struct {
		who string
		n   int
	}
	var losses []loss
	for _, c := range changes {
		keep := make(map[string]bool, len(c.Values))
		for _, v := range c.Values {
			keep[providers.Key(v)] = true
		}
		n := 0
		for _, v := range c.OldValues {
			if !keep[providers.Key(v)] {
				n++
			}
		}
		if n > 0 {
			removed += n
			losses = append(losses, loss{c.Person, n})
		}
	}
	share := 0.0
	if totalValues > 0 {
		share = float64(removed) / float64(totalValues)
	}
	if !limited(g.MaxRemovalShare) || removed == 0 || removed < g.MinRemovals || share <= g.MaxRemovalShare {
		return nil
	}
	slices.SortFunc(losses, func(a, b loss) int { return b.n - a.n })
	var worst []string
	for i, l := range losses {
		if i == 5 {
			break
		}
		worst = append(worst, fmt.Sprintf("%s -%d", l.who, l.n))
	}
	return &Error{OU: ou, Limit: LimitShare, Removed: removed, Total: totalValues, Share: share, MaxShare: g.MaxRemovalShare,
		MaxDeleted: -1, Worst: worst}
}

// Removals counts the memberships that changes remove from a target and the memberships the
// target holds now (the global guard's numerator and denominator).
func Removals(current *providers.State, changes []*providers.Change) (removed, total int) {
	if current != nil {
		for _, cg := range current.Groups {
			total += len(cg.Members)
		}
	}
	for _, c := range changes {
		if c.Kind == providers.DeleteGroup || c.Kind == providers.UpdateGroup {
			removed += len(c.Remove)
		}
	}
	return removed, total
}

// PeopleRemovals counts the person-attribute values (member_of) that changes remove.
func PeopleRemovals(changes []*providers.Change) int {
	removed := 0
	for _, c := range changes {
		keep := make(map[string]bool, len(c.Values))
		for _, v := range c.Values {
			keep[providers.Key(v)] = true
		}
		for _, v := range c.OldValues {
			if !keep[providers.Key(v)] {
				removed++
			}
		}
	}
	return removed
}

// TargetRemovals is one target's part of a run, for CheckTotal.
type TargetRemovals struct {
	OU             string
	Removed, Total int
}

// CheckTotal is the global guard: it refuses a run whose targets together remove more than
// MaxTotalRemovalShare of all their current memberships (when that is at least MinRemovals).
// It returns the error to set on every target that removes anything, or nil.
func (g Guard) CheckTotal(targets []TargetRemovals) *Error {
	max := g.MaxTotalRemovalShare
	if max == 0 {
		max = g.MaxRemovalShare
	}
	removed, total := 0, 0
	for _, t := range targets {
		removed += t.Removed
		total += t.Total
	}
	share := 0.0
	if total > 0 {
		share = float64(removed) / float64(total)
	}
	if !limited(max) || removed == 0 || removed < g.MinRemovals || share <= max {
		return nil
	}
	sorted := slices.Clone(targets)
	slices.SortStableFunc(sorted, func(a, b TargetRemovals) int { return b.Removed - a.Removed })
	var worst []string
	for _, t := range sorted {
		if len(worst) == 5 || t.Removed == 0 {
			break
		}
		worst = append(worst, fmt.Sprintf("%s -%d", t.OU, t.Removed))
	}
	return &Error{Limit: LimitTotal, Removed: removed, Total: total, Share: share, MaxShare: max,
		MaxDeleted: -1, Worst: worst}
}

// CheckPeopleLoss refuses a run in which more than MaxPeopleLossShare of the people who hold
// memberships now (current) are missing from the people data (lost, with a few examples).
func (g Guard) CheckPeopleLoss(current, lost int, examples []string) *Error {
	max := g.MaxPeopleLossShare
	if max == 0 {
		max = g.MaxRemovalShare
	}
	share := 0.0
	if current > 0 {
		share = float64(lost) / float64(current)
	}
	if !limited(max) || lost == 0 || lost < g.MinRemovals || share <= max {
		return nil
	}
	return &Error{Limit: LimitPeople, Removed: lost, Total: current, Share: share, MaxShare: max,
		MaxDeleted: -1, Worst: examples}
}
