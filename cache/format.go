package cache

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/entitlements-go/entitlements/internal/yaml11"
)

// MetadataText renders a metadata value as the reference's audit log writes it (Ruby's
// #to_s: strings as they are, lists and maps in Ruby's inspect form), so that the values a
// provider compares with the predictive state are spelled as the file spells them.
func MetadataText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return yaml11.RubyFloatString(x)
	case []string:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = strconv.Quote(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = inspect(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + "=>" + inspect(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

func inspect(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return strconv.Quote(x)
	}
	return MetadataText(v)
}

// StateFile is the content of one group's file in the audit log and in the predictive state,
// the one format both are written in and LoadPredictive reads: the members lower-cased,
// sorted and de-duplicated, one per line, or "# No members" when there is none; then
// MetadataLines. The reference's audit log writes the same bytes, so a checkout it wrote
// reads as unchanged.
func StateFile(members []string, metadata map[string]any) []byte {
	low := make([]string, len(members))
	for i, m := range members {
		low[i] = strings.ToLower(m)
	}
	slices.Sort(low)
	low = slices.Compact(low)
	var b strings.Builder
	if len(low) == 0 {
		b.WriteString("# No members\n")
	}
	for _, m := range low {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	for _, l := range MetadataLines(metadata) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// MetadataLines returns the `metadata_<key>=<value>` lines of a group, sorted, without the
// internal key _filename.
func MetadataLines(md map[string]any) []string {
	out := make([]string, 0, len(md))
	for k, v := range md {
		if k == "_filename" {
			continue
		}
		out = append(out, "metadata_"+k+"="+MetadataText(v))
	}
	slices.Sort(out)
	return out
}

// SameMetadata reports whether a group's metadata equals a predictive entry's, compared as
// the state file stores it (trimmed and lower-cased).
func SameMetadata(md map[string]any, e *PredictiveEntry) bool {
	n := 0
	for k, v := range md {
		if k == "_filename" {
			continue
		}
		n++
		got, ok := e.Metadata[strings.ToLower(strings.TrimSpace(k))]
		if !ok || got != strings.ToLower(strings.TrimSpace(MetadataText(v))) {
			return false
		}
	}
	return n == len(e.Metadata)
}
