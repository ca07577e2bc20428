//go:build aad

package main

import (
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad"
)

// addAAD registers the Azure AD provider (built with -tags aad). The predictive state of the
// last applied run is used when ENTITLEMENTS_PREDICTIVE_STATE_DIR is set.
func addAAD(c *common, out map[string]deploy.Factory) {
	opt := aad.Options{Logger: c.logger}
	var predErr error
	opt.Predictive, predErr = c.predictiveState()
	if hook, ok := c.ext.aadHook.(func(*aad.Options)); ok {
		hook(&opt)
	}
	reg := aad.NewRegistry(opt)
	c.aad = reg
	out["aad"] = func(ou *config.OU) (providers.Provider, error) {
		if predErr != nil {
			return nil, predErr
		}
		return reg.Provider(ou)
	}
}
