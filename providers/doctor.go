package providers

import "context"

// Finding is one thing a Doctor checked about a target.
type Finding struct {
	// Check names what was checked: "credential", "permissions", "rate limit", "clock",
	// "bind", "base", "write access".
	Check string `json:"check"`
	// OK: nothing to fix. Skipped: the check does not apply or could not be made (Detail
	// says why); it is not a problem.
	OK      bool `json:"ok"`
	Skipped bool `json:"skipped,omitempty"`
	// Detail is what was found (the credential's kind and identity, the permissions, the
	// headroom); Fix, when not OK, says in words what to change.
	Detail string `json:"detail,omitempty"`
	Fix    string `json:"fix,omitempty"`
}

// Doctor is implemented by providers that can check, without writing anything, that a
// target can be planned and applied: the credential is obtainable, it has the permissions
// the OU's settings need, the API has rate-limit headroom, the server's clock agrees with
// ours. `entitlements doctor` calls it.
type Doctor interface {
	Doctor(ctx context.Context, t *Target) []Finding
}
