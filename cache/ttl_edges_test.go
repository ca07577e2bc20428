package cache

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// Boundary tests written from mutation testing (issue 15): expiry instants are exclusive (a
// value is not fresh at exactly its expiry, a stale value not served at exactly the end of
// its window), and DN keys are normalised on every entry point.

func TestTTLNotFreshAtExpiryInstant(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	var n atomic.Int32
	load := func(context.Context) (int, error) { return int(n.Add(1)), nil }
	c := &TTL[int]{TTL: time.Minute, Now: func() time.Time { return now }}
	ctx := context.Background()
	c.Get(ctx, "k", load)
	now = t0.Add(time.Minute - time.Nanosecond)
	if v, _ := c.Get(ctx, "k", load); v != 1 {
		t.Errorf("reloaded 1ns before expiry: %d", v)
	}
	now = t0.Add(time.Minute)
	if v, _ := c.Get(ctx, "k", load); v != 2 {
		t.Errorf("served at exactly its expiry instant: %d", v)
	}
	if c.Loads() != 2 {
		t.Errorf("%d loads, want 2", c.Loads())
	}
}

func TestTTLZeroNeverExpires(t *testing.T) {
	now := time.Unix(0, 0)
	var n atomic.Int32
	c := &TTL[int]{Now: func() time.Time { return now }}
	load := func(context.Context) (int, error) { return int(n.Add(1)), nil }
	c.Get(context.Background(), "k", load)
	now = now.Add(1000 * time.Hour)
	if v, _ := c.Get(context.Background(), "k", load); v != 1 || c.Loads() != 1 {
		t.Errorf("a zero TTL expired: %d after %d loads", v, c.Loads())
	}
}

func TestTTLStaleWindowEnd(t *testing.T) {
	t0 := time.Unix(0, 0)
	for _, tc := range []struct {
		name     string
		maxStale time.Duration
		end      time.Duration // past t0: expiry (1m) + window
	}{
		{"default window: one TTL", 0, 2 * time.Minute},
		{"MaxStale", 10 * time.Second, time.Minute + 10*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, at := range []time.Duration{tc.end - time.Nanosecond, tc.end} {
				now := t0
				var n atomic.Int32
				load := func(context.Context) (int, error) { return int(n.Add(1)), nil }
				c := &TTL[int]{TTL: time.Minute, StaleWhile: true, MaxStale: tc.maxStale, Now: func() time.Time { return now }}
				c.Get(context.Background(), "k", load)
				now = t0.Add(at)
				v, _ := c.Get(context.Background(), "k", load)
				if stale := at < tc.end; (v == 1) != stale {
					t.Errorf("at t0+%v: got %d, want the stale value: %v", at, v, stale)
				}
				waitFor(t, "the refresh", func() bool { return c.Loads() == 2 })
			}
		})
	}
}

func TestBatchedExpiryInstants(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		c        func(now func() time.Time) *Batched[string]
		key      string // "hit" is found, "miss" is not
		at       time.Duration
		fetches  int64 // after a second call at t0+at
		wantStal bool  // the second call was answered with the old value
	}{
		{"found, 1ns before TTL", func(n func() time.Time) *Batched[string] { return &Batched[string]{TTL: time.Minute, Now: n} },
			"hit", time.Minute - time.Nanosecond, 1, true},
		{"found, at exactly TTL", func(n func() time.Time) *Batched[string] { return &Batched[string]{TTL: time.Minute, Now: n} },
			"hit", time.Minute, 2, false},
		{"not found, 1ns before NegativeTTL", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: time.Hour, NegativeTTL: time.Second, Now: n}
		}, "miss", time.Second - time.Nanosecond, 1, true},
		{"not found, at exactly NegativeTTL", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: time.Hour, NegativeTTL: time.Second, Now: n}
		}, "miss", time.Second, 2, false},
		{"not found, NegativeTTL 0: not cached", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: time.Hour, Now: n}
		}, "miss", 0, 2, false},
		{"stale window, 1ns before its end", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: time.Minute, StaleWhile: true, Now: n}
		}, "hit", 2*time.Minute - time.Nanosecond, 2, true},
		{"stale window, at its end", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: time.Minute, StaleWhile: true, Now: n}
		}, "hit", 2 * time.Minute, 2, false},
		{"MaxStale window, at its end", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: time.Minute, StaleWhile: true, MaxStale: time.Second, Now: n}
		}, "hit", time.Minute + time.Second, 2, false},
		{"MaxStale window, 1ns before its end", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: time.Minute, StaleWhile: true, MaxStale: time.Second, Now: n}
		}, "hit", time.Minute + time.Second - time.Nanosecond, 2, true},
		{"negative TTL: StaleWhile never serves", func(n func() time.Time) *Batched[string] {
			return &Batched[string]{TTL: -time.Minute, StaleWhile: true, MaxStale: time.Hour, Now: n}
		}, "hit", 0, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{t: t0}
			c := tc.c(clk.now)
			version := "v1"
			var calls atomic.Int32
			fetch := func(_ context.Context, keys []string) (map[string]string, error) {
				calls.Add(1)
				out := map[string]string{}
				for _, k := range keys {
					if k == "hit" {
						out[k] = version
					}
				}
				return out, nil
			}
			if _, err := c.GetMany(context.Background(), []string{tc.key}, fetch); err != nil {
				t.Fatal(err)
			}
			version = "v2"
			clk.advance(tc.at)
			if _, fresh := c.Peek(tc.key); fresh != (tc.fetches == 1) {
				t.Errorf("Peek at t0+%v: fresh = %v", tc.at, fresh)
			}
			got, err := c.GetMany(context.Background(), []string{tc.key}, fetch)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the fetches", func() bool { return c.Fetches() == tc.fetches })
			if tc.key == "hit" {
				if old := got["hit"].Value == "v1"; old != tc.wantStal {
					t.Errorf("second call got %q", got["hit"].Value)
				}
			}
			if _, ok := got[tc.key]; !ok || got[tc.key].Found != (tc.key == "hit") {
				t.Errorf("entry %+v", got[tc.key])
			}
		})
	}
}

func TestExistenceSpellings(t *testing.T) {
	for _, tc := range []struct{ mark, ask string }{
		{"cn=a,ou=Teams,dc=example,dc=com", "CN=A, OU=teams, DC=Example, DC=com"},
		{"CN=A , OU=Teams", "cn=a,ou=teams"},
	} {
		var e Existence
		e.Mark(tc.mark)
		if !e.Exists(tc.ask) || !e.Exists(tc.mark) {
			t.Errorf("Mark(%q) then Exists(%q) = false", tc.mark, tc.ask)
		}
		if e.Exists("cn=b,ou=teams") {
			t.Error("another DN is known")
		}
		e.Forget(tc.ask)
		if e.Exists(tc.mark) {
			t.Errorf("Forget(%q) did not forget %q", tc.ask, tc.mark)
		}
	}
	var e Existence
	e.Forget("cn=x") // on the zero value
	if e.Exists("cn=x") {
		t.Error("zero value knows a DN")
	}
}

func TestPredictiveFormat(t *testing.T) {
	dir := t.TempDir()
	if err := writeState(dir, "cn=empty,ou=x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cn=empty,ou=x")); string(b) != "# No members\n" {
		t.Errorf("empty group file %q", b)
	}
	if err := writeState(dir, "cn=t,ou=x", []string{"Bob", "alice"}, map[string]any{"z": "1", "a": "2"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cn=t,ou=x")); string(b) != "alice\nbob\nmetadata_a=2\nmetadata_z=1\n" {
		t.Errorf("group file %q", b)
	}
	// A DN that cannot be a file name as it is gets its encoded name (it once was refused).
	for odd, name := range map[string]string{"cn=a/b,ou=x": "%cn=a%2Fb,ou=x", "cn=a\x00,ou=x": "%cn=a%00,ou=x"} {
		if err := writeState(dir, odd, []string{"zed"}, nil); err != nil {
			t.Errorf("writeState(%q): %v", odd, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "zed\n" {
			t.Errorf("writeState(%q) wrote %q to %s", odd, b, name)
		}
	}
	// Hidden files and directories are not groups; values are trimmed and lower-cased.
	os.WriteFile(filepath.Join(dir, ".hidden"), []byte("x\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "cn=sub,ou=x"), 0o755)
	os.WriteFile(filepath.Join(dir, "cn=m,ou=x"), []byte("  METADATA_Parent=Eng  \n  # comment\n   \n Carol \n"), 0o644)
	p, err := LoadPredictive(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.entries) != 5 {
		t.Errorf("entries %v", p.entries)
	}
	if e, ok := p.Lookup("cn=a/b,ou=x"); !ok || !slices.Equal(e.Members, []string{"zed"}) {
		t.Errorf("encoded file name not read back: %+v", e)
	}
	e, ok := p.Lookup("cn=m,ou=x")
	if !ok || !slices.Equal(e.Members, []string{"carol"}) || len(e.Metadata) != 1 || e.Metadata["parent"] != "eng" {
		t.Errorf("entry %+v", e)
	}
	var nilP *Predictive
	if _, ok := nilP.Lookup("cn=m,ou=x"); ok {
		t.Error("nil cache served an entry")
	}
	nilP.Invalidate("cn=m,ou=x") // must not panic
	if _, ok := p.Lookup("cn=unknown,ou=x"); ok {
		t.Error("unknown group served")
	}
	// An unreadable file fails the load (a cache that silently skips files is wrong state).
	if os.Geteuid() != 0 {
		os.WriteFile(filepath.Join(dir, "cn=locked,ou=x"), []byte("a\n"), 0o000)
		if _, err := LoadPredictive(dir); err == nil {
			t.Error("unreadable state file ignored")
		}
	}
}

func TestTTLSetOnTheZeroValue(t *testing.T) {
	now := time.Unix(0, 0)
	c := TTL[int]{TTL: time.Minute, Now: func() time.Time { return now }}
	c.Set("k", 7)
	if v, ok := c.Peek("k"); !ok || v != 7 {
		t.Fatalf("Peek after Set: %d %v", v, ok)
	}
	if v, err := c.Get(context.Background(), "k", func(context.Context) (int, error) { return 8, nil }); err != nil || v != 7 || c.Loads() != 0 {
		t.Errorf("Get after Set: %d %v, %d loads", v, err, c.Loads())
	}
	now = now.Add(time.Minute) // a value Set expires like a loaded one
	if v, _ := c.Get(context.Background(), "k", func(context.Context) (int, error) { return 8, nil }); v != 8 {
		t.Errorf("Set value served after its TTL: %d", v)
	}
}

// writeState writes a group's state file as the audit log and apply do.
func writeState(dir, groupDN string, members []string, metadata map[string]any) error {
	return os.WriteFile(filepath.Join(dir, FileNameFromDN(groupDN)), StateFile(members, metadata), 0o644)
}
