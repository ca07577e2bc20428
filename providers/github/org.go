package github

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/providers"
)

// OrgProvider manages a `github_org` OU: exactly two groups, admin and member, one role per
// user. Pending invitations count as present: they are never sent again, and are cancelled
// when the user is in no group. Its removals from the org cover the same users' removals from
// the org's teams (see Cover).
type OrgProvider struct {
	target
}

var roles = [2]string{"admin", "member"}

func groupCN(g *providers.Group) string {
	if g.CN != "" {
		return g.CN
	}
	return dn.FirstValue(g.DN)
}

// The capabilities the org provider claims.
var (
	_ providers.Provider     = (*OrgProvider)(nil)
	_ providers.Desirer      = (*OrgProvider)(nil)
	_ providers.Counter      = (*OrgProvider)(nil)
	_ providers.Coverer      = (*OrgProvider)(nil)
	_ providers.DeletePolicy = (*OrgProvider)(nil)
)

// DeletesGroups implements providers.DeletePolicy: the org's role groups (admin, member) are
// never deleted; people leave them.
func (p *OrgProvider) DeletesGroups(*providers.Target) bool { return false }

func (p *OrgProvider) roleDN(role string) string { return "cn=" + role + "," + p.cfg.base }

// Desire implements providers.Desirer. It checks the role groups (only admin and member; a
// user in both is refused here, before anything is read, because GitHub has one role per
// user and picking one silently would hide a mistake in the definitions), lower-cases the
// logins (as the Ruby plugin does before every request and comparison), drops `ignore`d
// users, and clears the description, which GitHub does not store (Ruby parity).
func (p *OrgProvider) Desire(_ *providers.Target, g *providers.Group) error {
	role := strings.ToLower(groupCN(g))
	if role != "admin" && role != "member" {
		return fmt.Errorf("github_org OU %s defines group %q: only admin and member are allowed", p.ou, groupCN(g))
	}
	g.Description = ""
	members := make([]string, 0, len(g.Members))
	for _, m := range g.Members {
		if k := strings.ToLower(m); !p.cfg.ignore[k] {
			members = append(members, k)
		}
	}
	g.Members = members
	p.mu.Lock()
	p.desired[role] = g
	other := p.desired[otherRole(role)]
	p.mu.Unlock()
	if other != nil {
		if both := overlap(g.Members, other.Members); len(both) > 0 {
			return fmt.Errorf("github_org OU %s: users in both admin and member (GitHub has one role per user): %s",
				p.ou, strings.Join(both, ", "))
		}
	}
	return nil
}

func otherRole(r string) string {
	if r == "admin" {
		return "member"
	}
	return "admin"
}

func overlap(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range a {
		in[strings.ToLower(x)] = true
	}
	var out []string
	for _, x := range b {
		if in[strings.ToLower(x)] {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// read is Read (see redact.go): both role groups, from the org read shared with the
// team targets of the same org. Pending invitees are put in the group that wants them (or in
// member when none does, so that the diff cancels the invitation); with `invite` disabled,
// desired users who are absent are shown as present, and with `remove` disabled, current
// users who are in no group are left out, so suppressed changes do not appear on every run.
func (p *OrgProvider) read(ctx context.Context, t *providers.Target) (*providers.State, error) {
	desired := p.desiredRoles()
	if len(desired) > 0 {
		var missing []string
		for _, r := range roles {
			if desired[r] == nil {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("github_org OU %s must define both admin and member (missing: %s)", p.ou, strings.Join(missing, ", "))
		}
	}
	ctx = p.withTarget(ctx)
	if cached, ok, err := p.predictiveOrg(ctx, desired); err != nil || ok {
		return cached, err
	}
	st, err := p.orgState(ctx)
	if err != nil {
		return nil, err
	}
	want := map[string]string{} // lower login → desired role
	for r, g := range desired {
		for _, m := range g.Members {
			want[strings.ToLower(m)] = r
		}
	}
	groups := map[string]*providers.Group{}
	for _, r := range roles {
		groups[r] = &providers.Group{DN: p.roleDN(r), CN: r}
	}
	st.mu.Lock()
	for k, r := range st.roles {
		if p.cfg.ignore[k] {
			continue
		}
		if !p.cfg.remove && want[k] == "" {
			continue
		}
		groups[r].Members = append(groups[r].Members, k)
	}
	for k := range st.pending {
		if p.cfg.ignore[k] {
			continue
		}
		r := want[k]
		if r == "" {
			if !p.cfg.remove {
				continue
			}
			r = "member"
		}
		groups[r].Members = append(groups[r].Members, k)
	}
	if !p.cfg.invite {
		for k, r := range want {
			if st.roles[k] == "" && !st.pending[k] {
				groups[r].Members = append(groups[r].Members, k)
			}
		}
	}
	st.mu.Unlock()
	if len(desired) > 0 {
		if err := p.checkSafety(st, want); err != nil {
			return nil, err
		}
	}
	out := &providers.State{Groups: map[string]*providers.Group{}}
	for _, g := range groups {
		slices.Sort(g.Members)
		out.Groups[providers.Key(g.DN)] = g
	}
	return out, nil
}

func (p *OrgProvider) desiredRoles() map[string]*providers.Group {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]*providers.Group{}
	for _, r := range roles {
		if g := p.desired[r]; g != nil {
			out[r] = g
		}
	}
	return out
}

// orgOp is one user's write: PUT a role, or DELETE the membership (role "").
type orgOp struct {
	login   string
	role    string
	changes []int
	res     userResult
}

// apply is Apply (see redact.go). It takes the changes of both role groups together so
// that a move is one PUT of the new role (never a DELETE then an invitation), computes each
// user's final role, and writes each user once.
func (p *OrgProvider) apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	ctx = p.withTarget(ctx)
	out := make([]providers.Outcome, len(changes))
	final := map[string]string{} // lower login → desired role
	for r, g := range p.desiredRoles() {
		for _, m := range g.Members {
			final[strings.ToLower(m)] = r
		}
	}
	roleOf := make([]string, len(changes))
	bad := make([]bool, len(changes))
	for i, c := range changes {
		r := strings.ToLower(dn.FirstValue(c.DN))
		if c.Kind != providers.UpdateGroup || (r != "admin" && r != "member") {
			out[i] = providers.Outcome{Change: c, Status: providers.Failed,
				Err: fmt.Errorf("github_org OU %s can only update the admin and member groups, not %s %s", p.ou, c.Kind, c.DN)}
			bad[i] = true
			continue
		}
		roleOf[i] = r
		if c.Desired != nil {
			for _, m := range c.Desired.Members {
				final[strings.ToLower(m)] = r
			}
		}
	}
	// A user in both groups is refused by Desire; check again here for callers that did not
	// call it, and fail the changes rather than guess a role.
	var both []string
	for i, c := range changes {
		for j := i + 1; j < len(changes); j++ {
			if !bad[i] && !bad[j] && roleOf[i] != roleOf[j] && c.Desired != nil && changes[j].Desired != nil {
				both = append(both, overlap(c.Desired.Members, changes[j].Desired.Members)...)
			}
		}
	}
	if len(both) > 0 {
		err := fmt.Errorf("users in both admin and member (GitHub has one role per user): %s", strings.Join(both, ", "))
		for i, c := range changes {
			if !bad[i] {
				out[i] = providers.Outcome{Change: c, Status: providers.Failed, Err: err}
			}
		}
		return out
	}
	st, err := p.orgState(ctx)
	if err != nil {
		for i, c := range changes {
			if !bad[i] {
				out[i] = providers.Outcome{Change: c, Status: providers.Failed, Err: fmt.Errorf("reading the org: %w", err)}
			}
		}
		return out
	}
	ops := map[string]*orgOp{}
	op := func(login string) *orgOp {
		k := strings.ToLower(login)
		if ops[k] == nil {
			ops[k] = &orgOp{login: login}
		}
		return ops[k]
	}
	for i, c := range changes {
		if bad[i] {
			continue
		}
		for _, u := range c.Add {
			o := op(u)
			o.login, o.role = u, roleOf[i]
			o.changes = append(o.changes, i)
		}
		for _, u := range c.Remove {
			o := op(u)
			o.role = final[strings.ToLower(u)] // "" unless the user moves to the other role
			o.changes = append(o.changes, i)
		}
	}
	// The plan was checked by Read; a caller that applies other changes is checked here too.
	if err := p.checkSafety(st, final); err != nil {
		for i, c := range changes {
			if !bad[i] {
				out[i] = providers.Outcome{Change: c, Status: providers.Failed, Err: err}
			}
		}
		return out
	}
	list := slices.SortedFunc(maps.Values(ops), func(a, b *orgOp) int { return strings.Compare(a.login, b.login) })
	forEach(len(list), p.s.h.reg.opt.WriteConcurrency, func(i int) { list[i].res = p.write(ctx, st, list[i]) })
	if left := p.s.invites.takeSkipped(p.gen); len(left) > 0 {
		slices.Sort(left)
		p.warn("users not invited: GitHub's org invitation limit was reached earlier in this run; they are invited by a later run",
			"org", p.cfg.org, "users", strings.Join(left, ","))
	}
	per := make([][]userResult, len(changes))
	for _, o := range ops {
		if o.res.warn != "" {
			p.warn(o.res.warn)
		}
		for _, i := range o.changes {
			per[i] = append(per[i], o.res)
		}
	}
	for i, c := range changes {
		if !bad[i] {
			out[i] = outcome(c, per[i])
		}
	}
	return out
}

func (p *OrgProvider) write(ctx context.Context, st *orgState, o *orgOp) userResult {
	org := p.cfg.org
	if !validLogin(o.login) {
		return badLogin(o.login, "org membership not changed")
	}
	if o.role == "" {
		if !p.cfg.remove {
			return skipped("%s: not removed from %s (the remove feature is disabled)", o.login, org)
		}
		r := p.remove(ctx, st, o.login)
		p.logWrite("removed org membership", r, "user", o.login)
		return r
	}
	invite := !st.present(o.login)
	if invite {
		if !p.cfg.invite {
			return skipped("%s: not invited to %s (the invite feature is disabled)", o.login, org)
		}
		if p.s.invites.blocked(p.gen, o.login) {
			return userResult{status: providers.Skipped} // said once, after the writes
		}
	}
	if invite {
		ctx = asInvitation(ctx, org)
	}
	r, state := p.put(ctx, st, o.login, o.role)
	msg := "set org membership"
	if state == "pending" {
		msg = "invited to the org; the membership is pending until the user accepts"
	}
	p.logWrite(msg, r, "user", o.login, "role", o.role)
	return r
}

func (p *OrgProvider) remove(ctx context.Context, st *orgState, login string) userResult {
	org := p.cfg.org
	err := p.s.write(ctx, func(ctx context.Context) error {
		_, err := p.s.gh.Organizations.RemoveOrgMembership(ctx, login, org)
		return err
	})
	switch {
	case err == nil:
		st.drop(login)
		return applied()
	case httpStatus(err) == http.StatusNotFound:
		st.drop(login)
		return already()
	}
	return writeFailure(err, "removing %s from %s", login, org)
}

// put sets a user's role (inviting them when they are not a member) and returns the state of
// the membership GitHub answered.
func (p *OrgProvider) put(ctx context.Context, st *orgState, login, role string) (userResult, string) {
	org := p.cfg.org
	var m *gh.Membership
	err := p.s.write(ctx, func(ctx context.Context) error {
		var err error
		m, _, err = p.s.gh.Organizations.EditOrgMembership(ctx, login, org, &gh.Membership{Role: &role})
		return err
	})
	switch code := httpStatus(err); {
	case err == nil:
	case errors.Is(err, ErrInvitationBudget):
		return p.limitReached(err, login), ""
	case code == http.StatusNotFound && p.cfg.ignoreNotFound:
		return skipped("%s: no such GitHub user, not added to %s as %s (ignore_not_found)", login, org, role), ""
	case code == http.StatusNotFound || (code == http.StatusForbidden && !isRateLimit(err)):
		return failed(p.s.classifyItem(ctx, fmt.Errorf("setting %s to %s in %s: %w", login, role, org, err), org, "", login)), ""
	case code == http.StatusUnprocessableEntity:
		return p.refused(ctx, err, login, role), ""
	default:
		return writeFailure(err, "setting %s to %s in %s", login, role, org), ""
	}
	state := m.GetState()
	if m.GetRole() != role || (state != "active" && state != "pending") {
		return failed(fmt.Errorf("setting %s to %s in %s: GitHub answered role %q, state %q", login, role, org, m.GetRole(), state)), state
	}
	st.set(login, role, state)
	return applied(), state
}

// limitReached handles an invitation refused for the invitation limit (GitHub's, or the
// daily budget of Options.InvitationsPerDay): no more invitations are sent in this run, and
// that is said once.
func (p *OrgProvider) limitReached(err error, login string) userResult {
	org := p.cfg.org
	if p.s.invites.trip(p.gen) {
		p.warn("the org invitation limit is used up (GitHub's: 50, or 500 for older or paid orgs, per 24 hours; or Options.InvitationsPerDay): no more invitations are sent in this run",
			"org", org, "user", login, "why", apiMessage(err))
		return userResult{status: providers.Skipped,
			warn: fmt.Sprintf("%s: not invited to %s: %v (%s); no more invitations are sent in this run", login, org, ErrInvitationLimit, apiMessage(err))}
	}
	p.s.invites.blocked(p.gen, login)
	return userResult{status: providers.Skipped}
}

// refused classifies GitHub's 422 to a role PUT: the invitation limit (invitations stop for
// the run, said once), an invalid request (a failure: nothing the user can fix), or an
// invitation GitHub would not send: a per-item failure (an ItemError: usually a user who
// blocked the org, or an organization given as a member), which fails the change but not the
// other writes.
func (p *OrgProvider) refused(ctx context.Context, err error, login, role string) userResult {
	org := p.cfg.org
	switch classifyInviteRefusal(err) {
	case refusedLimit:
		return p.limitReached(err, login)
	case refusedInvalid:
		return failed(fmt.Errorf("setting %s to %s in %s: GitHub refused the request as invalid: %s", login, role, org, apiMessage(err)))
	}
	return failed(p.s.classifyItem(ctx, fmt.Errorf("GitHub refused to make them %s of %s: %w", role, org, err), org, "", login))
}
