package cache

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// TTL is a cache of values loaded on demand. Concurrent Gets of a missing or expired key share
// one load (singleflight), so a cache refresh is never done twice at once. With StaleWhile set,
// an expired value is returned at once while one background load refreshes it (for
// long-running embedders that prefer a slightly old answer to waiting). A zero TTL means
// "never expires" (one load per key for the life of the cache, e.g. one run).
//
// TTL loads one key at a time. Values that are fetched many keys per request (a bulk or
// batched API) belong in Batched, which coalesces per key in the same way without losing the
// batching.
type TTL[V any] struct {
	// TTL is how long a loaded value is fresh. Zero: forever.
	TTL time.Duration
	// StaleWhile serves expired values while refreshing them in the background.
	StaleWhile bool
	// MaxStale bounds how long past its expiry a value may still be served with StaleWhile;
	// older values wait for a load like a miss. Default (0): one TTL.
	MaxStale time.Duration
	// OnRefreshError is told about failed background refreshes (the stale value stays).
	OnRefreshError func(key string, err error)
	// Now is the clock (tests inject one). Default time.Now.
	Now func() time.Time

	mu    sync.Mutex
	items map[string]ttlItem[V]
	// gen counts invalidations per key: a load that started before an Invalidate must not
	// store its (possibly stale) answer after it.
	gen   map[string]uint64
	group singleflight.Group
	loads int64
}

type ttlItem[V any] struct {
	v       V
	expires time.Time
}

func (c *TTL[V]) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Get returns the value of key, calling load when it is missing or expired. The load runs
// with its own context so that one caller's cancellation does not fail the others waiting on
// the same load; each caller still stops waiting when its ctx is done.
func (c *TTL[V]) Get(ctx context.Context, key string, load func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	it, ok := c.items[key]
	c.mu.Unlock()
	now := c.now()
	fresh := ok && (c.TTL == 0 || now.Before(it.expires))
	if fresh {
		return it.v, nil
	}
	if ok && c.StaleWhile && now.Before(it.expires.Add(staleWindow(c.TTL, c.MaxStale))) {
		go c.refresh(key, load)
		return it.v, nil
	}
	ch := c.group.DoChan(key, func() (any, error) { return c.load(key, load) })
	select {
	case r := <-ch:
		if r.Err != nil {
			var zero V
			return zero, r.Err
		}
		return r.Val.(V), nil
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

func (c *TTL[V]) refresh(key string, load func(context.Context) (V, error)) {
	_, err, _ := c.group.Do(key, func() (any, error) { return c.load(key, load) })
	if err != nil && c.OnRefreshError != nil {
		c.OnRefreshError(key, err)
	}
}

func (c *TTL[V]) load(key string, load func(context.Context) (V, error)) (any, error) {
	c.mu.Lock()
	gen := c.gen[key]
	c.mu.Unlock()
	v, err := load(context.WithoutCancel(context.Background()))
	c.mu.Lock()
	c.loads++
	if err == nil && c.gen[key] == gen {
		if c.items == nil {
			c.items = map[string]ttlItem[V]{}
		}
		c.items[key] = ttlItem[V]{v: v, expires: c.now().Add(c.TTL)}
	}
	c.mu.Unlock()
	return v, err
}

// Peek returns a cached value without loading (fresh or not).
func (c *TTL[V]) Peek(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[key]
	return it.v, ok
}

// Set stores a value (e.g. one read as part of a bulk request).
func (c *TTL[V]) Set(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string]ttlItem[V]{}
	}
	c.items[key] = ttlItem[V]{v: v, expires: c.now().Add(c.TTL)}
}

// Invalidate drops key, so the next Get loads it again.
func (c *TTL[V]) Invalidate(key string) {
	c.mu.Lock()
	delete(c.items, key)
	if c.gen == nil {
		c.gen = map[string]uint64{}
	}
	c.gen[key]++
	c.mu.Unlock()
	c.group.Forget(key)
}

// Loads is the number of loads performed (tests assert coalescing with it).
func (c *TTL[V]) Loads() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loads
}
