// Package redact keeps credentials out of messages. A provider registers the credentials it
// was configured with (tokens, bind passwords, client secrets) in a Set, and passes its
// errors and its log records through the Set before they leave it: an API that echoes the
// request (a misconfigured proxy, a hostile server, an error page quoting the headers) must
// not put a token into a CI log.
//
// URLs masks what needs no registration: the user-info part of every URL in a text (a token
// in an audit repo_url, a password in an ldap_uri, either echoed back by git or a server).
package redact

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a credential in a message.
const Mask = "[REDACTED]"

// MinLen is the shortest credential a Set searches for: shorter values would match ordinary
// words of messages (and are no credentials worth the name).
const MinLen = 6

// credentialURL matches the user-info part of a URL ("https://user:secret@host"), up to
// its last '@' before the path (a password may hold an unencoded '@').
var credentialURL = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s]*@`)

// URLs masks the user-info part (user name, password or token) of every URL in s:
// `https://x-access-token:ghs_…@host/x` becomes `https://***@host/x`. Every message that
// may show a URL from the config or from a program's output (git's) goes through it; a URL
// without user-info, and an scp-like address (git@host:path), are left as they are.
func URLs(s string) string { return credentialURL.ReplaceAllString(s, "${1}***@") }

// ErrorURLs is URLs for an error: err unchanged when its text holds no URL user-info, else
// an error whose text is masked and which unwraps to err (url.Parse's errors quote the URL
// they refused whole).
func ErrorURLs(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if m := URLs(msg); m != msg {
		return &masked{err: err, msg: m}
	}
	return err
}

// Set is the credentials of a registry. The zero value is empty and ready to use; a Set is
// safe for concurrent use.
type Set struct {
	mu   sync.RWMutex
	n    map[string]int // form → how many of the registered credentials have it
	vals []string       // the forms, longest first, so that a credential containing another is masked whole
}

// forms are the texts a credential is searched as: itself, URL-encoded (a form body or a
// query) and JSON-escaped; nil when it is too short to search for.
func forms(v string) []string {
	v = strings.TrimSpace(v)
	if len(v) < MinLen {
		return nil
	}
	j, _ := json.Marshal(v)
	var out []string
	for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v), string(j[1 : len(j)-1])} {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Add registers credentials (values shorter than MinLen are ignored), each also in the forms
// an echo may quote it in: URL-encoded (a form body or a query) and JSON-escaped.
func (s *Set) Add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	for _, v := range vals {
		for _, f := range forms(v) {
			if s.n[f]++; s.n[f] == 1 {
				s.vals = append(s.vals, f)
			}
		}
	}
	slices.SortFunc(s.vals, func(a, b string) int { return len(b) - len(a) })
}

// Remove unregisters credentials that were added and are of no use any more (short-lived
// tokens that were replaced), so that a long-running registry does not search for every
// token it ever held. A value added n times stays until it was removed n times.
func (s *Set) Remove(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vals {
		for _, f := range forms(v) {
			if s.n[f] == 0 {
				continue
			}
			if s.n[f]--; s.n[f] == 0 {
				delete(s.n, f)
				s.vals = slices.DeleteFunc(s.vals, func(x string) bool { return x == f })
			}
		}
	}
}

// Len is the number of texts searched for (each credential counts once per distinct form).
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.vals)
}

// String returns str with every registered credential masked.
func (s *Set) String(str string) string {
	if s == nil {
		return str
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.vals {
		if strings.Contains(str, v) {
			str = strings.ReplaceAll(str, v, Mask)
		}
	}
	return str
}

// Error returns err unchanged when its text holds no credential, else an error whose text is
// masked and which unwraps to err (errors.Is and errors.As still see what it wraps; only its
// text changes). nil stays nil.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if m := s.String(msg); m != msg {
		return &masked{err: err, msg: m}
	}
	return err
}

type masked struct {
	err error
	msg string
}

func (m *masked) Error() string { return m.msg }
func (m *masked) Unwrap() error { return m.err }

// Handler returns a slog.Handler that masks the credentials of s in the message and the
// attribute values of every record before h sees them.
func (s *Set) Handler(h slog.Handler) slog.Handler { return &handler{h: h, s: s} }

type handler struct {
	h slog.Handler
	s *Set
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = h.attr(a)
	}
	return &handler{h: h.h.WithAttrs(clean), s: h.s}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{h: h.h.WithGroup(name), s: h.s}
}

// attr masks an attribute's value: strings, errors and anything printed with fmt (a
// LogValuer is resolved first; groups are walked).
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		as := v.Group()
		clean := make([]slog.Attr, len(as))
		for i, x := range as {
			clean[i] = h.attr(x)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(clean...)}
	case slog.KindAny:
		var text string
		switch x := v.Any().(type) {
		case nil:
			return a
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		default:
			text = fmt.Sprint(x)
		}
		if m := h.s.String(text); m != text {
			return slog.String(a.Key, m)
		}
		return slog.Attr{Key: a.Key, Value: v}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
