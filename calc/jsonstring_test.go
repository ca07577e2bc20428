package calc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// TestJSONStringWriters: the fast paths of the JSON string writers never change what is
// written. writeMarshalString is json.Marshal; writeJSONString is json.Marshal too, except
// that a string that needs no escaping but HTML's (<, >, &) is written as it is.
func TestJSONStringWriters(t *testing.T) {
	chars := []string{"a", " ", "<", ">", "&", `"`, `\`, "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "~"}
	var corpus []string
	for _, a := range chars {
		corpus = append(corpus, a)
		for _, b := range chars {
			corpus = append(corpus, a+b)
		}
	}
	needsEscape := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
				return true
			}
		}
		return false
	}
	render := func(write func(*bufio.Writer, string), s string) string {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		write(w, s)
		w.Flush()
		return buf.String()
	}
	for _, s := range corpus {
		m, _ := json.Marshal(s)
		if got := render(writeMarshalString, s); got != string(m) {
			t.Errorf("writeMarshalString(%q) = %s; want %s", s, got, m)
		}
		want := `"` + s + `"`
		if needsEscape(s) {
			want = string(m)
		}
		if got := render(writeJSONString, s); got != want {
			t.Errorf("writeJSONString(%q) = %s; want %s", s, got, want)
		}
	}
}
