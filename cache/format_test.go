package cache

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Written from mutation testing (issue 15): the metadata spellings of the predictive state,
// long lines in a state file, and escaped commas in its paths.

func TestMetadataText(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"Eng", "Eng"},
		{true, "true"},
		{42, "42"},
		{int64(-7), "-7"},
		{1.5, "1.5"},
		{[]string{"a", `b"c`}, `["a", "b\"c"]`},
		{[]string{}, "[]"},
		{[]any{"x", nil, 3, []any{"y"}}, `["x", nil, 3, ["y"]]`},
		{map[string]any{"b": "v", "a": nil, "c": 2}, `{"a"=>nil, "b"=>"v", "c"=>2}`},
		{map[string]any{}, "{}"},
		{uint8(5), "5"},
	} {
		if got := MetadataText(tc.in); got != tc.want {
			t.Errorf("MetadataText(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	got := MetadataLines(map[string]any{"_filename": "x.txt", "team": "Eng", "ids": []any{1, 2}})
	if want := []string{"metadata_ids=[1, 2]", "metadata_team=Eng"}; !slices.Equal(got, want) {
		t.Errorf("MetadataLines = %q, want %q", got, want)
	}
}

// A state file line longer than bufio's default 64 KiB is read (the limit is 16 MiB).
func TestPredictiveLongLine(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("a", 100*1024)
	if err := os.WriteFile(filepath.Join(dir, "cn=g,ou=x"), []byte("bob\nuid="+long+",ou=people\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPredictive(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := p.Lookup("cn=g,ou=x"); !ok || len(e.Members) != 2 || e.Members[0] != long {
		t.Errorf("entry with a long line not read whole (%v)", ok)
	}
}
