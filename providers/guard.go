package providers

import (
	"fmt"
	"slices"
	"strings"
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
}

// DefaultGuard: refuse removing more than 25% of a target's memberships (when that is at
// least 10 memberships) or deleting more than 10 groups.
func DefaultGuard() Guard { return Guard{MaxRemovalShare: 0.25, MinRemovals: 10, MaxDeletedGroups: 10} }

// GuardError is a refused plan. Worst lists the groups that lose the most members.
type GuardError struct {
	OU                  string
	Removed, Total      int
	Deleted, MaxDeleted int
	Share, MaxShare     float64
	Worst               []string
}

func (e *GuardError) Error() string {
	var why string
	if e.MaxDeleted >= 0 && e.Deleted > e.MaxDeleted {
		why = fmt.Sprintf("it deletes %d groups (limit %d)", e.Deleted, e.MaxDeleted)
	} else {
		why = fmt.Sprintf("it removes %d of %d memberships (%.0f%%, limit %.0f%%)", e.Removed, e.Total, e.Share*100, e.MaxShare*100)
	}
	return fmt.Sprintf("removal guard refused the plan for %s: %s; worst: %s (override with --max-removal-share/--max-deleted-groups or --force)",
		e.OU, why, strings.Join(e.Worst, ", "))
}

// Check inspects the changes of one target against its current state.
func (g Guard) Check(ou string, current *State, changes []*Change) error {
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
		case DeleteGroup:
			deleted++
			removed += len(c.Remove)
			losses = append(losses, loss{c.DN + " (deleted)", len(c.Remove)})
		case UpdateGroup:
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
	tooMuch := g.MaxRemovalShare >= 0 && g.MaxRemovalShare < 1 && removed > 0 && removed >= g.MinRemovals &&
		share > g.MaxRemovalShare
	if !tooMany && !tooMuch {
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
	return &GuardError{OU: ou, Removed: removed, Total: total, Deleted: deleted, MaxDeleted: g.MaxDeletedGroups,
		Share: share, MaxShare: g.MaxRemovalShare, Worst: worst}
}
