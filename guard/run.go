package guard

import (
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/providers"
)

// RunTarget is one target of a run as the run-wide checks see it: a target that could be
// planned (refused ones included: they are part of what the inputs say).
type RunTarget struct {
	OU      string
	Changes []*providers.Change
	// Current is the state read (nil for a derived target, which reads none).
	Current *providers.State
	// Derived targets (member_of) count person-attribute values: DerivedTotal is how many
	// people hold now.
	Derived      bool
	DerivedTotal int
}

// CheckRun checks the removals of the whole run, after every target's own checks: together
// the targets may remove at most MaxTotalRemovalShare of all their memberships (small
// targets that each stay under MinRemovals can still lose everyone together), and at most
// MaxPeopleLossShare of the people who hold memberships now may be missing from the people
// data (isPerson says whether a uid is a person of this run). It returns the refusal, or nil,
// and the OUs of the targets it refuses: every one that removes anything.
func (g Guard) CheckRun(targets []RunTarget, isPerson func(uid string) bool) (*Error, []string) {
	parts := make([]TargetRemovals, 0, len(targets))
	var removing []string
	for _, t := range targets {
		var removed, total int
		if t.Derived {
			removed, total = PeopleRemovals(t.Changes), t.DerivedTotal
		} else if t.Current != nil {
			removed, total = Removals(t.Current, t.Changes)
		} else {
			continue
		}
		if removed > 0 {
			removing = append(removing, t.OU)
		}
		parts = append(parts, TargetRemovals{OU: t.OU, Removed: removed, Total: total})
	}
	ge := g.CheckTotal(parts)
	if ge == nil {
		ge = g.peopleLoss(targets, isPerson)
	}
	if ge == nil {
		return nil, nil
	}
	return ge, removing
}

// peopleLoss compares the people who hold memberships in the targets now with the people
// data of the run: in a steady state every member is a person, so members who are no longer
// people are what the people source lost since the previous run.
func (g Guard) peopleLoss(targets []RunTarget, isPerson func(string) bool) *Error {
	seen := map[string]bool{}
	var lost []string
	for _, t := range targets {
		if t.Current == nil {
			continue
		}
		for _, cg := range t.Current.Groups {
			for _, m := range cg.Members {
				k := strings.ToLower(m)
				if seen[k] {
					continue
				}
				seen[k] = true
				if !isPerson(k) {
					lost = append(lost, m)
				}
			}
		}
	}
	slices.Sort(lost)
	return g.CheckPeopleLoss(len(seen), len(lost), lost[:min(len(lost), 5)])
}
