package github

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The slots of consecutive writes (each sent as soon as allowed) for each budget alone and
// combined, in seconds from the first.
func TestWriteSlots(t *testing.T) {
	for _, tc := range []struct {
		name   string
		b      writeBudget
		invite []bool // which writes are invitations (default none)
		n      int
		want   []float64
	}{
		{"spacing", writeBudget{interval: time.Second}, nil, 4, []float64{0, 1, 2, 3}},
		{"minute window", writeBudget{interval: time.Second, perMinute: 3}, nil, 7, []float64{0, 1, 2, 60, 61, 62, 120}},
		{"hour window", writeBudget{perHour: 2}, nil, 5, []float64{0, 0, 3600, 3600, 7200}},
		{"both windows", writeBudget{interval: 10 * time.Second, perMinute: 2, perHour: 3}, nil, 5, []float64{0, 10, 60, 3600, 3610}},
		{"invitation spacing", writeBudget{interval: time.Second, inviteInterval: 3 * time.Second},
			[]bool{true, false, true, true, false}, 5, []float64{0, 1, 3, 6, 7}},
		{"off", writeBudget{}, nil, 3, []float64{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l writeLog
			t0 := time.Unix(1000, 0)
			now := t0
			var got []float64
			for i := range tc.n {
				inv := i < len(tc.invite) && tc.invite[i]
				s, err := tc.b.slot(&l, now, inv, "acme")
				if err != nil {
					t.Fatal(err)
				}
				l.take(s, inv, "acme")
				now = s
				got = append(got, s.Sub(t0).Seconds())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("slots %v, want %v", got, tc.want)
			}
		})
	}
}

// The daily invitation budget refuses (never waits a day) and is per org.
func TestInvitationBudgetRefuses(t *testing.T) {
	b := writeBudget{invitationsPerDay: 2}
	var l writeLog
	now := time.Unix(0, 0)
	for range 2 {
		s, err := b.slot(&l, now, true, "acme")
		if err != nil {
			t.Fatal(err)
		}
		l.take(s, true, "acme")
	}
	if _, err := b.slot(&l, now, true, "acme"); !errors.Is(err, ErrInvitationBudget) || !errors.Is(err, ErrInvitationLimit) {
		t.Fatalf("third invitation: %v", err)
	}
	if _, err := b.slot(&l, now, true, "other"); err != nil {
		t.Fatalf("another org's budget: %v", err)
	}
	if _, err := b.slot(&l, now, false, "acme"); err != nil {
		t.Fatalf("a write that is no invitation: %v", err)
	}
	if _, err := b.slot(&l, now.Add(24*time.Hour), true, "acme"); err != nil {
		t.Fatalf("a day later: %v", err)
	}
}

// EstimateWrites with the defaults: 450 writes an hour, 1 s apart.
func TestEstimateWrites(t *testing.T) {
	for _, tc := range []struct {
		c    WriteCounts
		opt  Options
		want time.Duration
	}{
		{WriteCounts{}, Options{}, 0},
		{WriteCounts{Writes: 1}, Options{}, 0},
		{WriteCounts{Writes: 450}, Options{}, 449 * time.Second},
		{WriteCounts{Writes: 451}, Options{}, time.Hour},
		{WriteCounts{Writes: 2000}, Options{}, 4*time.Hour + 199*time.Second},
		{WriteCounts{Writes: 10, Invitations: 10}, Options{}, 27 * time.Second},
		{WriteCounts{Writes: 2000}, Options{NoWritePacing: true}, 0},
		{WriteCounts{Writes: 100}, Options{WritesPerHour: -1, WritesPerMinute: -1}, 99 * time.Second},
		// Invitations past the daily budget are not sent: no time.
		{WriteCounts{Writes: 10, Invitations: 10}, Options{InvitationsPerDay: 5, InviteInterval: -1}, 4 * time.Second},
	} {
		if got := EstimateWrites(tc.c, tc.opt); got != tc.want {
			t.Errorf("EstimateWrites(%+v): %s, want %s", tc.c, got, tc.want)
		}
	}
}

// The windows survive in the state file; an unreadable file is reported and replaced, never
// fatal.
func TestWriteLogFile(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(10_000, 0)
	clock := func() time.Time { return now }
	b := writeBudget{perHour: 2}
	s1 := &scheduler{budget: b, path: filepath.Join(dir, budgetFile), now: clock}
	s1.mu.Lock()
	l := s1.log("k")
	l.take(now, true, "acme")
	l.take(now, false, "")
	if err := s1.save(); err != nil {
		t.Fatal(err)
	}
	s1.mu.Unlock()

	s2 := &scheduler{budget: b, path: s1.path, now: clock}
	s2.mu.Lock()
	got, err := b.slot(s2.log("k"), now, false, "")
	s2.mu.Unlock()
	if err != nil || s2.loadErr != nil || !got.Equal(now.Add(time.Hour)) {
		t.Fatalf("after a reload the next slot is %v (%v, %v), want an hour later", got, err, s2.loadErr)
	}
	if n := len(s2.logs["k"].Invitations["acme"]); n != 1 {
		t.Fatalf("invitations reloaded: %d", n)
	}

	os.WriteFile(s1.path, []byte("{not json"), 0o600)
	s3 := &scheduler{budget: b, path: s1.path, now: clock}
	s3.mu.Lock()
	got, _ = b.slot(s3.log("k"), now, false, "")
	s3.mu.Unlock()
	if s3.loadErr == nil || !got.Equal(now) {
		t.Fatalf("a broken file: %v, slot %v", s3.loadErr, got)
	}

	// A state file planted as a link to a file outside the directory (here a full write log)
	// is refused, not read: the windows start empty.
	outside := filepath.Join(t.TempDir(), "elsewhere.json")
	s1.mu.Lock()
	if err := s1.save(); err != nil {
		t.Fatal(err)
	}
	s1.mu.Unlock()
	if err := os.Rename(s1.path, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, s1.path); err != nil {
		t.Fatal(err)
	}
	s4 := &scheduler{budget: b, path: s1.path, now: clock}
	s4.mu.Lock()
	got, _ = b.slot(s4.log("k"), now, false, "")
	s4.mu.Unlock()
	if s4.loadErr == nil || !got.Equal(now) {
		t.Fatalf("a state file linked out of its directory: %v, slot %v (want refused, empty windows)", s4.loadErr, got)
	}
}

// A slot given back leaves the windows and spacings as if it had never been taken, for a
// write and for an invitation.
func TestGiveSlotBack(t *testing.T) {
	b := writeBudget{interval: time.Second, inviteInterval: 3 * time.Second, perMinute: 3, invitationsPerDay: 2}
	for _, invite := range []bool{false, true} {
		var l writeLog
		t0 := time.Unix(1000, 0)
		for i := range 2 {
			s, err := b.slot(&l, t0, i == 0, "acme")
			if err != nil {
				t.Fatal(err)
			}
			l.take(s, i == 0, "acme")
		}
		before := func() (time.Time, error) { return b.slot(&l, t0, invite, "acme") }
		want, wantErr := before()
		s, err := b.slot(&l, t0, invite, "acme")
		if err != nil {
			t.Fatal(err)
		}
		l.take(s, invite, "acme")
		l.give(s, invite, "acme")
		got, gotErr := before()
		if !got.Equal(want) || (gotErr == nil) != (wantErr == nil) || len(l.Writes) != 2 || len(l.Invitations["acme"]) != 1 {
			t.Fatalf("invite=%v: after giving the slot back the next is %v (%v), want %v (%v); log %+v", invite, got, gotErr, want, wantErr, l)
		}
		if !l.lastWrite.Equal(t0.Add(time.Second)) || !l.lastInvite.Equal(t0) {
			t.Fatalf("invite=%v: last write %v, last invitation %v", invite, l.lastWrite, l.lastInvite)
		}
	}
}
