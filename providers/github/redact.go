package github

import (
	"context"

	"github.com/entitlements-go/entitlements/providers"
)

// No message of the provider holds a token: GitHub, or whatever answers in its place, may
// echo the request (the Authorization header included) in an error body, a GraphQL error or
// a 4xx message, and those end up in errors, outcomes and log lines. Every token the Registry
// is given is masked in all of them (Registry.secrets): here for what Read and Apply return,
// in the Registry's logger for what is logged.

// Read implements providers.Provider (see read).
func (p *OrgProvider) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	st, err := p.read(ctx, t)
	return st, p.s.h.reg.secrets.Error(err)
}

// Apply implements providers.Provider (see apply).
func (p *OrgProvider) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	return p.s.h.reg.masked(p.apply(ctx, t, changes))
}

// Read implements providers.Provider (see read).
func (p *TeamProvider) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	st, err := p.read(ctx, t)
	return st, p.s.h.reg.secrets.Error(err)
}

// Apply implements providers.Provider (see apply).
func (p *TeamProvider) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	return p.s.h.reg.masked(p.apply(ctx, t, changes))
}

// masked masks the tokens in the errors of outcomes.
func (r *Registry) masked(out []providers.Outcome) []providers.Outcome {
	for i := range out {
		out[i].Err = r.secrets.Error(out[i].Err)
	}
	return out
}
