//go:build !aad

package main

// startApplyGraph: this binary has no Azure AD provider, so the apply benchmark measures GitHub
// only.
func startApplyGraph([]string, *fakeClock) (*applyGraph, string) {
	return nil, "this binary was built without Azure AD support (go run -tags aad ./cmd/entitlements-bench --apply)"
}
