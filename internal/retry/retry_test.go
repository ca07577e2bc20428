package retry

import (
	"testing"
	"time"
)

func TestAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{" 7 ", 7 * time.Second, true},
		{"0", 0, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{"Wed, 02 Dec 2026 12:01:30 GMT", 90 * time.Second, true},
		{"Wed, 02 Dec 2026 11:00:00 GMT", 0, true},
	} {
		got, ok := After(tc.in, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("After(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	base, ceiling := time.Second, 10*time.Second
	for _, tc := range []struct {
		attempt int
		jitter  float64
		want    time.Duration
	}{
		{1, 0, 500 * time.Millisecond},
		{1, 0.5, 750 * time.Millisecond},
		{2, 0, time.Second},
		{3, 0.999, 2*time.Second + time.Duration(0.999*float64(2*time.Second))},
		{5, 0, 5 * time.Second}, // 16 s capped at 10 s
		{200, 0, 5 * time.Second},
		{0, 0, 500 * time.Millisecond},
	} {
		if got := Backoff(base, ceiling, tc.attempt, tc.jitter); got != tc.want {
			t.Errorf("Backoff(attempt %d, jitter %v) = %v, want %v", tc.attempt, tc.jitter, got, tc.want)
		}
	}
}
