package capped

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestBody(t *testing.T) {
	tooLarge := errors.New("too large")
	for _, tc := range []struct {
		body  string
		limit int64
		want  string
		err   error
	}{
		{"hello", 5, "hello", nil},
		{"hello", 10, "hello", nil},
		{"hello!", 5, "hello", tooLarge},
		{"hello", 0, "hello", nil},
		{"", 1, "", nil},
	} {
		got, err := io.ReadAll(Body(io.NopCloser(strings.NewReader(tc.body)), tc.limit, tooLarge))
		if string(got) != tc.want || !errors.Is(err, tc.err) && err != tc.err {
			t.Errorf("%q limit %d: %q, %v; want %q, %v", tc.body, tc.limit, got, err, tc.want, tc.err)
		}
	}
}
