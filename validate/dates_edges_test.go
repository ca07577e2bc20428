package validate

import (
	"testing"
	"time"
)

// December (month 12) is a month, in whole-file dates as in line dates.
func TestDecemberDates(t *testing.T) {
	for _, s := range []string{"2026-12-31", "20261231", "2026-1231", "202612-31"} {
		d, err := ParseFileDate(s)
		if err != nil || d.Time() != time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC) {
			t.Errorf("ParseFileDate(%q) = %v, %v", s, d, err)
		}
	}
	if _, err := ParseFileDate("2026-13-01"); err == nil {
		t.Error("month 13 accepted")
	}
	if d, err := ParseLineDate("2026-12-31"); err != nil || d.String() != "2026-12-31" {
		t.Errorf("ParseLineDate(2026-12-31) = %v, %v", d, err)
	}
}
