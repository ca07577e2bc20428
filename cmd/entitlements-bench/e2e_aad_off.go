//go:build !aad

package main

// startBenchAAD: this binary has no Azure AD provider, so the e2e benchmark skips AAD.
func startBenchAAD([]string, int) (benchBackend, string, aadOpen, string) {
	return nil, "", nil, "this binary was built without Azure AD support (go run -tags aad ./cmd/entitlements-bench --e2e)"
}
