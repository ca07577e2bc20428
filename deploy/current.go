package deploy

import "github.com/entitlements-go/entitlements/providers"

// Current is the state the target's provider read (nil when the read failed or the target
// has no group state, as member_of). Auditors use it to know which groups exist.
func (t *TargetPlan) Current() *providers.State { return t.state }
