//go:build !aad

package main

import "github.com/entitlements-go/entitlements/backend"

// aadBackends adds nothing: the Azure AD provider pulls in msgraph-sdk-go, which takes minutes
// and gigabytes to compile, so it is built only with `go build -tags aad ./cmd/entitlements`.
// Without it, aad OUs are calculated and planning one says that this binary cannot write it.
func aadBackends(*session) []backend.Backend { return nil }
