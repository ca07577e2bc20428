package config

import (
	"github.com/entitlements-go/entitlements/internal/yaml11"
)

// Value is one value of the configuration file as loaded: a read-only view that keeps the
// typing of the reference's YAML 1.1 loader (`yes` is true, `010` is 8) and the line the
// value is on. The zero Value stands for an absent value; every method works on it.
//
// Providers and embedders read their own keys through it (OU.Settings, Filter.Config,
// PeopleSource.Config, Config.LDAPGroup, Config.Auditors). A config file holds no dates, so
// a value is exactly one of: null, a boolean, an integer, a float, a string, a list or a map.
type Value struct{ n *yaml11.Node }

// ParseValue reads YAML text the way the configuration file is read (YAML 1.1 typing, no
// tags, aliases or dates), for building an OU or a people source by hand, as tests of a
// provider do. Empty text is a null value.
func ParseValue(text string) (Value, error) {
	n, _, err := yaml11.Parse([]byte(text), yaml11.Options{})
	if err != nil {
		return Value{}, err
	}
	return Value{n}, nil
}

// Exists reports whether the value is given in the file (a key written with no value
// exists and is null).
func (v Value) Exists() bool { return v.n != nil }

// IsNull reports an absent or null value.
func (v Value) IsNull() bool { return v.n == nil || v.n.Kind == yaml11.Null }

// IsList reports a list (YAML sequence).
func (v Value) IsList() bool { return v.n != nil && v.n.Kind == yaml11.Seq }

// IsMap reports a map (YAML mapping).
func (v Value) IsMap() bool { return v.n != nil && v.n.Kind == yaml11.Map }

// Line is the 1-based line of the value in the configuration file (0 when absent).
func (v Value) Line() int {
	if v.n == nil {
		return 0
	}
	return v.n.Line
}

// Get returns the entry of a map under a string key; absent when v is not a map or has no
// such key. Keys that YAML reads as another type (`12345:`, `yes:`) never match a string,
// as in the reference.
func (v Value) Get(key string) Value { return Value{v.n.Get(key)} }

// Items returns the items of a list (nil when v is not a list).
func (v Value) Items() []Value {
	if !v.IsList() {
		return nil
	}
	out := make([]Value, len(v.n.Items))
	for i, it := range v.n.Items {
		out[i] = Value{it}
	}
	return out
}

// AsString returns the text of a string value; ok is false for every other kind (numbers
// and booleans included: use Text for their spelling as Ruby prints them).
func (v Value) AsString() (s string, ok bool) {
	if v.n == nil || v.n.Kind != yaml11.String {
		return "", false
	}
	return v.n.Str, true
}

// AsBool returns a boolean value; ok is false for every other kind.
func (v Value) AsBool() (b, ok bool) {
	if v.n == nil || v.n.Kind != yaml11.Bool {
		return false, false
	}
	return v.n.Bool, true
}

// AsInt returns an integer value that fits in int64; ok is false for every other kind.
func (v Value) AsInt() (i int64, ok bool) {
	if v.n == nil || v.n.Kind != yaml11.Int {
		return 0, false
	}
	return v.n.Int, true
}

// Shown renders the value for a message: its text, shortened and with control characters
// escaped, or a placeholder when it came from the environment.
func (v Value) Shown() string { return plain(v.n) }

// Text renders the value as Ruby's to_s would, which is how the reference uses settings as
// text: "" when absent or null, "true", "42", "1.5", the string itself; lists and maps in
// Ruby's inspect format (secrets filtered).
func (v Value) Text() string { return v.n.Text() }

// Interface converts the value into plain Go values, as encoding/json would decode them:
// nil, bool, int64, float64, json.Number (its exact digits) for an integer beyond int64,
// string, []any and map[string]any. Every call returns fresh maps and slices.
func (v Value) Interface() any { return v.n.Interface() }

// Map returns a map value as a plain Go map (empty, never nil, when v is not a map).
func (v Value) Map() map[string]any {
	if m, ok := v.Interface().(map[string]any); ok {
		return m
	}
	return map[string]any{}
}
