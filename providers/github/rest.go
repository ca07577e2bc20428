package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v62/github"
)

func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func release(sem chan struct{}) { <-sem }

// read runs one read (a go-github GET or a GraphQL query) under the host's read limit, which
// every target on the host shares.
func (s *session) read(ctx context.Context, fn func(context.Context) error) error {
	if err := acquire(ctx, s.h.reads); err != nil {
		return err
	}
	defer release(s.h.reads)
	return fn(ctx)
}

// write runs one write under the session's write limit. Its pacing (spacing and budgets, see
// schedule.go) is done per attempt by the transport: every request GitHub receives counts.
func (s *session) write(ctx context.Context, fn func(context.Context) error) error {
	if err := acquire(ctx, s.writes); err != nil {
		return err
	}
	defer release(s.writes)
	return fn(ctx)
}

// httpStatus is the HTTP status behind a go-github error; 0 when there was no answer.
func httpStatus(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return http.StatusForbidden
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) {
		return http.StatusForbidden
	}
	var mine *RateLimitError
	if errors.As(err, &mine) {
		return mine.Status
	}
	return 0
}

// isRateLimit reports whether err is a rate-limit refusal (not a per-item failure).
func isRateLimit(err error) bool {
	var mine *RateLimitError
	var rl *gh.RateLimitError
	var ab *gh.AbuseRateLimitError
	return errors.As(err, &mine) || errors.As(err, &rl) || errors.As(err, &ab)
}

// unseen reports whether a failed write may still have happened: no answer arrived (network
// error, timeout, cancellation) or a server error (5xx: GitHub, or a gateway in front of it,
// may have done part of the work). Such writes are Unknown, never Applied and never replayed
// blindly. Budget and rate-limit refusals were not sent or not performed, so they are plain
// failures.
func unseen(err error) bool {
	if err == nil || errors.Is(err, ErrBudget) {
		return false
	}
	var mine *RateLimitError
	if errors.As(err, &mine) {
		return false
	}
	code := httpStatus(err)
	return code == 0 || code >= 500
}

// apiMessage is GitHub's message for a 4xx answer (with the field errors of a 422).
func apiMessage(err error) string {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) {
		return err.Error()
	}
	parts := []string{er.Message}
	for _, e := range er.Errors {
		if e.Message != "" {
			parts = append(parts, e.Message)
		} else if e.Code != "" {
			parts = append(parts, e.Field+" "+e.Code)
		}
	}
	return strings.Join(parts, ": ")
}

// enterprise reports whether the host is GitHub Enterprise Server (asked once per host with
// GET /meta, only for hosts configured with `addr`).
func (s *session) enterprise(ctx context.Context) (bool, error) {
	if !s.h.checkMeta {
		return false, nil
	}
	return s.h.meta.Get(ctx, "meta", func(context.Context) (bool, error) {
		var meta struct {
			InstalledVersion string `json:"installed_version"`
		}
		err := s.read(context.WithoutCancel(ctx), func(ctx context.Context) error {
			req, err := s.gh.NewRequest(http.MethodGet, "meta", nil)
			if err != nil {
				return err
			}
			_, err = s.gh.Do(ctx, req, &meta)
			return err
		})
		if err != nil {
			return false, s.h.addrHint(err, httpStatus(err))
		}
		return meta.InstalledVersion != "", nil
	})
}

// addrHint explains an answer (HTTP status code) that found no API at an `addr` without
// /api/v3: `addr` is the API root as written (the Ruby plugin's meaning; entitlements-go
// before issue 27 added /api/v3 to a bare host), so a GitHub Enterprise Server user must
// write the /api/v3 path.
func (h *host) addrHint(err error, code int) error {
	var syn *json.SyntaxError
	noAPI := (code >= 300 && code < 400) || code == http.StatusNotFound || errors.As(err, &syn)
	if !noAPI || !h.checkMeta || strings.HasSuffix(h.restBase.Path, "/api/v3/") || h.graphqlURL != deriveGraphQLURL(h.restBase) {
		return err
	}
	ghes := *h.restBase
	ghes.Path = strings.TrimSuffix(ghes.Path, "/") + "/api/v3"
	return fmt.Errorf("%w: no GitHub API at %s; `addr` is the API root as written, as in entitlements-github-plugin (REST at %s..., GraphQL at %s): for GitHub Enterprise Server write addr: %s",
		err, h.restBase, h.restBase, h.graphqlURL, ghes.String())
}
