// Package cache holds the memoisation pieces the providers share: a known-existence memo (a
// successful search of an LDAP base proves it exists, so nobody searches it again), a TTL
// cache that coalesces concurrent loads of the same key into one request, and (with the
// providers that use it) the predictive cache of the last applied state.
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
