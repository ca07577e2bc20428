package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// TypeSpec describes one backend type (the `type:` of an OU entry) as the config loader and
// the calculation need it: how it is ordered, whether its directory is enumerated, which keys
// its OU entries accept, and when two of its OUs would undo each other's changes. The loader
// knows no type by name: every spec comes from Options.Types, and each backend package
// declares its own (see package backend).
type TypeSpec struct {
	Name string
	// Priority orders OUs for processing (lower first), as the reference's controller sort.
	Priority int
	// Enumerates: every file of the OU directory is a managed group (ldap, github_team, ...).
	// A type that does not enumerate (dummy) only evaluates files that are referenced.
	Enumerates bool
	// Derived: the OU has no group files of its own; what it writes derives from the groups
	// of other OUs (member_of). Its directory is never read.
	Derived bool
	// CalculateOnly: the OU's groups are calculated (when referenced) but written nowhere, so
	// it is never a target of plan or apply (dummy).
	CalculateOnly bool
	// Required and Optional list the accepted keys besides `type` and the common keys
	// (dir, allowed_methods, allowed_types). AnyKeys disables key checks (dummy).
	Required, Optional []string
	AnyKeys            bool
	// Secrets are keys that may be null after environment substitution: they are only needed
	// when a provider connects, so an offline calculation must not fail on them.
	Secrets []string
	// Substitutes lets a required key be left out when another key is given: the key →
	// the key that replaces it (an ldap OU that finds people by person_attribute needs no
	// person_dn_format).
	Substitutes map[string]string
	// Enums lists the values a key accepts (compared case-insensitively, since they name
	// LDAP object classes and AD settings).
	Enums map[string][]string
	// Lists are keys whose value must be a list.
	Lists []string
	// Check validates what keys alone cannot say, once every OU is loaded (an OU that lists
	// other OUs, for instance). It reports through c. Default: nothing more to check.
	Check func(c *Checker, ou *OU)
	// Overlap says why two OUs of this type would manage the same things, so that each run
	// of one would undo the other's changes, or "" when they do not. files lists an OU's
	// group files (see GroupFiles). Default: OUs of the type never overlap.
	Overlap func(a, b *OU, files GroupFiles) string
	// Credentials maps each kind of credential the type takes to the keys that give it. An
	// OU whose keys give two kinds (a key counts when it is set and not empty after
	// substitution) must say which one its provider uses in its `credential` key, which the
	// type must accept (give it an Enums entry of the kinds); otherwise it does not load.
	Credentials map[string][]string
}

// GroupFiles lists the group files of an OU directory: lower-cased group name → the file's
// path relative to the base directory. Names that are not legal group names are left out.
type GroupFiles func(ou *OU) map[string]string

// commonKeys are accepted by every typed OU.
var commonKeys = []string{"dir", "allowed_methods", "allowed_types"}

// typesByName indexes the specs; a later spec of the same name replaces an earlier one.
func typesByName(specs []TypeSpec) map[string]TypeSpec {
	out := make(map[string]TypeSpec, len(specs))
	for _, t := range specs {
		out[t.Name] = t
	}
	return out
}

// keys are the keys the type accepts (for did-you-mean hints).
func (t TypeSpec) keys() func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for _, l := range [][]string{commonKeys, t.Required, t.Optional} {
			for _, k := range l {
				if !yield(k) {
					return
				}
			}
		}
	}
}

func (t TypeSpec) accepts(key string) bool {
	return t.AnyKeys || slices.Contains(commonKeys, key) || slices.Contains(t.Required, key) ||
		slices.Contains(t.Optional, key)
}

// Checker is what a TypeSpec's Check sees: the loaded configuration, and where to report.
type Checker struct{ l *loader }

// Config is the configuration loaded so far (every OU entry that loaded).
func (c *Checker) Config() *Config { return c.l.cfg }

// Refused reports whether key names an OU entry that was refused (reported already): what
// refers to it should not report it again as missing.
func (c *Checker) Refused(key string) bool { return c.l.broken[key] }

// Errorf reports an error at a line of the config file.
func (c *Checker) Errorf(line int, format string, args ...any) { c.l.errf(line, format, args...) }

// Warnf reports a warning at a line of the config file.
func (c *Checker) Warnf(line int, format string, args ...any) {
	c.l.c.Warn(c.l.rel, line, "%s", fmt.Sprintf(format, args...))
}

// Show renders a setting for a message: a short excerpt, never a substituted value or the
// value of a secret key.
func (c *Checker) Show(v Value) string { return show(v.n) }

// Setting is the text of an OU setting, and whether it is set (not missing, not null).
func (ou *OU) Setting(key string) (string, bool) {
	v := ou.Settings.Get(key)
	if v.IsNull() {
		return "", false
	}
	return v.Text(), true
}

// SettingTrue reports whether an OU setting is the boolean true.
func (ou *OU) SettingTrue(key string) bool {
	b, ok := ou.Settings.Get(key).AsBool()
	return ok && b
}

// SameServer compares a connection setting of two OUs (an URI, a tenant), ignoring case,
// surrounding blanks and a trailing slash. An unset value is def; with no default, unset
// counts as the same as anything (the value comes from elsewhere, such as the environment).
func SameServer(a, b *OU, key, def string) bool {
	x, okA := a.Setting(key)
	y, okB := b.Setting(key)
	if def != "" {
		x, y, okA, okB = cmp.Or(x, def), cmp.Or(y, def), true, true
	}
	return !okA || !okB || strings.EqualFold(strings.TrimRight(strings.TrimSpace(x), "/"), strings.TrimRight(strings.TrimSpace(y), "/"))
}
