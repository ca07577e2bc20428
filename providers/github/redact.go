package github

import (
	"context"

	"github.com/entitlements-go/entitlements/providers"
)

// No message of the provider holds a credential: GitHub, or whatever answers in its place, may
// echo the request (the Authorization header included) in an error body, a GraphQL error or
// a 4xx message, and those end up in errors, outcomes and log lines. Every token and App key
// the Registry is given, and every JWT and installation token it obtains, is masked in all of
// them (Registry.secrets): here for what Read and Apply return,
// in the Registry's logger for what is logged.

// Read implements providers.Provider (see read).
func (p *OrgProvider) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	if err := p.s.checkAccess(ctx, false); err != nil {
		return nil, p.s.h.reg.secrets.Error(err)
	}
	st, err := p.read(ctx, t)
	return st, p.s.h.reg.secrets.Error(err)
}

// Apply implements providers.Provider (see apply).
func (p *OrgProvider) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	if err := p.s.checkAccess(ctx, true); err != nil {
		return p.s.h.reg.masked(failAll(changes, err))
	}
	return p.s.h.reg.masked(p.apply(ctx, t, changes))
}

// Read implements providers.Provider (see read).
func (p *TeamProvider) Read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	if err := p.s.checkAccess(ctx, false); err != nil {
		return nil, p.s.h.reg.secrets.Error(err)
	}
	st, err := p.read(ctx, t)
	return st, p.s.h.reg.secrets.Error(err)
}

// Apply implements providers.Provider (see apply).
func (p *TeamProvider) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	if err := p.s.checkAccess(ctx, true); err != nil {
		return p.s.h.reg.masked(failAll(changes, err))
	}
	return p.s.h.reg.masked(p.apply(ctx, t, changes))
}

// failAll is the outcome of an apply refused before anything was sent.
func failAll(changes []*providers.Change, err error) []providers.Outcome {
	out := make([]providers.Outcome, len(changes))
	for i, c := range changes {
		out[i] = providers.Outcome{Change: c, Status: providers.Failed, Err: err}
	}
	return out
}

// masked masks the tokens in the errors of outcomes.
func (r *Registry) masked(out []providers.Outcome) []providers.Outcome {
	for i := range out {
		out[i].Err = r.secrets.Error(out[i].Err)
	}
	return out
}
