package github

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"

	gh "github.com/google/go-github/v62/github"
)

// FailureKind classifies a per-item failure: one user's (or one team's) write that GitHub
// refused. Such a failure fails its change (the run exits 1) but never stops the other writes.
type FailureKind string

// The failure kinds.
const (
	// FailBlocked: GitHub refused to invite or add the user, usually because the user
	// blocked the org or an owner blocked the user (GitHub does not say who blocked whom;
	// its support quotes "User is blocked").
	FailBlocked FailureKind = "blocked"
	// FailOrganization: the login is an organization, not a user.
	FailOrganization FailureKind = "organization"
	// FailNotFound: no account has the login: a typo, a deleted account, or a renamed one
	// (GitHub does not redirect old logins).
	FailNotFound FailureKind = "not_found"
	// FailManaged: the team's membership is managed elsewhere (team synchronization with an
	// identity provider, an enterprise team).
	FailManaged FailureKind = "managed_elsewhere"
	// FailRefused: any other refusal (4xx) of one item.
	FailRefused FailureKind = "refused"
)

// ItemError is a classified per-item failure. Outcome.Err of the change holds it (joined with
// the change's other errors); ItemErrors finds every one in a report's error.
type ItemError struct {
	Kind       FailureKind
	Org, Team  string // Team is "" for an org membership
	Login      string
	Err        error
	Suggestion string // what to do about it
}

func (e *ItemError) Error() string {
	where := e.Org
	if e.Team != "" {
		where += "/" + e.Team
	}
	msg := fmt.Sprintf("%s (%s) in %s: %v", e.Login, e.Kind, where, e.Err)
	if e.Suggestion != "" {
		msg += "; " + e.Suggestion
	}
	return msg
}

func (e *ItemError) Unwrap() error { return e.Err }

// ItemErrors returns every ItemError in err (a deploy.Report's Err, an Outcome's Err), in the
// order found, walking joined and wrapped errors.
func ItemErrors(err error) []*ItemError {
	var out []*ItemError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if ie, ok := err.(*ItemError); ok {
			out = append(out, ie)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// WriteFailureSummary writes one table of per-item failures, sorted by kind, org, team and
// login, with a count per kind: the end-of-run summary of an apply.
func WriteFailureSummary(w io.Writer, fs []*ItemError) error {
	if len(fs) == 0 {
		return nil
	}
	fs = slices.Clone(fs)
	slices.SortFunc(fs, func(a, b *ItemError) int {
		return strings.Compare(string(a.Kind)+"\x00"+a.Org+"\x00"+a.Team+"\x00"+a.Login,
			string(b.Kind)+"\x00"+b.Org+"\x00"+b.Team+"\x00"+b.Login)
	})
	count := map[FailureKind]int{}
	for _, f := range fs {
		count[f.Kind]++
	}
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(count)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, count[k]))
	}
	fmt.Fprintf(w, "GitHub: %d item(s) failed (%s); the other changes were applied:\n", len(fs), strings.Join(kinds, ", "))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tORG\tTEAM\tUSER\tWHY")
	for _, f := range fs {
		team := f.Team
		if team == "" {
			team = "-"
		}
		why := strings.ReplaceAll(f.Err.Error(), "\n", " ")
		if f.Suggestion != "" {
			why += " (" + f.Suggestion + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Kind, f.Org, team, f.Login, why)
	}
	return tw.Flush()
}

// accountKind looks a login up (GET /users/{login}) after a refusal, to say why: an
// organization, no such account, or a user. "" when the lookup itself failed.
func (s *session) accountKind(ctx context.Context, login string) FailureKind {
	var u *gh.User
	err := s.read(ctx, func(ctx context.Context) error {
		var err error
		u, _, err = s.gh.Users.Get(ctx, login)
		return err
	})
	switch {
	case httpStatus(err) == http.StatusNotFound:
		return FailNotFound
	case err != nil:
		return ""
	case strings.EqualFold(u.GetType(), "Organization"):
		return FailOrganization
	}
	return FailBlocked
}

// managedMessage reports whether a refusal says the team is managed elsewhere.
func managedMessage(err error) bool {
	m := strings.ToLower(apiMessage(err))
	return strings.Contains(m, "synchroniz") || strings.Contains(m, "identity provider") || strings.Contains(m, "enterprise team")
}

// classifyItem turns a refused membership write (404, 403 or 422 that is no rate limit) into
// an ItemError. A 404 or 422 is explained by looking the login up.
func (s *session) classifyItem(ctx context.Context, err error, org, team, login string) *ItemError {
	ie := &ItemError{Kind: FailRefused, Org: org, Team: team, Login: login, Err: err}
	code := httpStatus(err)
	switch {
	case team != "" && managedMessage(err):
		ie.Kind = FailManaged
		ie.Suggestion = "change the team's members in the identity provider (or the enterprise), or drop its file"
		return ie
	case code == http.StatusForbidden && strings.Contains(strings.ToLower(apiMessage(err)), "blocked"):
		ie.Kind = FailBlocked
	case code == http.StatusNotFound || code == http.StatusUnprocessableEntity:
		k := s.accountKind(ctx, login)
		switch {
		case k == FailNotFound || k == FailOrganization:
			ie.Kind = k
		case code == http.StatusUnprocessableEntity && k != "":
			// A user GitHub will not invite or add: in practice a block (GitHub does not say).
			ie.Kind = FailBlocked
		case code == http.StatusNotFound && k == FailBlocked && team != "":
			// The user exists: it is the team that is missing.
			ie.Kind = FailRefused
		}
	}
	switch ie.Kind {
	case FailBlocked:
		ie.Suggestion = "the user blocked the org or an owner blocked them; ask them, or drop them from the file"
	case FailOrganization:
		ie.Suggestion = "an organization cannot be a member; drop it from the file"
	case FailNotFound:
		ie.Suggestion = "no such account (a typo, or renamed or deleted): fix the login, or set ignore_not_found: true to skip such users"
	}
	return ie
}
