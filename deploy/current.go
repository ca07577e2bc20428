package deploy

import "github.com/entitlements-go/entitlements/providers"

// Current is the state the target's provider read (nil when the read failed or the target
// has no group state, as member_of). Auditors use it to know which groups exist.
func (t *TargetPlan) Current() *providers.State { return t.state }

// Desired are the target's calculated groups as its provider took them for the read and the
// diff, when Current is set: Desirer applied (GitHub logins lower-cased, ignored users left
// out) and members a DesiredReader cannot write left out. A calculated member missing here
// is one the provider does not manage; the drift report leaves such members out of the
// comparison.
func (t *TargetPlan) Desired() []*providers.Group { return t.desired }

// Provider is the provider that read the target (nil when none could be built), for readers
// of a plan that need more of it than the plan says: the drift report asks whether it
// deletes groups (providers.DeletePolicy) and who modified a group (providers.ModificationReader).
// Writes go through Apply.
func (t *TargetPlan) Provider() providers.Provider { return t.provider }
