package yaml11

import "testing"

// Errors point at the line that is wrong, not at the enclosing mapping (yaml.v3 reports the
// context line, 0-based, for parser errors) and not at no line at all.
func TestErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
	}{
		{"unclosed flow sequence", "description: bad\nrules:\n  or:\n    - username: alice\n    - username: [bob\n", 5},
		{"bad indentation", "description: x\nrules:\n  or:\n    - username: alice\n   - username: bob\n", 5},
		{"dedented sequence entry", "description: x\nrules:\n  or:\n    - username: alice\n  - username: bob\n", 5},
		{"unclosed flow map", "description: x\nmetadata:\n  a: 1\n  b: {c: 1\nrules:\n  username: x\n", 4},
		{"tab indentation", "description: x\nrules:\n  or:\n    - username: alice\n\t- username: bob\n", 5},
		{"unclosed quote", "description: x\nrules:\n  or:\n    - username: alice\n    - username: \"bob\n", 5},
		{"mapping in a value", "description: x\nrules:\n  or:\n    - username: alice\n    - username: bob: c\n", 5},
		{"unknown alias", "a: 1\nb: 2\nc: 3\nd: 4\ne: *y\n", 5},
		{"error on the first line", "a: [\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.src), Options{})
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if e.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", e.Line, tc.line, e)
			}
		})
	}
}
