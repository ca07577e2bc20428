package cache

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"
)

// Batched is a cache of values that are fetched many keys at a time (one bulk request
// answers many keys: a $batch of 20 member lists, an `in` filter of 15 names), with the
// per-key guarantees of TTL and without losing the batching:
//
//   - a key that is fresh in the cache costs nothing;
//   - a key that another caller is fetching right now is waited for, not fetched again
//     (concurrent reads of the same key share one fetch);
//   - the remaining keys of a call (the keys it leads) are fetched together, in one call of
//     its fetch function;
//   - with StaleWhile, an expired value is returned at once and refreshed in the background,
//     once per key however many callers ask, the expired keys of a call in one bulk fetch; a
//     value more than MaxStale (default one TTL) past its expiry is not served but waited for
//     like a miss, and a failed refresh is told to OnRefreshError (the stale value stays);
//   - Invalidate during a fetch drops that fetch's answer for the key: the callers already
//     waiting for it get it, but it is not stored, and later callers fetch the key again (the
//     answer may predate the write that invalidated the key).
//
// "Not found" answers (keys the fetch function left out of its result) are cached too, as
// entries with Found false, but only for NegativeTTL: a long-running embedder must see a key
// created since, and never act on a stale "not found". They are never served stale. Errors are
// not cached: every caller of the failed fetch gets the error (unless it failed because its
// leader's context ended: see GetMany), and the next call fetches again.
//
// # No deadlock
//
// A call decides, under the cache's lock and in one step, which keys it leads (it fetches
// them) and which it waits for (another call leads them), and it fetches the keys it leads
// before it waits for any other. So GetMany never waits while its call holds keys others may
// be waiting for, and calls that wait for each other only through GetMany always finish,
// whatever their key sets. This holds too when two calls each lead a key the other wants,
// which happens when a fetch needs another key of the same cache: A leads k1 and wants k2; B
// leads k2, and its fetch calls GetMany for k1. A fetches k1 before it waits for k2, which lets
// B's fetch, then B, then A finish.
//
// What GetMany cannot prevent is a cycle through fetch functions: a bulk fetch holds all its
// keys until it returns, so two fetches that each wait (through a nested GetMany on this
// cache, or on another cache whose fetch comes back to this one) for a key in the other's
// batch deadlock, even if no key depends on itself. A fetch may wait for keys of its own
// cache only if a fetch that waits never holds a key that another fetch waits for: for
// example, base keys that need nothing, and keys that need only base keys (a fetch of both
// computes the second from the first without waiting). Values learnt on the side go in with
// Set, which never waits.
//
// # Why not TTL.Get (singleflight) per key
//
// TTL.Get takes one key and a loader of that one key, and singleflight does not tell its
// caller whether it started a new load or joined one already running: the caller learns which
// keys it must fetch only when its loaders run, one goroutine per key, asynchronously. To put
// several keys in one request, each loader would have to wait until the others of its call
// have started, but the call cannot know how many will start (the keys joined to another
// caller's flight never do), and waiting for them deadlocks when two calls each lead a key the
// other joined. Only a timed collection window (latency on every read, and a timeout to break
// the cycle) would allow it. Batched keeps its own in-flight table instead, so that one lock
// decides the leaders, as described above. Loading one key at a time loses the batching: N
// expired keys would cost N requests instead of one.
//
// The zero value is ready to use: no expiry, "not found" not cached. Set the fields before the
// first call and do not change them afterwards. Entries are dropped only by Invalidate (like
// TTL, this is a cache for one run or for a bounded key space, not an LRU).
type Batched[V any] struct {
	// TTL is how long a value found stays fresh. Zero: forever; negative: never (every call
	// fetches, concurrent calls still share fetches).
	TTL time.Duration
	// NegativeTTL is how long a "not found" answer stays fresh. Zero or negative: "not found"
	// is not cached.
	NegativeTTL time.Duration
	// StaleWhile serves expired values found while refreshing them in the background (only
	// with a positive TTL).
	StaleWhile bool
	// MaxStale bounds how long past its expiry a value may still be served with StaleWhile;
	// older values are waited for like a miss. Default (0): one TTL.
	MaxStale time.Duration
	// OnRefreshError is told, for each key, about a failed background refresh (the stale
	// value stays and is served until it is too old).
	OnRefreshError func(key string, err error)
	// Now is the clock (tests inject one). Default time.Now.
	Now func() time.Time

	mu       sync.Mutex
	items    map[string]Entry[V]
	inflight map[string]*flight[V]
	fetches  int64
	// claimed, when set (tests only), is called by every GetMany once it has decided which
	// keys it leads and which it waits for.
	claimed func()
}

// Entry is the cached answer for one key.
type Entry[V any] struct {
	// Value is the value fetched (the zero value when Found is false).
	Value V
	// Found is false for a key the fetch function did not return: the source does not have
	// it (a user that does not exist).
	Found bool
	// At is when the answer was fetched (or Set).
	At time.Time
}

// flight is one key being fetched.
type flight[V any] struct {
	done chan struct{}
	e    Entry[V]
	err  error
	// canceled is set when the fetch failed after its leader's context was done: the error is
	// the leader's, not the key's, so the callers waiting for the key fetch it themselves.
	canceled bool
	// dropped is set when the key was invalidated while it was being fetched: the answer goes
	// to the callers already waiting but is not stored.
	dropped bool
}

// ErrFetchPanicked is the error the callers waiting for a key get when the fetch of that key
// panicked in another caller (the panic itself goes on in the caller that fetched).
var ErrFetchPanicked = errors.New("cache: fetch panicked")

func (c *Batched[V]) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// GetMany returns the entries of keys: one per distinct key, Found or not. Fresh entries come
// from the cache; keys another call is fetching are waited for; the other missing or expired
// keys are passed to fetch together, in the order of their first appearance in keys, in one
// call. fetch returns the values it found; keys it leaves out are "not found", and keys it was
// not asked for are ignored.
//
// fetch is called in the foreground at most once (and once more for the retry below), with
// ctx, and GetMany waits for the keys of other calls only after it returns. With StaleWhile, expired values found are returned as
// they are, and fetch is called once more, in the background with a context that is not
// cancelled with ctx, for those not already being fetched.
//
// An error of fetch, or ctx ending while GetMany waits, fails the whole call (nil map). A call
// that waits for a key whose leader's fetch failed because the leader's context ended fetches
// that key itself: one caller's cancellation does not fail the others.
func (c *Batched[V]) GetMany(ctx context.Context, keys []string, fetch func(ctx context.Context, missing []string) (map[string]V, error)) (map[string]Entry[V], error) {
	out := make(map[string]Entry[V], len(keys))
	var mine, stale []string
	own := map[string]*flight[V]{}
	refresh := map[string]*flight[V]{}
	theirs := map[string]*flight[V]{}
	now := c.now()
	c.mu.Lock()
	for _, k := range keys {
		if _, dup := out[k]; dup || own[k] != nil || theirs[k] != nil {
			continue
		}
		e, cached := c.items[k]
		if cached && c.fresh(e, now) {
			out[k] = e
			continue
		}
		f, busy := c.inflight[k]
		if cached && e.Found && c.servesStale(e, now) {
			// Served stale at once; refreshed once, in the background.
			out[k] = e
			if !busy {
				refresh[k] = c.start(k)
				stale = append(stale, k)
			}
			continue
		}
		if busy {
			theirs[k] = f
			continue
		}
		own[k] = c.start(k)
		mine = append(mine, k)
	}
	c.mu.Unlock()
	if c.claimed != nil {
		c.claimed()
	}

	if len(stale) > 0 {
		// Not tied to this caller: its cancellation must not fail the refresh for the others.
		bg := context.WithoutCancel(ctx)
		go func() {
			if _, err := c.run(bg, stale, refresh, fetch); err != nil && c.OnRefreshError != nil {
				for _, k := range stale {
					c.OnRefreshError(k, err)
				}
			}
		}()
	}

	// The keys this call leads first: others may be waiting for them (see "No deadlock").
	if len(mine) > 0 {
		got, err := c.run(ctx, mine, own, fetch)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, got)
	}
	var retry []string
	for k, f := range theirs {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err != nil {
			if f.canceled && ctx.Err() == nil {
				retry = append(retry, k)
				continue
			}
			return nil, f.err
		}
		out[k] = f.e
	}
	if len(retry) > 0 {
		// A new call: it holds no key, so it may wait like any other.
		got, err := c.GetMany(ctx, retry, fetch)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, got)
	}
	return out, nil
}

// start registers a fetch of k led by the caller. c.mu is held.
func (c *Batched[V]) start(k string) *flight[V] {
	if c.inflight == nil {
		c.inflight = map[string]*flight[V]{}
	}
	f := &flight[V]{done: make(chan struct{})}
	c.inflight[k] = f
	return f
}

// run fetches keys (whose flights are fs) and completes their flights, even if fetch panics.
func (c *Batched[V]) run(ctx context.Context, keys []string, fs map[string]*flight[V], fetch func(context.Context, []string) (map[string]V, error)) (map[string]Entry[V], error) {
	returned := false
	defer func() {
		if !returned {
			c.complete(keys, fs, nil, ErrFetchPanicked, false)
		}
	}()
	got, err := fetch(ctx, keys)
	returned = true
	return c.complete(keys, fs, got, err, err != nil && ctx.Err() != nil), err
}

// complete records the answer of a bulk fetch of keys (their flights in fs): it stores the
// entries (unless a key was invalidated meanwhile, or is "not found" and those are not
// cached), wakes the waiters and returns the entries (nil on error).
func (c *Batched[V]) complete(keys []string, fs map[string]*flight[V], got map[string]V, err error, canceled bool) map[string]Entry[V] {
	now := c.now()
	var out map[string]Entry[V]
	if err == nil {
		out = make(map[string]Entry[V], len(keys))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetches++
	for _, k := range keys {
		f := fs[k]
		if err != nil {
			f.err, f.canceled = err, canceled
		} else {
			v, ok := got[k]
			f.e = Entry[V]{Value: v, Found: ok, At: now}
			out[k] = f.e
			if !f.dropped && (ok || c.NegativeTTL > 0) {
				c.store(k, f.e)
			}
		}
		if c.inflight[k] == f {
			delete(c.inflight, k)
		}
		close(f.done)
	}
	return out
}

// store stores an entry. c.mu is held.
func (c *Batched[V]) store(k string, e Entry[V]) {
	if c.items == nil {
		c.items = map[string]Entry[V]{}
	}
	c.items[k] = e
}

// fresh reports whether a cached entry may be used without asking again: a value found for
// TTL, "not found" for NegativeTTL.
func (c *Batched[V]) fresh(e Entry[V], now time.Time) bool {
	if !e.Found {
		return c.NegativeTTL > 0 && now.Before(e.At.Add(c.NegativeTTL))
	}
	return c.TTL == 0 || now.Before(e.At.Add(c.TTL))
}

// servesStale reports whether an expired value found may be served while it is refreshed.
func (c *Batched[V]) servesStale(e Entry[V], now time.Time) bool {
	if !c.StaleWhile || c.TTL <= 0 {
		return false
	}
	return now.Before(e.At.Add(c.TTL + staleWindow(c.TTL, c.MaxStale)))
}

// staleWindow is how long past its expiry a value may be served with StaleWhile.
func staleWindow(ttl, maxStale time.Duration) time.Duration {
	if maxStale == 0 {
		return ttl
	}
	return maxStale
}

// Peek returns the entry of key if it is fresh (a fresh "not found" included), without
// fetching.
func (c *Batched[V]) Peek(key string) (Entry[V], bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok || !c.fresh(e, now) {
		return Entry[V]{}, false
	}
	return e, true
}

// Set stores a value learnt on the side (a member list names its members' user IDs), found
// and fetched now.
func (c *Batched[V]) Set(key string, v V) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(key, Entry[V]{Value: v, Found: true, At: now})
}

// Invalidate drops key: the next GetMany fetches it again, even if a fetch of it is running
// now (that fetch may have been answered before the write that invalidates key; its answer
// still goes to the callers already waiting for it, but is not stored).
func (c *Batched[V]) Invalidate(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f := c.inflight[key]; f != nil {
		f.dropped = true
		delete(c.inflight, key)
	}
	delete(c.items, key)
}

// Fetches is the number of completed calls of fetch functions, foreground and background
// (tests assert coalescing and batching with it).
func (c *Batched[V]) Fetches() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches
}
