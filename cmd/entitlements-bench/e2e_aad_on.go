//go:build aad

package main

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/cache"
	"github.com/entitlements-go/entitlements/providers/aad"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// benchAAD is the fake Graph of the e2e benchmark. Latency is added on the client side of
// the connection (a delay before each request is sent), so it can be off while the bench
// sets the state up and on while it measures.
type benchAAD struct {
	srv   *fakegraph.Server
	delay atomic.Int64
	mu    sync.Mutex
	last  *http.Transport // the previous run's, closed when the next run starts
}

type benchCred struct{ token string }

func (c benchCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: c.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

type delayRT struct {
	b    *benchAAD
	base http.RoundTripper
}

func (d delayRT) RoundTrip(req *http.Request) (*http.Response, error) {
	if ms := d.b.delay.Load(); ms > 0 {
		t := time.NewTimer(time.Duration(ms))
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		}
	}
	return d.base.RoundTrip(req)
}

// startBenchAAD starts fakegraph with the given users and returns the backend, the Graph
// base URL for the config and the opener of each run's Azure AD backend.
func startBenchAAD(upns []string, pool int) (benchBackend, string, aadOpen, string) {
	b := &benchAAD{srv: fakegraph.New(fakegraph.Options{})}
	b.srv.AddUsers(upns...)
	open := func(logger *slog.Logger, pred *cache.Predictive) ([]backend.Backend, func()) {
		// A transport per run, as a new CLI process would have: a cold run must open its
		// own connections, not reuse the setup apply's.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxConnsPerHost, t.MaxIdleConnsPerHost = pool, pool
		b.mu.Lock()
		if b.last != nil {
			b.last.CloseIdleConnections()
		}
		b.last = t
		b.mu.Unlock()
		reg := aad.NewRegistry(aad.Options{
			Logger:          logger,
			Predictive:      pred,
			TokenCredential: benchCred{b.srv.Token()},
			HTTPClient:      &http.Client{Transport: delayRT{b: b, base: t}},
			PoolSize:        pool,
			// As for GitHub: the benchmark measures requests and latency, not the write
			// budget (on the real clock, paced writes would take hours).
			NoWritePacing: true,
		})
		return aad.Backends(reg), reg.Close
	}
	return b, b.srv.BaseURL(), open, ""
}

func (b *benchAAD) setLatency(d time.Duration) { b.delay.Store(int64(d)) }
func (b *benchAAD) resetStats()                { b.srv.ResetStats() }
func (b *benchAAD) close()                     { b.srv.Close() }
func (b *benchAAD) stats() benchStats {
	st := b.srv.Stats()
	return benchStats{requests: st.Requests, connections: st.NewConnections, memberReads: st.Routes["members.list"]}
}
