package providers

import "testing"

// ReportRead passes the progress on when someone listens, and is a no-op otherwise (written
// from mutation testing, issue 15: deploy's tests reach it, this package's did not).
func TestReportRead(t *testing.T) {
	var got []ReadProgress
	tg := &Target{Progress: func(p ReadProgress) { got = append(got, p) }}
	tg.ReportRead(ReadProgress{Groups: 3})
	tg.ReportRead(ReadProgress{Groups: 5, Total: 9})
	if len(got) != 2 || got[0] != (ReadProgress{Groups: 3}) || got[1] != (ReadProgress{Groups: 5, Total: 9}) {
		t.Errorf("progress %v", got)
	}
	var none *Target
	none.ReportRead(ReadProgress{Groups: 1}) // must not panic
	(&Target{}).ReportRead(ReadProgress{Groups: 1})
}
