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
func aadBackends(s *session) []backend.Backend {
	opt := aad.Options{Logger: s.logger}
	var predErr error
	opt.Predictive, predErr = s.predictiveState()
	reg := aad.NewRegistry(opt)
	s.aad = reg
	bs := aad.Backends(reg)
	if predErr != nil {
		for i := range bs {
			bs[i].New = func(*config.OU) (providers.Provider, error) { return nil, predErr }
		}
	}
	return bs
}
