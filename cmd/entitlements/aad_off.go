//go:build !aad

package main

import (
	"fmt"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
)

// addAAD registers a stand-in for the Azure AD provider. The real one pulls in
// msgraph-sdk-go, which takes minutes and gigabytes to compile; it is built only with
// `go build -tags aad ./cmd/entitlements`, so that everyone else never pays for it.
func addAAD(_ *common, out map[string]deploy.Factory) {
	out["aad"] = func(*config.OU) (providers.Provider, error) {
		return nil, fmt.Errorf("this binary was built without Azure AD support; rebuild with: go build -tags aad ./cmd/entitlements")
	}
}
