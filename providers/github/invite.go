package github

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	gh "github.com/google/go-github/v62/github"
)

// ErrInvitationLimit is wrapped by the results of invitations GitHub refused because the
// token's org invitation limit is used up: 50 per 24 hours, or 500 for an org older than a
// month or on a paid plan ("To prevent abuse, the authenticated user is limited to ...").
var ErrInvitationLimit = errors.New("GitHub's org invitation limit (50, or 500, per 24 hours) is used up")

// inviteRefusal is why GitHub answered 422 to a membership PUT that would invite someone.
type inviteRefusal uint8

const (
	// refusedOther: GitHub gave no reason; in practice a user who blocked the org (GitHub
	// does not say who blocked whom) or an invitation GitHub does not allow.
	refusedOther inviteRefusal = iota
	// refusedLimit: the invitation limit is used up; every other invitation of the run
	// would be refused the same way.
	refusedLimit
	// refusedInvalid: the request itself is wrong (an unknown role, a missing field): a bug
	// or a bad value, not something the user did.
	refusedInvalid
)

// classifyInviteRefusal reads a 422's message and field errors (GitHub's shape:
// {"message":"Validation Failed","errors":[{"resource":"OrganizationInvitation",
// "code":"unprocessable","field":"data","message":"Over invitation rate limit"}]}). A limit
// is recognised by its wording in any message; a field error with code invalid,
// missing_field, missing or already_exists means the request was wrong; anything else is an
// invitation GitHub would not send to that user.
func classifyInviteRefusal(err error) inviteRefusal {
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusUnprocessableEntity {
		return refusedOther
	}
	texts := []string{er.Message}
	invalid := false
	for _, e := range er.Errors {
		texts = append(texts, e.Message)
		switch e.Code {
		case "invalid", "missing_field", "missing", "already_exists":
			invalid = true
		}
	}
	for _, t := range texts {
		t = strings.ToLower(t)
		if strings.Contains(t, "rate limit") || strings.Contains(t, "invitation limit") || strings.Contains(t, "too many invitations") {
			return refusedLimit
		}
	}
	if invalid {
		return refusedInvalid
	}
	return refusedOther
}

// inviteLimit remembers, per token and plan generation, that the invitation limit was hit:
// no more invitations are sent for the rest of that run, and it is said once.
type inviteLimit struct {
	mu      sync.Mutex
	gen     uint64
	hit     bool
	skipped []string // users not invited because of it
}

// blocked reports whether invitations of generation gen stop, recording login as skipped.
func (l *inviteLimit) blocked(gen uint64, login string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.hit || l.gen != gen {
		return false
	}
	l.skipped = append(l.skipped, login)
	return true
}

// trip records the limit for generation gen and reports whether this call is the first to
// (the one that says so).
func (l *inviteLimit) trip(gen uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hit && l.gen == gen {
		return false
	}
	l.gen, l.hit, l.skipped = gen, true, nil
	return true
}

// takeSkipped returns (and forgets) the users left uninvited in generation gen.
func (l *inviteLimit) takeSkipped(gen uint64) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gen != gen {
		return nil
	}
	out := l.skipped
	l.skipped = nil
	return out
}
