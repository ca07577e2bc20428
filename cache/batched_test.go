package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// source is a fake bulk service: it records every fetch, answers "<key>@<fetch number>" for
// every key but the absent ones, and can hold its answers until gate is closed (or the
// fetch's ctx ends) or fail them all.
type source struct {
	mu     sync.Mutex
	calls  [][]string
	ctxErr []error // ctx.Err() of each fetch when it started
	gate   chan struct{}
	absent map[string]bool
	err    error
}

func (s *source) fetch(ctx context.Context, keys []string) (map[string]string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, slices.Clone(keys))
	s.ctxErr = append(s.ctxErr, ctx.Err())
	n := len(s.calls)
	gate, err := s.gate, s.err
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for _, k := range keys {
		if !s.absent[k] {
			out[k] = fmt.Sprintf("%s@%d", k, n)
		}
	}
	return out, nil
}

func (s *source) set(f func(s *source)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *source) fetched() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// clock is a settable clock, safe for the background refreshes to read.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// countClaims makes c count the calls that have decided which keys they lead and wait for.
func countClaims(c *Batched[string]) *atomic.Int32 {
	var n atomic.Int32
	c.claimed = func() { n.Add(1) }
	return &n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// values reduces entries to key -> value ("-" for not found).
func values(m map[string]Entry[string]) map[string]string {
	out := make(map[string]string, len(m))
	for k, e := range m {
		if e.Found {
			out[k] = e.Value
		} else {
			out[k] = "-"
		}
	}
	return out
}

func distinct(keys []string) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// TestBatchedCoalescing: concurrent calls with overlapping key sets, all claimed before any
// fetch answers, fetch every key exactly once, each call at most once, and every call gets
// every key it asked for.
func TestBatchedCoalescing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls [][]string
	}{
		{"one key, ten callers", slices.Repeat([][]string{{"k"}}, 10)},
		{"same set", slices.Repeat([][]string{{"a", "b", "c"}}, 6)},
		{"overlapping sets", [][]string{{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}, {"a", "b", "c", "d"}, {"b", "d"}, {"e"}}},
		{"duplicates in a call", [][]string{{"a", "a", "b"}, {"b", "b"}, {"a"}, {"c", "a", "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &source{gate: make(chan struct{})}
			var c Batched[string]
			claims := countClaims(&c)
			var wg sync.WaitGroup
			results := make([]map[string]Entry[string], len(tc.calls))
			for i, keys := range tc.calls {
				wg.Go(func() {
					got, err := c.GetMany(context.Background(), keys, src.fetch)
					if err != nil {
						t.Error(err)
					}
					results[i] = got
				})
			}
			waitFor(t, "every call to claim its keys", func() bool { return int(claims.Load()) == len(tc.calls) })
			close(src.gate)
			wg.Wait()

			perKey := map[string]int{}
			calls := src.fetched()
			for _, keys := range calls {
				if !slices.Equal(keys, distinct(keys)) {
					t.Errorf("fetch of duplicate keys %v", keys)
				}
				for _, k := range keys {
					perKey[k]++
				}
			}
			var union []string
			for _, keys := range tc.calls {
				union = distinct(append(union, keys...))
			}
			for _, k := range union {
				if perKey[k] != 1 {
					t.Errorf("key %s fetched %d times, want 1 (fetches %v)", k, perKey[k], calls)
				}
			}
			if len(calls) > len(tc.calls) || c.Fetches() != int64(len(calls)) {
				t.Errorf("%d fetches (Fetches() %d) for %d calls", len(calls), c.Fetches(), len(tc.calls))
			}
			for i, keys := range tc.calls {
				got := values(results[i])
				if len(got) != len(distinct(keys)) {
					t.Errorf("call %v got %v", keys, got)
				}
				for _, k := range keys {
					if !strings.HasPrefix(got[k], k+"@") {
						t.Errorf("call %v: %s = %q", keys, k, got[k])
					}
				}
			}
		})
	}
}

// TestBatchedBatching: the keys a call must fetch itself go to one fetch, in the order they
// were asked for: not the fresh ones, not the ones another call is fetching.
func TestBatchedBatching(t *testing.T) {
	many := make([]string, 300)
	for i := range many {
		many[i] = fmt.Sprintf("k%03d", i)
	}
	for _, tc := range []struct {
		name     string
		cached   []string // Set beforehand
		absent   []string // not found, fetched beforehand (cached for NegativeTTL)
		inflight []string // being fetched by another call
		keys     []string
		want     [][]string // fetches of the call
	}{
		{"all missing", nil, nil, nil, []string{"d", "a", "c", "b"}, [][]string{{"d", "a", "c", "b"}}},
		{"some cached", []string{"b", "d"}, nil, nil, []string{"a", "b", "c", "d"}, [][]string{{"a", "c"}}},
		{"not found cached", nil, []string{"x"}, nil, []string{"x", "y", "z"}, [][]string{{"y", "z"}}},
		{"some in flight", nil, nil, []string{"b", "z"}, []string{"a", "b", "c"}, [][]string{{"a", "c"}}},
		{"duplicates", nil, nil, nil, []string{"a", "b", "a", "c", "b"}, [][]string{{"a", "b", "c"}}},
		{"all cached or in flight", []string{"a"}, []string{"x"}, []string{"b"}, []string{"a", "b", "x"}, nil},
		{"300 keys", nil, nil, nil, many, [][]string{many}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Batched[string]{NegativeTTL: time.Minute}
			ctx := context.Background()
			for _, k := range tc.cached {
				c.Set(k, "set")
			}
			if len(tc.absent) > 0 {
				src := &source{absent: map[string]bool{}}
				for _, k := range tc.absent {
					src.absent[k] = true
				}
				if _, err := c.GetMany(ctx, tc.absent, src.fetch); err != nil {
					t.Fatal(err)
				}
			}
			other := &source{gate: make(chan struct{})}
			otherDone := make(chan error, 1)
			if len(tc.inflight) > 0 {
				go func() {
					_, err := c.GetMany(ctx, tc.inflight, other.fetch)
					otherDone <- err
				}()
				waitFor(t, "the other call's fetch", func() bool { return len(other.fetched()) == 1 })
			}
			src := &source{}
			claims := countClaims(&c)
			done := make(chan map[string]Entry[string], 1)
			go func() {
				got, err := c.GetMany(ctx, tc.keys, src.fetch)
				if err != nil {
					t.Error(err)
				}
				done <- got
			}()
			waitFor(t, "the call to claim", func() bool { return claims.Load() == 1 })
			if len(tc.inflight) > 0 {
				waitFor(t, "the call's own fetch", func() bool { return len(src.fetched()) == len(tc.want) })
				close(other.gate)
				if err := <-otherDone; err != nil {
					t.Fatal(err)
				}
			}
			got := values(<-done)
			if calls := src.fetched(); !slices.EqualFunc(calls, tc.want, slices.Equal) {
				t.Errorf("fetches %v, want %v", calls, tc.want)
			}
			for _, k := range tc.keys {
				want := k + "@1"
				switch {
				case slices.Contains(tc.cached, k):
					want = "set"
				case slices.Contains(tc.absent, k):
					want = "-"
				}
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			if len(got) != len(distinct(tc.keys)) {
				t.Errorf("got %d entries for %d keys", len(got), len(distinct(tc.keys)))
			}
		})
	}
}

// TestBatchedCrossingKeySets: A leads k1 and waits for k2, which B leads; B's fetch of k2 needs
// k1 (a nested GetMany, which waits for A's fetch of k1). A must fetch k1 before it waits for
// k2, or neither finishes. A's fetch is held until B's nested call has found k1 in flight, so
// every iteration crosses.
func TestBatchedCrossingKeySets(t *testing.T) {
	for i := range 200 {
		var c Batched[string]
		claims := countClaims(&c)
		await := func(n int32) error {
			deadline := time.Now().Add(5 * time.Second)
			for claims.Load() < n {
				if time.Now().After(deadline) {
					return fmt.Errorf("timed out waiting for %d claims", n)
				}
				time.Sleep(10 * time.Microsecond)
			}
			return nil
		}
		aFetch := func(ctx context.Context, keys []string) (map[string]string, error) {
			// Claims: B, A, then B's nested call for k1.
			if err := await(3); err != nil {
				return nil, err
			}
			return map[string]string{"k1": "v1"}, nil
		}
		bFetch := func(ctx context.Context, keys []string) (map[string]string, error) {
			if err := await(2); err != nil { // A has claimed k1 and found k2 in flight
				return nil, err
			}
			dep, err := c.GetMany(ctx, []string{"k1"}, func(context.Context, []string) (map[string]string, error) {
				return nil, errors.New("B fetched k1: A did not lead it")
			})
			if err != nil {
				return nil, err
			}
			return map[string]string{"k2": "v2 after " + dep["k1"].Value}, nil
		}
		bDone, aDone := make(chan error, 1), make(chan error, 1)
		var bGot, aGot map[string]Entry[string]
		go func() {
			var err error
			bGot, err = c.GetMany(context.Background(), []string{"k2"}, bFetch)
			bDone <- err
		}()
		waitFor(t, "B to lead k2", func() bool { return claims.Load() == 1 })
		go func() {
			var err error
			aGot, err = c.GetMany(context.Background(), []string{"k1", "k2"}, aFetch)
			aDone <- err
		}()
		for _, ch := range []chan error{aDone, bDone} {
			select {
			case err := <-ch:
				if err != nil {
					t.Fatalf("iteration %d: %v", i, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("iteration %d: deadlock", i)
			}
		}
		if aGot["k1"].Value != "v1" || aGot["k2"].Value != "v2 after v1" || bGot["k2"].Value != "v2 after v1" {
			t.Fatalf("A got %v, B got %v", aGot, bGot)
		}
		if n := c.Fetches(); n != 2 {
			t.Fatalf("%d fetches, want 2", n)
		}
	}
}

// TestBatchedCrossingStress: in many iterations, calls with random crossing key sets, fetches
// that need a key of the same cache (k2..k4 need k1, the case the No deadlock section of
// Batched allows), invalidations and cancelled callers: every call finishes, every call whose
// ctx is live gets consistent values, a cancelled one at most its ctx's error.
func TestBatchedCrossingStress(t *testing.T) {
	all := []string{"k1", "k2", "k3", "k4", "k5", "k6"}
	needs := map[string]string{"k2": "k1", "k3": "k1", "k4": "k1"}
	want := map[string]string{"k1": "k1", "k2": "k2<k1", "k3": "k3<k1", "k4": "k4<k1", "k5": "k5", "k6": "k6"}
	for i := range 500 {
		var c Batched[string]
		var fetch func(ctx context.Context, keys []string) (map[string]string, error)
		fetch = func(ctx context.Context, keys []string) (map[string]string, error) {
			if rand.IntN(2) == 0 {
				time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
			}
			out := map[string]string{}
			for _, k := range keys {
				out[k] = k
				if d, ok := needs[k]; ok {
					dv := d
					if !slices.Contains(keys, d) { // not in this batch: ask the cache
						got, err := c.GetMany(ctx, []string{d}, fetch)
						if err != nil {
							return nil, err
						}
						dv = got[d].Value
					}
					out[k] += "<" + dv
				}
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return out, nil
		}
		errs := make(chan error, 16)
		var wg sync.WaitGroup
		for g := range 10 {
			wg.Go(func() {
				keys := slices.Clone(all)
				rand.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
				keys = keys[:1+rand.IntN(len(keys))]
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				switch g % 5 {
				case 3:
					c.Invalidate(all[rand.IntN(len(all))])
				case 4:
					go func() {
						time.Sleep(time.Duration(rand.IntN(100)) * time.Microsecond)
						cancel()
					}()
				}
				got, err := c.GetMany(ctx, keys, fetch)
				if err != nil {
					if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
						errs <- fmt.Errorf("%v: %v (ctx %v)", keys, err, ctx.Err())
					}
					return
				}
				for _, k := range keys {
					if got[k].Value != want[k] {
						errs <- fmt.Errorf("%s = %q, want %q", k, got[k].Value, want[k])
					}
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("iteration %d: deadlock", i)
		}
		close(errs)
		for err := range errs {
			t.Fatalf("iteration %d: %v", i, err)
		}
	}
}

// TestBatchedInvalidateDuringFetch: a key invalidated while it is being fetched is not stored
// from that fetch (the answer may predate the write); the callers already waiting get it, and
// later callers fetch the key again.
func TestBatchedInvalidateDuringFetch(t *testing.T) {
	ctx := context.Background()
	t.Run("answer not stored", func(t *testing.T) {
		var c Batched[string]
		old := &source{gate: make(chan struct{})}
		done := make(chan error)
		go func() {
			_, err := c.GetMany(ctx, []string{"k"}, old.fetch)
			done <- err
		}()
		waitFor(t, "the fetch", func() bool { return len(old.fetched()) == 1 })
		c.Invalidate("k")
		close(old.gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if e, ok := c.Peek("k"); ok {
			t.Fatalf("stale value stored: %v", e)
		}
		got, err := c.GetMany(ctx, []string{"k"}, func(context.Context, []string) (map[string]string, error) {
			return map[string]string{"k": "new"}, nil
		})
		if err != nil || got["k"].Value != "new" {
			t.Fatalf("%v %v", got, err)
		}
	})
	t.Run("waiters get the old answer, later callers a new one", func(t *testing.T) {
		var c Batched[string]
		claims := countClaims(&c)
		old := &source{gate: make(chan struct{})}
		results := make(chan string, 2)
		for range 2 { // a leader and a waiter
			go func() {
				got, err := c.GetMany(ctx, []string{"k", "j"}, old.fetch)
				if err != nil {
					t.Error(err)
				}
				results <- got["k"].Value + " " + got["j"].Value
			}()
		}
		waitFor(t, "leader and waiter", func() bool { return claims.Load() == 2 })
		c.Invalidate("k")
		// A call after the Invalidate leads a new fetch of k (it does not wait for the old one).
		fresh := &source{gate: make(chan struct{})}
		newDone := make(chan string, 2)
		go func() {
			got, err := c.GetMany(ctx, []string{"k"}, fresh.fetch)
			if err != nil {
				t.Error(err)
			}
			newDone <- got["k"].Value
		}()
		waitFor(t, "the new fetch", func() bool { return len(fresh.fetched()) == 1 })
		// The old fetch ends first: its answer goes to its callers only.
		close(old.gate)
		for range 2 {
			if r := <-results; r != "k@1 j@1" {
				t.Errorf("caller got %q, want the old fetch's answer", r)
			}
		}
		if e, ok := c.Peek("k"); ok {
			t.Errorf("k = %+v: the old fetch stored its answer", e)
		}
		if e, _ := c.Peek("j"); e.Value != "j@1" {
			t.Errorf("j = %+v: a key not invalidated was not stored", e)
		}
		// Another caller still joins the new fetch.
		go func() {
			got, err := c.GetMany(ctx, []string{"k"}, fresh.fetch)
			if err != nil {
				t.Error(err)
			}
			newDone <- got["k"].Value
		}()
		waitFor(t, "the second new caller", func() bool { return claims.Load() == 4 })
		close(fresh.gate)
		for range 2 {
			if v := <-newDone; v != "k@1" {
				t.Errorf("new caller got %q", v)
			}
		}
		if n := len(fresh.fetched()); n != 1 {
			t.Errorf("%d new fetches, want 1", n)
		}
		if e, _ := c.Peek("k"); e.Value != "k@1" || !e.Found {
			t.Errorf("k = %+v after the new fetch", e)
		}
	})
}

// TestBatchedNegativeEntries: "not found" is cached for NegativeTTL only (not at all when it
// is zero), never served stale, and a key found later is seen once it expires.
func TestBatchedNegativeEntries(t *testing.T) {
	type step struct {
		advance time.Duration
		exists  bool // the source has the key now
		fetch   bool // the call fetches (in the foreground)
		want    string
	}
	for _, tc := range []struct {
		name  string
		cache *Batched[string]
		steps []step
	}{
		{"cached for NegativeTTL", &Batched[string]{NegativeTTL: time.Minute}, []step{
			{0, false, true, "-"},
			{30 * time.Second, true, false, "-"},
			{29 * time.Second, true, false, "-"},
			{time.Second, true, true, "k@2"}, // exactly NegativeTTL old: expired
			{time.Hour, false, false, "k@2"}, // found values are kept (TTL 0)
		}},
		{"not cached without NegativeTTL", &Batched[string]{}, []step{
			{0, false, true, "-"},
			{0, false, true, "-"},
			{0, true, true, "k@3"},
			{0, false, false, "k@3"},
		}},
		{"negative NegativeTTL", &Batched[string]{NegativeTTL: -time.Minute}, []step{
			{0, false, true, "-"},
			{0, false, true, "-"},
		}},
		{"never served stale", &Batched[string]{TTL: time.Minute, NegativeTTL: 10 * time.Second, StaleWhile: true}, []step{
			{0, false, true, "-"},
			{11 * time.Second, true, true, "k@2"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := tc.cache
			c.Now = clk.now
			src := &source{}
			for i, s := range tc.steps {
				clk.advance(s.advance)
				src.set(func(src *source) { src.absent = map[string]bool{"k": !s.exists} })
				before := len(src.fetched())
				got, err := c.GetMany(context.Background(), []string{"k"}, src.fetch)
				if err != nil {
					t.Fatal(err)
				}
				if v := values(got)["k"]; v != s.want {
					t.Errorf("step %d: k = %q, want %q", i, v, s.want)
				}
				if fetched := len(src.fetched()) > before; fetched != s.fetch {
					t.Errorf("step %d: fetched %v, want %v", i, fetched, s.fetch)
				}
				if e, ok := c.Peek("k"); ok != (s.want != "-" || c.NegativeTTL > 0) || (ok && values(map[string]Entry[string]{"k": e})["k"] != s.want) {
					t.Errorf("step %d: Peek = %+v %v", i, e, ok)
				}
			}
		})
	}
}

// TestBatchedStaleWhileRevalidate: with StaleWhile, an expired value is served at once and
// refreshed in the background, up to MaxStale (default one TTL) past its expiry; older values
// are fetched in the foreground.
func TestBatchedStaleWhileRevalidate(t *testing.T) {
	const (
		none = iota
		foreground
		background
	)
	type step struct {
		advance time.Duration
		how     int    // how the call gets its answer
		want    string // the value the call returns
	}
	for _, tc := range []struct {
		name  string
		cache *Batched[string]
		steps []step
	}{
		{"default MaxStale is one TTL", &Batched[string]{TTL: time.Minute, StaleWhile: true}, []step{
			{0, foreground, "k@1"},
			{59 * time.Second, none, "k@1"},
			{31 * time.Second, background, "k@1"}, // 90s: stale, refreshed at 90s
			{30 * time.Second, none, "k@2"},       // 30s after the refresh: fresh
			{90 * time.Second, foreground, "k@3"}, // exactly TTL+MaxStale: too old
			{90 * time.Second, background, "k@3"},
		}},
		{"explicit MaxStale", &Batched[string]{TTL: time.Minute, StaleWhile: true, MaxStale: 10 * time.Second}, []step{
			{0, foreground, "k@1"},
			{65 * time.Second, background, "k@1"},
			{75 * time.Second, foreground, "k@3"}, // refreshed at 65s; now 75s old
		}},
		{"without StaleWhile", &Batched[string]{TTL: time.Minute}, []step{
			{0, foreground, "k@1"},
			{90 * time.Second, foreground, "k@2"},
		}},
		{"StaleWhile without TTL never expires", &Batched[string]{StaleWhile: true}, []step{
			{0, foreground, "k@1"},
			{1000 * time.Hour, none, "k@1"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			c := tc.cache
			c.Now = clk.now
			src := &source{}
			for i, s := range tc.steps {
				clk.advance(s.advance)
				before := c.Fetches()
				got, err := c.GetMany(context.Background(), []string{"k"}, src.fetch)
				if err != nil {
					t.Fatal(err)
				}
				if got["k"].Value != s.want {
					t.Errorf("step %d: k = %q, want %q", i, got["k"].Value, s.want)
				}
				switch s.how {
				case none:
					if n := c.Fetches(); n != before {
						t.Errorf("step %d: %d fetches, want none", i, n-before)
					}
				case foreground:
					if n := c.Fetches(); n != before+1 {
						t.Errorf("step %d: %d fetches before returning, want 1", i, n-before)
					}
				case background:
					waitFor(t, "the background refresh", func() bool { return c.Fetches() == before+1 })
					if e, ok := c.Peek("k"); !ok || e.Value == s.want {
						t.Errorf("step %d: refresh not stored: %+v %v", i, e, ok)
					}
				}
			}
		})
	}
}

// TestBatchedStaleRefreshIsBatched: the expired keys of concurrent calls are refreshed once,
// the expired keys of a call in one background fetch, with a context the caller's
// cancellation does not reach, while every caller gets the stale values at once.
func TestBatchedStaleRefreshIsBatched(t *testing.T) {
	clk := newClock()
	c := Batched[string]{TTL: time.Minute, StaleWhile: true, Now: clk.now}
	src := &source{}
	keys := []string{"a", "b", "c", "d"}
	if _, err := c.GetMany(context.Background(), keys, src.fetch); err != nil {
		t.Fatal(err)
	}
	clk.advance(90 * time.Second)
	gate := make(chan struct{})
	src.set(func(s *source) { s.gate = gate })
	for i := range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		got, err := c.GetMany(ctx, keys[i%2:], src.fetch)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for k, e := range got {
			if e.Value != k+"@1" {
				t.Errorf("call %d: %s = %q, want the stale value", i, k, e.Value)
			}
		}
	}
	close(gate)
	waitFor(t, "the refresh", func() bool { return c.Fetches() == 2 })
	calls := src.fetched()
	if len(calls) != 2 || !slices.Equal(calls[1], keys) {
		t.Errorf("fetches %v, want one refresh of %v", calls, keys)
	}
	if src.ctxErr[1] != nil {
		t.Errorf("refresh context: %v", src.ctxErr[1])
	}
	for _, k := range keys {
		if e, ok := c.Peek(k); !ok || e.Value != k+"@2" {
			t.Errorf("%s = %+v %v after the refresh", k, e, ok)
		}
	}
}

// TestBatchedRefreshErrors: a failed background refresh is told to OnRefreshError for each
// key; the stale value stays and is served (and refreshed again) until it is too old, and
// then the error reaches the caller.
func TestBatchedRefreshErrors(t *testing.T) {
	clk := newClock()
	var mu sync.Mutex
	var reported []string
	c := Batched[string]{TTL: time.Minute, StaleWhile: true, Now: clk.now,
		OnRefreshError: func(key string, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, key+": "+err.Error())
		}}
	src := &source{}
	ctx := context.Background()
	if _, err := c.GetMany(ctx, []string{"a", "b"}, src.fetch); err != nil {
		t.Fatal(err)
	}
	src.set(func(s *source) { s.err = errors.New("down") })
	for i, advance := range []time.Duration{90 * time.Second, 20 * time.Second} {
		clk.advance(advance)
		got, err := c.GetMany(ctx, []string{"a", "b"}, src.fetch)
		if err != nil || got["a"].Value != "a@1" || got["b"].Value != "b@1" {
			t.Fatalf("step %d: stale values not served: %v %v", i, got, err)
		}
		waitFor(t, "the refresh error", func() bool { mu.Lock(); defer mu.Unlock(); return len(reported) == 2*(i+1) })
	}
	mu.Lock()
	slices.Sort(reported)
	if want := []string{"a: down", "a: down", "b: down", "b: down"}; !slices.Equal(reported, want) {
		t.Errorf("reported %v, want %v", reported, want)
	}
	mu.Unlock()
	if n := len(src.fetched()); n != 3 {
		t.Errorf("%d fetches, want 1 + 2 refreshes", n)
	}
	clk.advance(20 * time.Second) // 130s: past TTL + MaxStale
	if got, err := c.GetMany(ctx, []string{"a"}, src.fetch); err == nil || err.Error() != "down" {
		t.Errorf("too-stale value with a failing source: %v %v", got, err)
	}
}

// TestBatchedCancellation: a caller whose ctx ends stops waiting at once without failing the
// fetch it waited for; when a leader's ctx ends during its fetch, the callers waiting for its
// keys fetch them themselves. Errors reach every caller of the fetch and are not cached.
func TestBatchedCancellation(t *testing.T) {
	for _, tc := range []struct {
		name         string
		cancelLeader bool
		cancelWaiter bool
		fail         error
		leaderErr    error
		waiterErr    error
		waiterValue  string
		stored       string // value of k afterwards, "" for none
		fetches      int
	}{
		{name: "waiter's ctx ends", cancelWaiter: true, waiterErr: context.Canceled, stored: "k@1", fetches: 1},
		{name: "leader's ctx ends", cancelLeader: true, leaderErr: context.Canceled, waiterValue: "k@2", stored: "k@2", fetches: 2},
		{name: "both end", cancelLeader: true, cancelWaiter: true, leaderErr: context.Canceled, waiterErr: context.Canceled, fetches: 1},
		{name: "fetch fails", fail: errDown, leaderErr: errDown, waiterErr: errDown, fetches: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Batched[string]
			claims := countClaims(&c)
			src := &source{gate: make(chan struct{}), err: tc.fail}
			lctx, lcancel := context.WithCancel(context.Background())
			defer lcancel()
			wctx, wcancel := context.WithCancel(context.Background())
			defer wcancel()
			type result struct {
				got map[string]Entry[string]
				err error
			}
			leader, waiter := make(chan result, 1), make(chan result, 1)
			go func() {
				got, err := c.GetMany(lctx, []string{"k"}, src.fetch)
				leader <- result{got, err}
			}()
			waitFor(t, "the leader's fetch", func() bool { return len(src.fetched()) == 1 })
			go func() {
				got, err := c.GetMany(wctx, []string{"k"}, src.fetch)
				waiter <- result{got, err}
			}()
			waitFor(t, "the waiter", func() bool { return claims.Load() == 2 })
			if tc.cancelWaiter {
				wcancel()
				select {
				case r := <-waiter: // before the fetch answers
					waiter <- r
				case <-time.After(5 * time.Second):
					t.Fatal("the waiter did not stop waiting")
				}
			}
			if tc.cancelLeader {
				lcancel()
				if tc.waiterValue != "" {
					// The waiter's own fetch is held by the gate as well.
					waitFor(t, "the waiter's own fetch", func() bool { return len(src.fetched()) == 2 })
				}
			}
			close(src.gate)
			l, w := <-leader, <-waiter
			if !errors.Is(l.err, tc.leaderErr) || (tc.leaderErr == nil && l.got["k"].Value != "k@1") {
				t.Errorf("leader: %v %v, want %v", l.got, l.err, tc.leaderErr)
			}
			if !errors.Is(w.err, tc.waiterErr) || (tc.waiterValue != "" && w.got["k"].Value != tc.waiterValue) {
				t.Errorf("waiter: %v %v, want %q %v", w.got, w.err, tc.waiterValue, tc.waiterErr)
			}
			if e, ok := c.Peek("k"); ok != (tc.stored != "") || e.Value != tc.stored {
				t.Errorf("stored %+v %v, want %q", e, ok, tc.stored)
			}
			if n := len(src.fetched()); n != tc.fetches {
				t.Errorf("%d fetches, want %d", n, tc.fetches)
			}
			// Nothing failed is cached, nothing is left in flight.
			src.set(func(s *source) { s.err = nil })
			if got, err := c.GetMany(context.Background(), []string{"k"}, src.fetch); err != nil || !got["k"].Found {
				t.Errorf("afterwards: %v %v", got, err)
			}
		})
	}
}

var errDown = errors.New("down")

// TestBatchedFetchPanics: a panicking fetch releases the callers waiting for its keys with
// ErrFetchPanicked (the panic goes on in the caller that fetched), and leaves nothing in
// flight.
func TestBatchedFetchPanics(t *testing.T) {
	var c Batched[string]
	claims := countClaims(&c)
	gate := make(chan struct{})
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		c.GetMany(context.Background(), []string{"k"}, func(context.Context, []string) (map[string]string, error) {
			<-gate
			panic("boom")
		})
	}()
	waitFor(t, "the leader", func() bool { return claims.Load() == 1 })
	waiter := make(chan error, 1)
	go func() {
		_, err := c.GetMany(context.Background(), []string{"k"}, (&source{}).fetch)
		waiter <- err
	}()
	waitFor(t, "the waiter", func() bool { return claims.Load() == 2 })
	close(gate)
	if p := <-panicked; p != "boom" {
		t.Errorf("leader recovered %v", p)
	}
	select {
	case err := <-waiter:
		if !errors.Is(err, ErrFetchPanicked) {
			t.Errorf("waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not released")
	}
	if got, err := c.GetMany(context.Background(), []string{"k"}, (&source{}).fetch); err != nil || got["k"].Value != "k@1" {
		t.Errorf("afterwards: %v %v", got, err)
	}
}

// TestBatchedSetPeek: Set stores a found value (fresh for TTL); Peek never fetches and does
// not return expired entries.
func TestBatchedSetPeek(t *testing.T) {
	clk := newClock()
	c := Batched[string]{TTL: time.Minute, StaleWhile: true, Now: clk.now}
	if _, ok := c.Peek("k"); ok {
		t.Fatal("empty cache has k")
	}
	c.Set("k", "v")
	if e, ok := c.Peek("k"); !ok || !e.Found || e.Value != "v" || !e.At.Equal(clk.now()) {
		t.Errorf("Peek = %+v %v", e, ok)
	}
	got, err := c.GetMany(context.Background(), []string{"k"}, func(context.Context, []string) (map[string]string, error) {
		t.Error("fetched a value that was Set")
		return nil, nil
	})
	if err != nil || got["k"].Value != "v" {
		t.Errorf("GetMany = %v %v", got, err)
	}
	clk.advance(time.Minute)
	if e, ok := c.Peek("k"); ok {
		t.Errorf("expired entry peeked: %+v", e)
	}
	c.Invalidate("k")
	c.Invalidate("never there")
	if got, err := c.GetMany(context.Background(), nil, nil); err != nil || len(got) != 0 {
		t.Errorf("no keys: %v %v", got, err)
	}
}
