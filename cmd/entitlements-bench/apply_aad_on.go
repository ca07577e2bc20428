//go:build aad

package main

// startApplyGraph: fakegraph does not enforce Graph's write limits on a clock yet, so the apply
// benchmark measures GitHub only.
func startApplyGraph([]string, *fakeClock) (*applyGraph, string) {
	return nil, "Graph's write budget and fakegraph's write limits are not in this build yet: Azure AD is not measured"
}
