//go:build aad

package main

import (
	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad"
)

// aadBackends is the Azure AD backend with its provider (built with -tags aad). The predictive
// state of the last applied run is used when ENTITLEMENTS_PREDICTIVE_STATE_DIR is set.
func aadBackends(c *common) []backend.Backend {
	opt := aad.Options{Logger: c.logger}
	var predErr error
	opt.Predictive, predErr = c.predictiveState()
	if hook, ok := c.ext.aadHook.(func(*aad.Options)); ok {
		hook(&opt)
	}
	reg := aad.NewRegistry(opt)
	c.aad = reg
	bs := aad.Backends(reg)
	if predErr != nil {
		for i := range bs {
			bs[i].New = func(*config.OU) (providers.Provider, error) { return nil, predErr }
		}
	}
	return bs
}
