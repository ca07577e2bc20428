// Package retry is how the providers wait before resending a request: the server's
// Retry-After when it gives one, else an exponential backoff with jitter. The GitHub and
// Microsoft Graph providers share it, so the two cannot come to read a header differently.
package retry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// After parses a Retry-After value, delay-seconds or an HTTP-date (RFC 9110, section 10.2.3),
// relative to now. A date in the past is a wait of 0. ok is false when v is empty, negative
// or neither form, so that the caller falls back to its own backoff.
func After(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Backoff is the wait before retry number attempt (1-based) when the server named none: base
// doubled per attempt up to ceiling, then jittered into [half, whole) by jitter in [0, 1), so
// that the retries of concurrent requests spread out instead of arriving together.
func Backoff(base, ceiling time.Duration, attempt int, jitter float64) time.Duration {
	d := base << min(max(attempt-1, 0), 30)
	if d > ceiling || d <= 0 {
		d = ceiling
	}
	return d/2 + time.Duration(jitter*float64(d/2))
}
