package calc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// writeMetadata must write what json.MarshalIndent writes, byte for byte, or nothing.
func TestWriteMetadataMatchesMarshalIndent(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    map[string]any
		fast bool
	}{
		{"strings", map[string]any{"owner": "alice", "app": "x"}, true},
		{"bools", map[string]any{"no_members_ok": true, "z": false}, true},
		{"html", map[string]any{"a<b>": "x & y", "q": `"quoted" \ back`}, true},
		{"control", map[string]any{"k": "tab\there\nnl\x01", "e": ""}, true},
		{"unicode", map[string]any{"ü": "日本\u2028", "bad": "\xff\xfe"}, true},
		{"del", map[string]any{"k": "a\x7fb"}, true},
		{"int falls back", map[string]any{"n": 3, "s": "x"}, false},
		{"float falls back", map[string]any{"f": 1.5}, false},
		{"list falls back", map[string]any{"l": []any{"a"}}, false},
		{"nil falls back", map[string]any{"n": nil}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.MarshalIndent(tc.m, "      ", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			w := bufio.NewWriter(&buf)
			keys := []string{"stale"}
			ok := writeMetadata(w, tc.m, &keys)
			w.Flush()
			if ok != tc.fast {
				t.Fatalf("writeMetadata = %v, want %v", ok, tc.fast)
			}
			if !ok {
				if buf.Len() != 0 {
					t.Fatalf("fell back after writing %q", buf.String())
				}
				return
			}
			if got := buf.String(); got != string(want) {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func FuzzWriteMetadata(f *testing.F) {
	f.Add("owner", "alice", "flag", true)
	f.Add("<&>", "\u2028\x00\xff", "", false)
	f.Fuzz(func(t *testing.T, k1, v1, k2 string, v2 bool) {
		m := map[string]any{k1: v1, k2: v2}
		want, err := json.MarshalIndent(m, "      ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		var keys []string
		if !writeMetadata(w, m, &keys) {
			t.Fatal("strings and booleans must take the fast path")
		}
		w.Flush()
		if buf.String() != string(want) {
			t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
		}
	})
}
