// Package validate holds the boundary checks of entitlements-go: every config and definition
// file is checked once, when it is loaded, and every problem found is reported together as a
// `path:line: message` error. Nothing downstream of loading re-checks its input, which is what
// keeps the evaluation loop free of per-call validation.
package validate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Kind is the category of a validation error. Callers branch on it (errors.As + Kind) instead
// of matching message text; the values are the categories of the conformance corpus.
type Kind string

// The error categories. They match the categories used by the conformance corpus so that a
// test harness can compare kinds rather than free text.
const (
	KindConfig           Kind = "invalid configuration"
	KindCircular         Kind = "circular dependency"
	KindSelfWildcard     Kind = "invalid self-referencing wildcard"
	KindMissingReference Kind = "missing group reference"
	KindInvalidReference Kind = "invalid group reference"
	KindMethodNotAllowed Kind = "method not allowed"
	KindFileType         Kind = "file type not allowed"
	KindNoConditions     Kind = "no conditions"
	KindRuleStructure    Kind = "invalid rule structure"
	KindTextFile         Kind = "invalid text file"
	KindExpirationDate   Kind = "invalid expiration date"
	KindFilter           Kind = "invalid filter"
	KindMetadata         Kind = "invalid metadata"
	KindUnknownManager   Kind = "unknown manager"
	KindNoReports        Kind = "manager has no reports"
	KindLDAPGroup        Kind = "ldap group not found"
	KindDuplicateGroup   Kind = "duplicate group"
	KindUnsupported      Kind = "unsupported group file"
	KindPeople           Kind = "invalid people data"
	KindIO               Kind = "i/o error"
	KindNoMembers        Kind = "empty group not allowed"
)

// Error is one problem found at load time. Path is relative to the base directory chosen by
// the loader (normally the working directory), Line is 1-based or 0 when not known.
type Error struct {
	Path string
	Line int
	Kind Kind
	Msg  string
	// Err is the underlying cause, when there is one (an *os.PathError, for instance).
	Err error
}

func (e *Error) Error() string {
	switch {
	case e.Path != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	case e.Path != "":
		return e.Path + ": " + e.Msg
	default:
		return e.Msg
	}
}

func (e *Error) Unwrap() error { return e.Err }

// List is every error found in one load. It is itself an error so that a loader can return all
// problems at once; errors.As finds the individual *Error values through Unwrap.
type List []*Error

func (l List) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap exposes the individual errors to errors.Is / errors.As.
func (l List) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Kinds returns the distinct kinds in the list, in order of first appearance.
func (l List) Kinds() []Kind {
	var ks []Kind
	for _, e := range l {
		if !slices.Contains(ks, e.Kind) {
			ks = append(ks, e.Kind)
		}
	}
	return ks
}

// HasKind reports whether err is or contains a validation error of kind k.
func HasKind(err error, k Kind) bool {
	var l List
	if errors.As(err, &l) {
		for _, e := range l {
			if e.Kind == k {
				return true
			}
		}
		return false
	}
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// Warning is a problem that does not stop a run (a duplicate YAML key, an ignored ERB code tag).
type Warning struct {
	Path string
	Line int
	Msg  string
}

func (w Warning) String() string {
	return (&Error{Path: w.Path, Line: w.Line, Msg: w.Msg}).Error()
}

// Collector gathers errors and warnings from concurrent loaders. Its zero value is ready.
type Collector struct {
	mu    sync.Mutex
	errs  List
	warns []Warning
}

// Add records an error.
func (c *Collector) Add(path string, line int, kind Kind, format string, args ...any) {
	c.AddError(&Error{Path: path, Line: line, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// AddError records an already built error.
func (c *Collector) AddError(e *Error) {
	c.mu.Lock()
	c.errs = append(c.errs, e)
	c.mu.Unlock()
}

// Warn records a warning.
func (c *Collector) Warn(path string, line int, format string, args ...any) {
	c.mu.Lock()
	c.warns = append(c.warns, Warning{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
	c.mu.Unlock()
}

// Len is the number of errors so far.
func (c *Collector) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.errs)
}

// Err returns the collected errors as a List sorted by path and line (nil when there are none),
// so that output is deterministic whatever order concurrent loaders finished in.
func (c *Collector) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) == 0 {
		return nil
	}
	out := slices.Clone(c.errs)
	slices.SortStableFunc(out, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Msg, b.Msg))
	})
	out = slices.CompactFunc(out, func(a, b *Error) bool {
		return a.Path == b.Path && a.Line == b.Line && a.Msg == b.Msg
	})
	return out
}

// Warnings returns the collected warnings sorted by path and line.
func (c *Collector) Warnings() []Warning {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.warns)
	slices.SortStableFunc(out, func(a, b Warning) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return out
}

// Errors of refused input files (see calc.Options.MaxFileSize and AllowSymlinksOutside); a
// read error wraps one of them, so callers branch with errors.Is.
var (
	ErrNotRegular   = errors.New("not a regular file")
	ErrFileTooLarge = errors.New("file too large")
	ErrOutsideTree  = errors.New("symlink resolves outside the config tree")
)
