package github

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	gh "github.com/google/go-github/v62/github"

	"github.com/entitlements-go/entitlements/providers"
)

// doctorMaxSkew is the clock difference doctor reports: an App's JWT is refused when our
// clock is ahead of GitHub's, and rate-limit resets are read on GitHub's clock.
const doctorMaxSkew = time.Minute

// doctorMinHeadroom is the share of the rate limit doctor wants left.
const doctorMinHeadroom = 0.1

// Doctor checks, reading only, that the OU's credential is accepted (and whose it is), that
// it has what the OU's type needs (an App's Members permission; a token's org role), the
// rate-limit headroom, and GitHub's clock against ours.
func (t *target) Doctor(ctx context.Context, _ *providers.Target) []providers.Finding {
	s, org := t.s, t.cfg.org
	cred := providers.Finding{Check: "credential"}
	perm := providers.Finding{Check: "permissions"}
	var resp *gh.Response
	var err error
	if s.app() {
		var perms map[string]string
		if _, perms, err = s.inst.current(ctx); err != nil {
			cred.Detail = "GitHub App " + s.inst.app.id
			cred.Fix = t.masked(fmt.Sprintf("no installation token: %v; check app_id, the private key, and that the App is installed on %s", err, org))
			return []providers.Finding{cred}
		}
		cred.OK, cred.Detail = true, fmt.Sprintf("GitHub App %s, installation on %s", s.inst.app.id, org)
		perm.Detail = "Members: " + perms["members"]
		if aerr := s.checkAccess(ctx, true); aerr != nil {
			perm.Fix = aerr.Error()
		} else {
			perm.OK = true
		}
		_, resp, err = s.gh.Organizations.ListMembers(ctx, org, &gh.ListMembersOptions{ListOptions: gh.ListOptions{PerPage: 1}})
		if err != nil && resp == nil {
			perm.OK, perm.Fix = false, t.masked(fmt.Sprintf("listing the members of %s: %v", org, err))
		}
	} else {
		var u *gh.User
		if u, resp, err = s.gh.Users.Get(ctx, ""); err != nil {
			cred.Detail = "token"
			cred.Fix = t.masked(fmt.Sprintf("GitHub refused the token: %v; give a valid token (or a GitHub App) for the OU", err))
			return []providers.Finding{cred}
		}
		cred.OK, cred.Detail = true, "token of user "+u.GetLogin()
		m, mresp, merr := s.gh.Organizations.GetOrgMembership(ctx, u.GetLogin(), org)
		if mresp != nil {
			resp = mresp
		}
		perm.Detail = fmt.Sprintf("role %s in %s", m.GetRole(), org)
		switch {
		case merr != nil:
			perm.Detail = ""
			perm.Fix = t.masked(fmt.Sprintf("%s is not a member of %s (%v): make the token's user an owner of the org", u.GetLogin(), org, merr))
		case m.GetState() != "active":
			perm.Fix = fmt.Sprintf("%s's membership of %s is %s: accept the invitation", u.GetLogin(), org, m.GetState())
		case m.GetRole() != "admin":
			perm.Fix = fmt.Sprintf("%s is a %s of %s, not an owner: make the token's user an owner (changing members and teams needs it)", u.GetLogin(), m.GetRole(), org)
		default:
			perm.OK = true
		}
	}
	out := []providers.Finding{cred, perm}
	if resp == nil || resp.Response == nil {
		return out
	}
	return append(out, rateFinding(resp.Header), t.clockFinding(resp.Header))
}

// masked is a message with the registry's credentials masked.
func (t *target) masked(msg string) string { return t.s.h.reg.secrets.String(msg) }

// rateFinding reads the headroom of the primary rate limit from a reply's headers.
func rateFinding(h http.Header) providers.Finding {
	f := providers.Finding{Check: "rate limit"}
	limit, err1 := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	left, err2 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	if err1 != nil || err2 != nil || limit <= 0 {
		f.OK, f.Skipped, f.Detail = true, true, "GitHub sent no rate-limit headers"
		return f
	}
	f.Detail = fmt.Sprintf("%d of %d requests left", left, limit)
	f.OK = float64(left) >= doctorMinHeadroom*float64(limit)
	if !f.OK {
		reset := ""
		if r, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			reset = " (it resets at " + time.Unix(r, 0).UTC().Format(time.RFC3339) + ")"
		}
		f.Fix = "less than a tenth of the rate limit is left" + reset + ": wait, or give the OU a GitHub App (its limit grows with the org)"
	}
	return f
}

// clockFinding compares the reply's Date header with the registry's clock.
func (t *target) clockFinding(h http.Header) providers.Finding {
	f := providers.Finding{Check: "clock"}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		f.OK, f.Skipped, f.Detail = true, true, "GitHub's answer has no Date header"
		return f
	}
	// Date has whole seconds: compare with our clock truncated alike.
	skew := date.Sub(t.s.h.reg.opt.Now().Truncate(time.Second)).Round(time.Second)
	f.Detail = fmt.Sprintf("skew %v", skew)
	f.OK = skew.Abs() <= doctorMaxSkew
	if !f.OK {
		f.Fix = "this machine's clock is off by " + skew.String() + " from GitHub's: synchronise it (NTP)"
	}
	return f
}
