package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestExistence(t *testing.T) {
	var e Existence
	if e.Exists("ou=a,dc=x") {
		t.Fatal("empty memo knows a DN")
	}
	e.Mark("OU=A, dc=X")
	if !e.Exists("ou=a,dc=x") {
		t.Error("normalised DN not found")
	}
	e.Forget("ou=a,dc=x")
	if e.Exists("OU=A,dc=x") {
		t.Error("forgotten DN still known")
	}
}

func TestTTLCoalescesConcurrentLoads(t *testing.T) {
	var c TTL[int]
	var calls atomic.Int32
	release := make(chan struct{})
	load := func(context.Context) (int, error) {
		calls.Add(1)
		<-release
		return 42, nil
	}
	var wg sync.WaitGroup
	results := make([]int, 10)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Get(context.Background(), "k", load)
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		}()
	}
	time.Sleep(20 * time.Millisecond) // let every caller join the in-flight load
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("%d loads for 10 concurrent callers, want 1", n)
	}
	for _, v := range results {
		if v != 42 {
			t.Errorf("result %d", v)
		}
	}
	// Cached: no further load.
	if v, _ := c.Get(context.Background(), "k", load); v != 42 || calls.Load() != 1 {
		t.Error("second Get loaded again")
	}
}

func TestTTLExpiryAndStale(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	var n atomic.Int32
	load := func(context.Context) (int, error) { return int(n.Add(1)), nil }

	c := &TTL[int]{TTL: time.Minute, Now: clock}
	ctx := context.Background()
	if v, _ := c.Get(ctx, "k", load); v != 1 {
		t.Fatalf("first load %d", v)
	}
	now = now.Add(30 * time.Second)
	if v, _ := c.Get(ctx, "k", load); v != 1 {
		t.Errorf("fresh value reloaded: %d", v)
	}
	now = now.Add(time.Minute)
	if v, _ := c.Get(ctx, "k", load); v != 2 {
		t.Errorf("expired value not reloaded: %d", v)
	}

	s := &TTL[int]{TTL: time.Minute, Now: clock, StaleWhile: true}
	n.Store(0)
	s.Get(ctx, "k", load)
	now = now.Add(90 * time.Second) // expired, within MaxStale (one TTL by default)
	if v, _ := s.Get(ctx, "k", load); v != 1 {
		t.Errorf("stale-while-revalidate did not serve the stale value: %d", v)
	}
	deadline := time.Now().Add(2 * time.Second)
	for s.Loads() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if v, _ := s.Peek("k"); v != 2 {
		t.Errorf("background refresh did not store the new value: %d", v)
	}
}

func TestTTLErrorsAreNotCached(t *testing.T) {
	var c TTL[int]
	boom := errors.New("boom")
	if _, err := c.Get(context.Background(), "k", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if v, err := c.Get(context.Background(), "k", func(context.Context) (int, error) { return 7, nil }); err != nil || v != 7 {
		t.Errorf("after an error: %d %v", v, err)
	}
	c.Invalidate("k")
	if _, ok := c.Peek("k"); ok {
		t.Error("invalidated key still cached")
	}
}

func TestTTLCallerCancellation(t *testing.T) {
	var c TTL[int]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	block := make(chan struct{})
	defer close(block)
	if _, err := c.Get(ctx, "k", func(context.Context) (int, error) { <-block; return 1, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestPredictive(t *testing.T) {
	dir := t.TempDir()
	if err := writeState(dir, "cn=team,ou=GitHub,dc=x", []string{"Bob", "alice"}, map[string]any{"parent": "eng"}); err != nil {
		t.Fatal(err)
	}
	if err := writeState(dir, "cn=empty,ou=GitHub,dc=x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cn=dns,ou=x"), []byte("# c\nuid=Carol,ou=People\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPredictive(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := p.Lookup("CN=team, ou=github,dc=x")
	if !ok || !slices.Equal(e.Members, []string{"alice", "bob"}) || e.Metadata["parent"] != "eng" {
		t.Fatalf("entry %+v %v", e, ok)
	}
	if e, ok := p.Lookup("cn=empty,ou=GitHub,dc=x"); !ok || len(e.Members) != 0 {
		t.Errorf("empty entry %+v %v", e, ok)
	}
	if e, _ := p.Lookup("cn=dns,ou=x"); !slices.Equal(e.Members, []string{"carol"}) {
		t.Errorf("DN member not reduced: %v", e.Members)
	}
	p.Invalidate("cn=team,ou=github,dc=x")
	if _, ok := p.Lookup("cn=team,ou=GitHub,dc=x"); ok {
		t.Error("invalidated entry served")
	}
	if _, err := LoadPredictive(filepath.Join(dir, "nope")); err == nil {
		t.Error("missing directory accepted")
	}
}

func TestTTLInvalidateDuringLoad(t *testing.T) {
	var c TTL[int]
	started, release := make(chan struct{}), make(chan struct{})
	go c.Get(context.Background(), "k", func(context.Context) (int, error) {
		close(started)
		<-release
		return 1, nil // read before the invalidation: stale
	})
	<-started
	c.Invalidate("k")
	close(release)
	deadline := time.Now().Add(2 * time.Second)
	for c.Loads() < 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if v, ok := c.Peek("k"); ok {
		t.Errorf("a load that started before Invalidate stored %d", v)
	}
}

func TestTTLMaxStale(t *testing.T) {
	now := time.Unix(0, 0)
	var n atomic.Int32
	var refreshErrs atomic.Int32
	c := &TTL[int]{TTL: time.Minute, StaleWhile: true, MaxStale: time.Minute, Now: func() time.Time { return now },
		OnRefreshError: func(string, error) { refreshErrs.Add(1) }}
	load := func(context.Context) (int, error) { return int(n.Add(1)), nil }
	c.Get(context.Background(), "k", load)
	now = now.Add(10 * time.Minute) // far past expiry + MaxStale
	if v, _ := c.Get(context.Background(), "k", load); v != 2 {
		t.Errorf("a value older than MaxStale was served: %d", v)
	}
	now = now.Add(90 * time.Second) // expired, within MaxStale; the refresh fails
	if v, _ := c.Get(context.Background(), "k", func(context.Context) (int, error) { return 0, errors.New("down") }); v != 2 {
		t.Errorf("stale value not served: %d", v)
	}
	deadline := time.Now().Add(2 * time.Second)
	for refreshErrs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if refreshErrs.Load() == 0 {
		t.Error("failed refresh not reported")
	}
}
