// Package cache holds the memoisation pieces the providers share:
//
//   - Existence, a known-existence memo (a successful search of an LDAP base proves it
//     exists, so nobody searches it again);
//   - TTL, a cache loaded one key at a time that coalesces concurrent loads of the same key
//     into one request (singleflight), with optional stale-while-revalidate;
//   - Batched, a cache of values fetched many keys per request (one $batch, one `in` filter):
//     concurrent calls share one fetch per key, the missing keys of a call are fetched
//     together in one bulk fetch, "not found" is cached briefly, and stale-while-revalidate
//     refreshes the expired keys of a call in one background fetch;
//   - Predictive, the predictive cache of the last applied state (with the providers that
//     use it).
package cache

import (
	"sync"

	"github.com/entitlements-go/entitlements/internal/dn"
)

// Existence remembers which DNs are known to exist. Only positive knowledge is kept: a failed
// search proves nothing (it may be a network error), and a successful delete forgets the DN.
// Keys are normalised DNs, so case and spacing differences do not defeat the memo.
type Existence struct {
	mu    sync.RWMutex
	known map[string]bool
}

// Exists reports whether d is known to exist.
func (e *Existence) Exists(d string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.known[dn.Normalize(d)]
}

// Mark records that d exists.
func (e *Existence) Mark(d string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.known == nil {
		e.known = map[string]bool{}
	}
	e.known[dn.Normalize(d)] = true
}

// Forget drops d (after it was deleted).
func (e *Existence) Forget(d string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.known, dn.Normalize(d))
}
