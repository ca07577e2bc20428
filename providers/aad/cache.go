package aad

import (
	"context"
	"sync"
	"time"

	"github.com/entitlements-go/entitlements/cache"
)

// bulkCache caches values that are fetched many keys at a time (one $batch answers many
// groups), with the per-key guarantees of cache.TTL:
//
//   - a key that is fresh in the cache costs nothing;
//   - a key that another caller is fetching right now is waited for, not fetched again
//     (concurrent reads of the same group share one request);
//   - the remaining keys of a call are fetched together, in one bulk fetch;
//   - with StaleWhile, an expired value is returned at once and refreshed in the background,
//     once per key however many callers ask, the expired keys of a call in one bulk fetch; as
//     in cache.TTL, a value more than MaxStale (default one TTL) past its expiry is not
//     served but waited for like a miss, and a failed refresh is told to OnRefreshError.
//
// "Not found" answers are cached too (plan and apply must not ask twice), but only for
// negTTL: a long-running embedder must see a user or group created since, and must never
// re-create a group because a stale "not found" said it was missing.
//
// # Why not cache.TTL.Get (singleflight) per key
//
// cache.TTL stores the values (Peek, Set, Invalidate), but its Get, and so its singleflight,
// cannot do the coalescing without losing the batching, which is the point of this type (one
// $batch of 20 member lists, one `in` filter of 15 names; fetching per key would multiply the
// requests by up to 300). TTL.Get takes one key and a loader of that one key, and
// singleflight.Group.DoChan does not tell its caller whether it started a new load or joined
// one already running: the caller learns which keys it must fetch only when its loaders run,
// one goroutine per key, asynchronously. To put several keys in one request, each loader would
// have to wait until the others of its call have started, but the call cannot know how many
// will start (the keys joined to another caller's flight never do), and waiting for them
// deadlocks when two calls each lead a key the other joined (A leads k1 and waits for k2, led
// by B, which waits for k1). Only a timed collection window (extra latency on every read, and
// a timeout to break the cycle) or a change to cache/ — a TTL.GetMany(ctx, keys,
// loadMany func(ctx, missing []string) (map[string]V, error)) that decides, under its own
// lock, which keys this call leads and which it waits for, exactly as getMany does below —
// would allow it. cache/ belongs to another package owner; until it has GetMany, the in-flight
// table here is that decision. Loading one key at a time through TTL.Get (as the stale
// refresh once did) loses the batching: N expired member lists cost N requests.
type bulkCache[V any] struct {
	store  cache.TTL[entry[V]]
	now    func() time.Time
	negTTL time.Duration // how long "not found" stays fresh; <= 0: never

	mu       sync.Mutex
	inflight map[string]*fetch[V]
}

// entry is a cached value; found is false for a key the service does not have (a user that
// does not exist).
type entry[V any] struct {
	v     V
	found bool
	at    time.Time
}

// fetch is one key being fetched.
type fetch[V any] struct {
	done chan struct{}
	e    entry[V]
	err  error
	// dropped is set when the key was invalidated while it was being fetched: the result may
	// predate the write that invalidated it, so it goes to the callers that were already
	// waiting but is not stored, and new callers fetch again.
	dropped bool
}

func newBulkCache[V any](ttl, negTTL time.Duration, staleWhile bool, now func() time.Time) *bulkCache[V] {
	c := &bulkCache[V]{now: now, negTTL: negTTL, inflight: map[string]*fetch[V]{}}
	c.store.TTL, c.store.StaleWhile, c.store.Now = ttl, staleWhile, now
	return c
}

// getMany returns the entries of keys. fetchFn is called at most once in the foreground, with
// the keys this call must fetch itself; it returns the values found (missing keys are "not
// found"). With StaleWhile, expired values found are returned as they are and fetchFn is
// called once more, in the background, for those not already being fetched.
func (c *bulkCache[V]) getMany(ctx context.Context, keys []string, fetchFn func(ctx context.Context, keys []string) (map[string]V, error)) (map[string]entry[V], error) {
	out := make(map[string]entry[V], len(keys))
	var mine, stale []string
	theirs := map[string]*fetch[V]{}
	own := map[string]*fetch[V]{}
	refresh := map[string]*fetch[V]{}
	c.mu.Lock()
	for _, k := range keys {
		if _, dup := out[k]; dup || own[k] != nil || theirs[k] != nil {
			continue
		}
		e, cached := c.store.Peek(k)
		if cached && c.fresh(e) {
			out[k] = e
			continue
		}
		f, busy := c.inflight[k]
		if cached && e.found && c.servesStale(e) {
			// Served stale at once; refreshed once, in the background.
			out[k] = e
			if !busy {
				f = &fetch[V]{done: make(chan struct{})}
				c.inflight[k] = f
				refresh[k] = f
				stale = append(stale, k)
			}
			continue
		}
		if busy {
			theirs[k] = f
			continue
		}
		f = &fetch[V]{done: make(chan struct{})}
		c.inflight[k] = f
		own[k] = f
		mine = append(mine, k)
	}
	c.mu.Unlock()

	if len(stale) > 0 {
		// Not tied to this caller: its cancellation must not fail the refresh for the others.
		bg := context.WithoutCancel(ctx)
		go func() {
			got, err := fetchFn(bg, stale)
			c.complete(stale, refresh, got, err)
			if err != nil && c.store.OnRefreshError != nil {
				for _, k := range stale {
					c.store.OnRefreshError(k, err)
				}
			}
		}()
	}

	if len(mine) > 0 {
		got, err := fetchFn(ctx, mine)
		for k, e := range c.complete(mine, own, got, err) {
			out[k] = e
		}
		if err != nil {
			return nil, err
		}
	}
	for k, f := range theirs {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil {
			return nil, f.err
		}
		out[k] = f.e
	}
	return out, nil
}

// complete records the result of a bulk fetch of keys (their fetches in fs): it stores the
// entries (unless a key was invalidated meanwhile), wakes the waiters and returns the
// entries.
func (c *bulkCache[V]) complete(keys []string, fs map[string]*fetch[V], got map[string]V, err error) map[string]entry[V] {
	now := c.now()
	out := make(map[string]entry[V], len(keys))
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		f := fs[k]
		if err != nil {
			f.err = err
		} else {
			v, ok := got[k]
			f.e = entry[V]{v: v, found: ok, at: now}
			out[k] = f.e
			if !f.dropped && (ok || c.negTTL > 0) {
				c.store.Set(k, f.e)
			}
		}
		if c.inflight[k] == f {
			delete(c.inflight, k)
		}
		close(f.done)
	}
	return out
}

// fresh reports whether a cached entry may be used without asking again: a value found for
// CacheTTL (zero: forever), "not found" for negTTL only.
func (c *bulkCache[V]) fresh(e entry[V]) bool {
	if !e.found {
		return c.negTTL > 0 && c.now().Before(e.at.Add(c.negTTL))
	}
	return c.store.TTL == 0 || c.now().Before(e.at.Add(c.store.TTL))
}

// servesStale reports whether an expired value found may be served while it is refreshed:
// with StaleWhile, up to MaxStale (default one TTL) past its expiry.
func (c *bulkCache[V]) servesStale(e entry[V]) bool {
	if !c.store.StaleWhile || c.store.TTL == 0 {
		return false
	}
	maxStale := c.store.MaxStale
	if maxStale == 0 {
		maxStale = c.store.TTL
	}
	return c.now().Before(e.at.Add(c.store.TTL + maxStale))
}

// set stores a value learnt on the side (a member read tells us a user's object ID).
func (c *bulkCache[V]) set(k string, v V) {
	c.store.Set(k, entry[V]{v: v, found: true, at: c.now()})
}

// peek returns a fresh entry without fetching.
func (c *bulkCache[V]) peek(k string) (entry[V], bool) {
	e, ok := c.store.Peek(k)
	if !ok || !c.fresh(e) {
		return entry[V]{}, false
	}
	return e, true
}

// invalidate drops k: the next read fetches it again, even if a fetch of it is running now
// (that fetch may have been answered before the write that invalidates k).
func (c *bulkCache[V]) invalidate(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.inflight[k]; f != nil {
		f.dropped = true
		delete(c.inflight, k)
	}
	c.store.Invalidate(k)
}
