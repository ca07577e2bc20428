package validate

import (
	"fmt"
	"time"
)

// Date is a civil date in UTC. Expirations are date-based: an item dated D is expired from
// D 00:00 UTC on, so a date compares with "today" and never with a time of day.
type Date struct {
	t time.Time
	// set distinguishes a real date from the zero value: 0001-01-01 is the zero time.Time but
	// a valid (long expired) date.
	set bool
}

// NewDate builds a date, normalising out-of-range days the way time.Date does.
func NewDate(y int, m time.Month, d int) Date {
	return Date{t: time.Date(y, m, d, 0, 0, 0, 0, time.UTC), set: true}
}

// Today is the UTC date of t.
func Today(t time.Time) Date {
	t = t.UTC()
	return NewDate(t.Year(), t.Month(), t.Day())
}

// IsZero reports whether d is the zero date (no expiration).
func (d Date) IsZero() bool { return !d.set }

// Reached reports whether the date has come on day today (expired from its first second on).
func (d Date) Reached(today Date) bool { return d.set && !today.t.Before(d.t) }

// Before reports whether d is strictly before o.
func (d Date) Before(o Date) bool { return d.t.Before(o.t) }

func (d Date) String() string {
	if !d.set {
		return ""
	}
	return d.t.Format(time.DateOnly)
}

// Time returns midnight UTC of the date.
func (d Date) Time() time.Time { return d.t }

func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// ParseLineDate parses a per-line, per-rule or filter-item expiration. The format is exactly
// NNNN-NN-NN. Like the reference implementation, day 29-31 beyond the end of the month rolls
// over into the next month (2099-02-30 is 2099-03-02); month 0/13+, day 0 and day 32+ are
// errors. An empty string is "no expiration" (zero Date, nil error).
func ParseLineDate(s string) (Date, error) {
	if s == "" {
		return Date{}, nil
	}
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, fmt.Errorf("expected format: YYYY-MM-DD")
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	switch {
	case !ok1 || !ok2 || !ok3:
		return Date{}, fmt.Errorf("expected format: YYYY-MM-DD")
	case m < 1 || m > 12:
		return Date{}, fmt.Errorf("month out of range")
	case d < 1:
		return Date{}, fmt.Errorf("day out of range")
	case d > 31:
		return Date{}, fmt.Errorf("day out of range")
	}
	return NewDate(y, time.Month(m), d), nil
}

// ParseFileDate parses a whole-file expiration: YYYY-MM-DD, YYYYMMDD, YYYY-MMDD or YYYYMM-DD.
// Impossible calendar dates are errors here (no rollover), as in the reference.
func ParseFileDate(s string) (Date, error) {
	var ys, ms, ds string
	switch {
	case len(s) == 10 && s[4] == '-' && s[7] == '-':
		ys, ms, ds = s[0:4], s[5:7], s[8:10]
	case len(s) == 8:
		ys, ms, ds = s[0:4], s[4:6], s[6:8]
	case len(s) == 9 && s[4] == '-':
		ys, ms, ds = s[0:4], s[5:7], s[7:9]
	case len(s) == 9 && s[6] == '-':
		ys, ms, ds = s[0:4], s[4:6], s[7:9]
	default:
		return Date{}, fmt.Errorf("unsupported date format")
	}
	y, ok1 := digits(ys)
	m, ok2 := digits(ms)
	d, ok3 := digits(ds)
	if !ok1 || !ok2 || !ok3 {
		return Date{}, fmt.Errorf("unsupported date format")
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || d < 1 || t.Day() != d {
		return Date{}, fmt.Errorf("invalid date")
	}
	return Date{t: t, set: true}, nil
}

// ParseNow parses a --now flag value (YYYY-MM-DD) into a time at midnight UTC.
func ParseNow(s string) (time.Time, error) {
	t, err := time.ParseInLocation(time.DateOnly, s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid date %q (expected YYYY-MM-DD): %w", s, err)
	}
	return t, nil
}
