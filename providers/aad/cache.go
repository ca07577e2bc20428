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
//   - with StaleWhile, an expired value is returned at once and cache.TTL refreshes it in
//     the background, once per key (singleflight), however many callers ask.
//
// cache.TTL stores the values; its Get is used for the stale-while-revalidate refresh only,
// because its loader fetches one key at a time and the bulk path must not.
type bulkCache[V any] struct {
	store cache.TTL[entry[V]]
	now   func() time.Time

	mu       sync.Mutex
	inflight map[string]*fetch[V]
}

// entry is a cached value; found is false for a key the service does not have (a user that
// does not exist is remembered too, so that plan and apply do not ask twice).
type entry[V any] struct {
	v     V
	found bool
	at    time.Time
}

type fetch[V any] struct {
	done chan struct{}
	e    entry[V]
	err  error
}

func newBulkCache[V any](ttl time.Duration, staleWhile bool, now func() time.Time) *bulkCache[V] {
	c := &bulkCache[V]{now: now, inflight: map[string]*fetch[V]{}}
	c.store.TTL, c.store.StaleWhile, c.store.Now = ttl, staleWhile, now
	return c
}

// getMany returns the entries of keys. fetchFn is called at most once, with the keys this
// call must fetch itself; it returns the values found (missing keys are "not found").
func (c *bulkCache[V]) getMany(ctx context.Context, keys []string, fetchFn func(ctx context.Context, keys []string) (map[string]V, error)) (map[string]entry[V], error) {
	out := make(map[string]entry[V], len(keys))
	var mine []string
	var theirs = map[string]*fetch[V]{}
	var stale []string
	own := map[string]*fetch[V]{}
	c.mu.Lock()
	for _, k := range keys {
		if _, dup := out[k]; dup || own[k] != nil || theirs[k] != nil {
			continue
		}
		if e, ok := c.store.Peek(k); ok {
			if c.fresh(e) {
				out[k] = e
				continue
			}
			if c.store.StaleWhile {
				out[k] = e
				stale = append(stale, k)
				continue
			}
		}
		if f, ok := c.inflight[k]; ok {
			theirs[k] = f
			continue
		}
		f := &fetch[V]{done: make(chan struct{})}
		c.inflight[k] = f
		own[k] = f
		mine = append(mine, k)
	}
	c.mu.Unlock()

	for _, k := range stale {
		// Returns the stale value at once; cache.TTL refreshes it in the background, once.
		_, _ = c.store.Get(ctx, k, func(ctx context.Context) (entry[V], error) {
			got, err := fetchFn(ctx, []string{k})
			if err != nil {
				return entry[V]{}, err
			}
			v, ok := got[k]
			return entry[V]{v: v, found: ok, at: c.now()}, nil
		})
	}

	var ferr error
	if len(mine) > 0 {
		got, err := fetchFn(ctx, mine)
		now := c.now()
		c.mu.Lock()
		for _, k := range mine {
			f := own[k]
			if err != nil {
				f.err = err
			} else {
				v, ok := got[k]
				f.e = entry[V]{v: v, found: ok, at: now}
				c.store.Set(k, f.e)
				out[k] = f.e
			}
			delete(c.inflight, k)
			close(f.done)
		}
		c.mu.Unlock()
		ferr = err
	}
	if ferr != nil {
		return nil, ferr
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

func (c *bulkCache[V]) fresh(e entry[V]) bool {
	return c.store.TTL == 0 || c.now().Before(e.at.Add(c.store.TTL))
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

func (c *bulkCache[V]) invalidate(k string) { c.store.Invalidate(k) }
