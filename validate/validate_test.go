package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseLineDate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" with ok: no expiration
		err  string // substring of the error; "" = no error
	}{
		{in: "", want: ""},
		{in: "2024-06-15", want: "2024-06-15"},
		{in: "1999-12-31", want: "1999-12-31"},
		{in: "0001-01-01", want: "0001-01-01"},
		{in: "0000-01-01", want: "0000-01-01"},
		{in: "9999-12-31", want: "9999-12-31"},
		// Day 29-31 beyond the end of the month rolls over.
		{in: "2099-02-30", want: "2099-03-02"},
		{in: "2099-02-29", want: "2099-03-01"},
		{in: "2024-02-29", want: "2024-02-29"},
		{in: "2024-02-30", want: "2024-03-01"},
		{in: "2024-04-31", want: "2024-05-01"},
		{in: "2024-12-31", want: "2024-12-31"},
		{in: "2099-13-01", err: "month"},
		{in: "2099-00-01", err: "month"},
		{in: "2099-99-01", err: "month"},
		{in: "2099-01-00", err: "day"},
		{in: "2099-01-32", err: "day"},
		{in: "2099-02-99", err: "day"},
		{in: "2099-1-01", err: "YYYY-MM-DD"},
		{in: "2099-01-1", err: "YYYY-MM-DD"},
		{in: "20990101", err: "YYYY-MM-DD"},
		{in: "2099/01/01", err: "YYYY-MM-DD"},
		{in: " 2099-01-01", err: "YYYY-MM-DD"},
		{in: "2099-01-01 ", err: "YYYY-MM-DD"},
		{in: "2099-01-01T00:00:00Z", err: "YYYY-MM-DD"},
		{in: "+099-01-01", err: "YYYY-MM-DD"},
		{in: "-099-01-01", err: "YYYY-MM-DD"},
		{in: "2099-+1-01", err: "YYYY-MM-DD"},
		{in: "abcd-ef-gh", err: "YYYY-MM-DD"},
		{in: "２０９９-01-01", err: "YYYY-MM-DD"},
		{in: " ", err: "YYYY-MM-DD"},
	} {
		d, err := ParseLineDate(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseLineDate(%q) = %v, %v; want error containing %q", c.in, d, err, c.err)
			}
		case err != nil:
			t.Errorf("ParseLineDate(%q): %v", c.in, err)
		case d.String() != c.want || d.IsZero() != (c.want == ""):
			t.Errorf("ParseLineDate(%q) = %q (zero %v), want %q", c.in, d, d.IsZero(), c.want)
		}
	}
}

func TestParseFileDate(t *testing.T) {
	for _, c := range []struct {
		in, want string
		err      string
	}{
		{in: "2024-06-15", want: "2024-06-15"},
		{in: "20240615", want: "2024-06-15"},
		{in: "2024-0615", want: "2024-06-15"},
		{in: "202406-15", want: "2024-06-15"},
		{in: "2024-02-29", want: "2024-02-29"},
		{in: "00010101", want: "0001-01-01"},
		// No rollover for whole-file dates.
		{in: "2099-02-30", err: "invalid date"},
		{in: "2023-02-29", err: "invalid date"},
		{in: "2024-04-31", err: "invalid date"},
		{in: "2024-13-01", err: "invalid date"},
		{in: "2024-00-10", err: "invalid date"},
		{in: "2024-01-00", err: "invalid date"},
		{in: "20241301", err: "invalid date"},
		{in: "", err: "unsupported"},
		{in: "2024-6-15", err: "unsupported"},
		{in: "2024-06-1", err: "unsupported"},
		{in: "2024/06/15", err: "unsupported"},
		{in: "2024.06.15", err: "unsupported"},
		{in: "15-06-2024", err: "unsupported"},
		{in: "2024061", err: "unsupported"},
		{in: "202406150", err: "unsupported"},
		{in: "2024-06-15 ", err: "unsupported"},
		{in: "June 2024", err: "unsupported"},
		{in: "2024--0615", err: "unsupported"},
		{in: "abcdefgh", err: "unsupported"},
	} {
		d, err := ParseFileDate(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseFileDate(%q) = %v, %v; want error containing %q", c.in, d, err, c.err)
			}
		case err != nil:
			t.Errorf("ParseFileDate(%q): %v", c.in, err)
		case d.String() != c.want || d.IsZero():
			t.Errorf("ParseFileDate(%q) = %q, want %q", c.in, d, c.want)
		}
	}
}

func TestDateReached(t *testing.T) {
	today := Today(time.Date(2024, 6, 15, 23, 59, 59, 0, time.UTC))
	if today != NewDate(2024, 6, 15) || today.String() != "2024-06-15" || !today.Time().Equal(time.Date(2024, 6, 15, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("Today = %v", today)
	}
	// Today uses the UTC date of the instant.
	if got := Today(time.Date(2024, 6, 15, 1, 0, 0, 0, time.FixedZone("+05", 5*3600))); got != NewDate(2024, 6, 14) {
		t.Errorf("Today(+05 01:00) = %v", got)
	}
	for _, c := range []struct {
		d    Date
		want bool
	}{
		{NewDate(2024, 6, 14), true},
		{NewDate(2024, 6, 15), true}, // expired on the day itself
		{NewDate(2024, 6, 16), false},
		{NewDate(1, 1, 1), true}, // the zero time.Time, but a real date
		{NewDate(2024, 2, 30), true},
		{Date{}, false}, // no expiration
	} {
		if got := c.d.Reached(today); got != c.want {
			t.Errorf("%v.Reached(%v) = %v, want %v", c.d, today, got, c.want)
		}
	}
	if !(Date{}).IsZero() || NewDate(1, 1, 1).IsZero() || (Date{}).String() != "" {
		t.Error("zero Date")
	}
	if !NewDate(2024, 1, 1).Before(NewDate(2024, 1, 2)) || NewDate(2024, 1, 2).Before(NewDate(2024, 1, 2)) {
		t.Error("Before")
	}
	// NewDate normalises like time.Date.
	if NewDate(2024, 2, 30) != NewDate(2024, 3, 1) {
		t.Error("NewDate does not normalise")
	}
}

func TestParseNow(t *testing.T) {
	got, err := ParseNow("2024-06-15")
	if err != nil || !got.Equal(time.Date(2024, 6, 15, 0, 0, 0, 0, time.UTC)) || got.Location() != time.UTC {
		t.Errorf("ParseNow = %v, %v", got, err)
	}
	for _, bad := range []string{"", "2024-6-15", "2024-02-30", "20240615", "now"} {
		if _, err := ParseNow(bad); err == nil || !strings.Contains(err.Error(), "YYYY-MM-DD") {
			t.Errorf("ParseNow(%q) = %v", bad, err)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{&Error{Path: "a/x.txt", Line: 3, Msg: "bad"}, "a/x.txt:3: bad"},
		{&Error{Path: "a/x.txt", Msg: "bad"}, "a/x.txt: bad"},
		{&Error{Path: "a/x.txt", Line: -1, Msg: "bad"}, "a/x.txt: bad"},
		{&Error{Line: 3, Msg: "bad"}, "bad"},
		{&Error{Msg: "bad"}, "bad"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v.Error() = %q, want %q", c.e, got, c.want)
		}
	}
	if got := (Warning{Path: "c.yaml", Line: 2, Msg: "w"}).String(); got != "c.yaml:2: w" {
		t.Errorf("Warning.String() = %q", got)
	}
	l := List{{Path: "a", Line: 1, Msg: "x"}, {Msg: "y"}}
	if l.Error() != "a:1: x\ny" {
		t.Errorf("List.Error() = %q", l.Error())
	}
}

func TestErrorUnwrap(t *testing.T) {
	cause := &fs.PathError{Op: "open", Path: "p", Err: fs.ErrNotExist}
	l := List{{Path: "a", Kind: KindConfig, Msg: "x"}, {Path: "b", Kind: KindIO, Msg: "y", Err: cause}}
	var err error = l
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("errors.Is does not reach the cause")
	}
	var e *Error
	if !errors.As(err, &e) || e.Path != "a" {
		t.Errorf("errors.As found %+v", e)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != cause {
		t.Error("errors.As does not reach the *PathError")
	}
	if !slices.Equal(l.Kinds(), []Kind{KindConfig, KindIO}) {
		t.Errorf("Kinds %v", l.Kinds())
	}
	if ks := (List{{Kind: KindIO}, {Kind: KindConfig}, {Kind: KindIO}}).Kinds(); !slices.Equal(ks, []Kind{KindIO, KindConfig}) {
		t.Errorf("Kinds keeps first appearance, dedups: %v", ks)
	}
}

func TestHasKind(t *testing.T) {
	l := List{{Kind: KindCircular}, {Kind: KindFilter}}
	single := &Error{Kind: KindPeople}
	for _, c := range []struct {
		name string
		err  error
		kind Kind
		want bool
	}{
		{"list, first", l, KindCircular, true},
		{"list, second", l, KindFilter, true},
		{"list, absent", l, KindPeople, false},
		{"wrapped list", fmt.Errorf("load: %w", l), KindFilter, true},
		{"single error", single, KindPeople, true},
		{"single error, other kind", single, KindConfig, false},
		{"wrapped single", fmt.Errorf("x: %w", single), KindPeople, true},
		{"joined", errors.Join(errors.New("a"), single), KindPeople, true},
		{"plain error", errors.New("people"), KindPeople, false},
		{"nil", nil, KindPeople, false},
		{"empty list", List{}, KindPeople, false},
	} {
		if got := HasKind(c.err, c.kind); got != c.want {
			t.Errorf("%s: HasKind(%v, %q) = %v, want %v", c.name, c.err, c.kind, got, c.want)
		}
	}
}

func TestCollector(t *testing.T) {
	var c Collector
	if c.Err() != nil || c.Len() != 0 || len(c.Warnings()) != 0 {
		t.Fatal("zero Collector is not empty")
	}
	c.Add("b.txt", 2, KindTextFile, "second %d", 2)
	c.Add("a.txt", 10, KindTextFile, "late")
	c.Add("a.txt", 2, KindTextFile, "zeta")
	c.Add("a.txt", 2, KindMetadata, "alpha")
	c.AddError(&Error{Path: "a.txt", Line: 2, Kind: KindMetadata, Msg: "alpha"}) // duplicate
	c.Add("", 0, KindConfig, "no path")
	c.Add("a.txt", 2, KindTextFile, "zeta") // duplicate, not adjacent when added
	if c.Len() != 7 {
		t.Errorf("Len %d, want 7 (before dedup)", c.Len())
	}
	var l List
	if !errors.As(c.Err(), &l) {
		t.Fatalf("Err() = %T", c.Err())
	}
	var got []string
	for _, e := range l {
		got = append(got, e.Error())
	}
	want := []string{"no path", "a.txt:2: alpha", "a.txt:2: zeta", "a.txt:10: late", "b.txt:2: second 2"}
	if !slices.Equal(got, want) {
		t.Errorf("Err() order %q, want %q", got, want)
	}
	// Err returns a copy: sorting it does not reorder later results.
	l[0], l[1] = l[1], l[0]
	if c.Err().(List)[0].Msg != "no path" {
		t.Error("Err() shares its backing array")
	}

	c.Warn("z", 1, "w1")
	c.Warn("a", 5, "w2 %s", "x")
	c.Warn("a", 1, "w3")
	var ws []string
	for _, w := range c.Warnings() {
		ws = append(ws, w.String())
	}
	if !slices.Equal(ws, []string{"a:1: w3", "a:5: w2 x", "z:1: w1"}) {
		t.Errorf("warnings %q", ws)
	}
}

func TestCollectorConcurrent(t *testing.T) {
	var c Collector
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Add(fmt.Sprintf("f%02d", i), i, KindIO, "e")
			c.Warn("w", i, "w")
			_ = c.Len()
		}()
	}
	wg.Wait()
	if l := c.Err().(List); len(l) != 50 || l[0].Path != "f00" || l[49].Path != "f49" {
		t.Errorf("%d errors", len(l))
	}
	if len(c.Warnings()) != 50 {
		t.Errorf("%d warnings", len(c.Warnings()))
	}
}
