//go:build !aad

package main

// startBenchAAD: this binary has no Azure AD provider, so the e2e benchmark skips AAD.
func startBenchAAD([]string, int) (benchBackend, string, any, string) {
	return nil, "", nil, "this binary was built without Azure AD support (go build -tags aad ./cmd/entitlements)"
}
