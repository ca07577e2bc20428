package config

import "github.com/entitlements-go/entitlements/internal/yaml11"

// The raw YAML fields of Config, OU, Filter and PeopleSource (LDAPGroup, Auditors, Settings,
// Config) have a type internal to this module, which the providers of this module read. The
// accessors below are the API for everyone else: plain Go values, as encoding/json would
// decode them — string, bool, int64, float64 (also for integers beyond int64), nil, dates as
// "YYYY-MM-DD" strings, []any and map[string]any.

// Setting returns one key of the OU's settings (its entry in `groups:` merged over its
// backend, type removed) as a plain Go value; nil when absent.
func (ou *OU) Setting(key string) any { return ou.Settings.Get(key).Interface() }

// SettingString returns a scalar setting as text ("" when absent or not a scalar).
func (ou *OU) SettingString(key string) string { return scalarText(ou.Settings.Get(key)) }

// SettingsMap returns every setting of the OU as a plain Go map (never nil).
func (ou *OU) SettingsMap() map[string]any { return asMap(ou.Settings) }

// ConfigMap returns the filter's `config:` map as plain Go values (never nil).
func (f *Filter) ConfigMap() map[string]any { return asMap(f.Config) }

// ConfigMap returns the people source's `config:` map as plain Go values (never nil).
func (s *PeopleSource) ConfigMap() map[string]any { return asMap(s.Config) }

// LDAPGroupSettings returns the settings of the ldap_group extra (its LDAP connection), or
// nil when the extra is not configured.
func (c *Config) LDAPGroupSettings() map[string]any {
	if c.LDAPGroup == nil {
		return nil
	}
	return asMap(c.LDAPGroup)
}

// AuditorSettings returns each configured auditor's map, in config order.
func (c *Config) AuditorSettings() []map[string]any {
	out := make([]map[string]any, len(c.Auditors))
	for i, a := range c.Auditors {
		out[i] = asMap(a)
	}
	return out
}

func asMap(n *yaml11.Node) map[string]any {
	if m, ok := n.Interface().(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

func scalarText(n *yaml11.Node) string {
	if n == nil || n.Kind == yaml11.Null || n.Kind == yaml11.Seq || n.Kind == yaml11.Map {
		return ""
	}
	return n.Text()
}
