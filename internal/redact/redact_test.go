package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"testing"
)

func TestSet(t *testing.T) {
	var s Set
	s.Add("tok", "s3cr3t-token", "s3cr3t-token-long", "  pass-word  ", "")
	for _, tc := range []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"token tok is short", "token tok is short"}, // shorter than MinLen: not searched
		{"Bearer s3cr3t-token-long!", "Bearer " + Mask + "!"},
		{"a s3cr3t-token and pass-word", "a " + Mask + " and " + Mask},
	} {
		if got := s.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	s.Add(`a+b/c=d&"e"<f>`)
	for _, in := range []string{`a+b/c=d&"e"<f>`, "a%2Bb%2Fc%3Dd%26%22e%22%3Cf%3E", "a+b%2Fc=d&%22e%22%3Cf%3E", `a+b/c=d\u0026\"e\"\u003cf\u003e`} {
		if got := s.String("x " + in + " y"); got != "x "+Mask+" y" {
			t.Errorf("String(%q) = %q: an encoded form is not masked", in, got)
		}
	}
	var nilSet *Set
	if nilSet.String("pass-word") != "pass-word" {
		t.Error("a nil Set masks")
	}

	if s.Error(nil) != nil {
		t.Error("nil error")
	}
	plain := errors.New("no credential")
	if s.Error(plain) != plain {
		t.Error("an error without a credential is wrapped")
	}
	inner := &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}
	err := s.Error(fmt.Errorf("sent pass-word: %w", inner))
	var pe *fs.PathError
	if err.Error() != "sent "+Mask+": open x: file does not exist" || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		t.Errorf("masked error %q loses its chain or its text", err)
	}
}

// Issue 24: short-lived tokens are removed once replaced; a value registered twice (two OUs
// with one token) stays until both removed it.
func TestSetRemove(t *testing.T) {
	var s Set
	s.Add("ghs_first-token", "shared-secret")
	s.Add("shared-secret")
	base := s.Len()
	s.Add(`ghs_second+token`)
	s.Remove(`ghs_second+token`, "never-added", "short")
	if s.Len() != base {
		t.Errorf("Len %d after removing what was added, want %d", s.Len(), base)
	}
	if got := s.String("ghs_second+token ghs_second%2Btoken"); got != "ghs_second+token ghs_second%2Btoken" {
		t.Errorf("a removed token is still masked: %q", got)
	}
	s.Remove("shared-secret")
	if got := s.String("shared-secret ghs_first-token"); got != Mask+" "+Mask {
		t.Errorf("removed once of twice: %q", got)
	}
	s.Remove("shared-secret")
	if got := s.String("shared-secret"); got != "shared-secret" {
		t.Errorf("removed twice of twice: %q", got)
	}
}

type stringer struct{}

func (stringer) String() string { return "stringer pass-word" }

func TestHandler(t *testing.T) {
	var s Set
	s.Add("pass-word")
	var buf bytes.Buffer
	log := slog.New(s.Handler(slog.NewTextHandler(&buf, nil))).With("with", "w pass-word")
	log.WithGroup("g").Info("msg pass-word", "str", "a pass-word", "err", errors.New("e pass-word"),
		"any", stringer{}, "num", 42, slog.Group("grp", "inner", "i pass-word"), "nilerr", error(nil))
	out := buf.String()
	if strings.Contains(out, "pass-word") {
		t.Errorf("credential logged: %s", out)
	}
	for _, want := range []string{"msg " + Mask, "with=\"w " + Mask, "g.str=\"a " + Mask, "g.err=\"e " + Mask, "g.any=\"stringer " + Mask, "g.num=42", "g.grp.inner=\"i " + Mask} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q: %s", want, out)
		}
	}
}

func TestURLs(t *testing.T) {
	for in, want := range map[string]string{
		"audit GitRepo https://x-access-token:ghs_abc@github.example/o/log.git setup failed": "audit GitRepo https://***@github.example/o/log.git setup failed",
		"fatal: unable to access 'https://user:p@ss@host/x/': 403":                           "fatal: unable to access 'https://***@host/x/': 403",
		"ssh://git@host:22/x.git and ldaps://cn=a:pw@ldap:636":                               "ssh://***@host:22/x.git and ldaps://***@ldap:636",
		"https://host/path?q=1 a@b.example":                                                  "https://host/path?q=1 a@b.example",
		"git@github.com:o/r.git /srv/log.git":                                                "git@github.com:o/r.git /srv/log.git",
		"no url":                                                                             "no url",
	} {
		if got := URLs(in); got != want {
			t.Errorf("URLs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorURLs(t *testing.T) {
	if ErrorURLs(nil) != nil {
		t.Error("nil error not kept")
	}
	plain := errors.New("GET https://host/x: refused")
	if ErrorURLs(plain) != plain {
		t.Error("an error without user-info was replaced")
	}
	inner := &fs.PathError{Op: "open", Path: "https://u:tok3n-secret@host/x", Err: fs.ErrNotExist}
	got := ErrorURLs(fmt.Errorf("addr: %w", inner))
	if strings.Contains(got.Error(), "tok3n-secret") || !strings.Contains(got.Error(), "https://***@host/x") {
		t.Errorf("ErrorURLs: %q", got)
	}
	var pe *fs.PathError
	if !errors.As(got, &pe) || !errors.Is(got, fs.ErrNotExist) {
		t.Errorf("ErrorURLs does not unwrap: %v", got)
	}
}
