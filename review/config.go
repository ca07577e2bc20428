package review

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/yaml11"
)

// ConfigDiff is what a change to the configuration file would change, itemised for review and
// never applied: the head of a pull request is data, calculated with the base revision's
// configuration (see `entitlements diff`), so its own entitlements.yaml may not choose which
// environment variables are read, which servers are contacted or with which credentials.
// Both sides are parsed without the environment (PlaceholderEnv), so no value of the
// environment the diff runs in can appear here.
type ConfigDiff struct {
	// File is the configuration file, relative to the repository.
	File string `json:"file"`
	// Changes are the settings that differ, sorted by path.
	Changes []ConfigChange `json:"changes,omitempty"`
	// Errors say why the changes could not be itemised: the problems of a side whose
	// configuration does not load (without the environment).
	Errors []string `json:"errors,omitempty"`
}

// Changed reports whether the configuration differs (or could not be compared).
func (c *ConfigDiff) Changed() bool { return c != nil && (len(c.Changes) > 0 || len(c.Errors) > 0) }

// ConfigChange is one setting that differs between the base and the head.
type ConfigChange struct {
	// Path names the setting: "groups.OU" for a whole OU and "groups.OU.KEY" for one of its
	// settings (its backend preset merged in, "type" included); likewise "people.SOURCE",
	// "filters.NAME", "extras.NAME", and the top-level "configuration_path",
	// "people_data_source", "ignore_expirations", "max_parallelism" and "auditors".
	Path string `json:"path"`
	// Change is "added", "removed" or "changed".
	Change string `json:"change"`
	// Old and New are the values as compact JSON ("" on the side that lacks the setting).
	// A substitution reads ENV[NAME]; the value of a secret key (*pw, *password*, *token*,
	// ...) written in the file is "(secret)".
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
}

// PlaceholderEnv is a Getenv (config.Options, calc.Options) that reads nothing from the
// environment: every variable NAME is the text ENV[NAME], which is valid in a DN, a URI or a
// file name, so that a configuration loads and compares without any value of the environment.
func PlaceholderEnv(name string) (string, bool) { return "ENV[" + name + "]", true }

// onlyEnv matches a value that is nothing but placeholders of PlaceholderEnv: it shows which
// variables a secret comes from, never a secret.
var onlyEnv = regexp.MustCompile(`^(ENV\[[^\]]*\])+$`)

// CompareConfig itemises what differs from the configuration base to head. Both should be
// loaded with PlaceholderEnv: a configuration loaded with the environment carries its values.
func CompareConfig(base, head *config.Config) []ConfigChange {
	var out []ConfigChange
	compareValues(&out, "", configTree(base), configTree(head))
	slices.SortFunc(out, func(a, b ConfigChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// configTree is the configuration as plain values, in the shape that is compared: sections
// of named entries whose settings are compared key by key.
func configTree(c *config.Config) map[string]any {
	groups := map[string]any{}
	for _, ou := range c.OUs {
		m := ou.Settings.Map()
		m["type"] = ou.Type
		groups[ou.Key] = m
	}
	ppl := map[string]any{}
	for name, src := range c.People {
		ppl[name] = map[string]any{"type": src.Type, "config": src.Config.Map()}
	}
	filters := map[string]any{}
	for _, f := range c.Filters {
		filters[f.Name] = map[string]any{"class": f.Class, "config": f.Config.Map()}
	}
	extras := map[string]any{}
	if oc := c.Orgchart; oc != nil {
		m := map[string]any{}
		if oc.ManagerMapFile != "" {
			m["manager_map_file"] = c.Rel(oc.ManagerMapFile)
		}
		extras["orgchart"] = m
	}
	if c.LDAPGroup.Exists() {
		extras["ldap_group"] = c.LDAPGroup.Map()
	}
	var auditors []any
	for _, a := range c.Auditors {
		auditors = append(auditors, a.Map())
	}
	return map[string]any{
		"configuration_path": c.Rel(c.ConfigurationPath),
		"people_data_source": c.PeopleDataSource,
		"ignore_expirations": c.IgnoreExpirations,
		"max_parallelism":    c.MaxParallelism,
		"groups":             groups,
		"people":             ppl,
		"filters":            filters,
		"extras":             extras,
		"auditors":           auditors,
	}
}

// compareValues appends the differences between a and b at path: maps key by key, anything
// else as a whole.
func compareValues(out *[]ConfigChange, path string, a, b any) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, ConfigChange{Path: path, Change: "changed", Old: configValue(path, a), New: configValue(path, b)})
		}
		return
	}
	keys := slices.Sorted(maps.Keys(am))
	for k := range bm {
		if _, ok := am[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		av, ain := am[k]
		bv, bin := bm[k]
		switch {
		case !ain:
			*out = append(*out, ConfigChange{Path: p, Change: "added", New: configValue(k, bv)})
		case !bin:
			*out = append(*out, ConfigChange{Path: p, Change: "removed", Old: configValue(k, av)})
		default:
			compareValues(out, p, av, bv)
		}
	}
}

// configValue renders a value as compact JSON, the values of secret keys masked.
func configValue(key string, v any) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		key = key[i+1:]
	}
	b, err := json.Marshal(mask(key, v))
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func mask(key string, v any) any {
	if yaml11.SecretKey(key) {
		if s, ok := v.(string); ok && onlyEnv.MatchString(s) {
			return s
		}
		if v == nil {
			return nil
		}
		return "(secret)"
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mask(k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mask(key, e)
		}
		return out
	}
	return v
}

// configMarkdownMax bounds the configuration changes listed in a comment.
const configMarkdownMax = 50

func configMark(change string) string {
	switch change {
	case "added":
		return "+"
	case "removed":
		return "-"
	}
	return "~"
}

// writeConfigText writes the configuration section and the sources of a text diff.
func (d *Diff) writeConfigText(ew *errWriter) {
	if c := d.Config; c.Changed() {
		ew.printf("Configuration: %s differs in the head. Access below is calculated with the base revision's configuration; these changes apply only once merged:\n", c.File)
		for _, ch := range c.Changes {
			switch ch.Change {
			case "added":
				ew.printf("    + %s: %s\n", ch.Path, ch.New)
			case "removed":
				ew.printf("    - %s: %s\n", ch.Path, ch.Old)
			default:
				ew.printf("    ~ %s: %s -> %s\n", ch.Path, ch.Old, ch.New)
			}
		}
		for _, e := range c.Errors {
			ew.printf("    ! %s\n", e)
		}
	}
	for _, s := range d.Sources {
		ew.printf("Source: %s\n", s)
	}
}

// writeConfigMarkdown writes the configuration section and the sources of a Markdown diff.
// Every value is the pull request's text: each goes in a code span.
func (d *Diff) writeConfigMarkdown(b *strings.Builder) {
	if c := d.Config; c.Changed() {
		fmt.Fprintf(b, "> [!IMPORTANT]\n> %s changes in this pull request. Access below is calculated with the base revision's configuration; "+
			"these changes apply only once merged. Review them here:\n\n", mdCode(c.File))
		for i, ch := range c.Changes {
			if i == configMarkdownMax {
				fmt.Fprintf(b, "- … and %d more (run `entitlements diff --format text` for all)\n", len(c.Changes)-i)
				break
			}
			switch ch.Change {
			case "added":
				fmt.Fprintf(b, "- %s %s added: %s\n", configMark(ch.Change), mdCode(ch.Path), mdCode(ch.New))
			case "removed":
				fmt.Fprintf(b, "- %s %s removed (was %s)\n", configMark(ch.Change), mdCode(ch.Path), mdCode(ch.Old))
			default:
				fmt.Fprintf(b, "- %s %s: %s → %s\n", configMark(ch.Change), mdCode(ch.Path), mdCode(ch.Old), mdCode(ch.New))
			}
		}
		for i, e := range c.Errors {
			if i == configMarkdownMax {
				break
			}
			fmt.Fprintf(b, "- ⚠️ %s\n", mdCode(e))
		}
		b.WriteByte('\n')
	}
	for _, s := range d.Sources {
		fmt.Fprintf(b, "_Source: %s_\n\n", mdText(s))
	}
}
