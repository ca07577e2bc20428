package github

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnsafeOrgChange is wrapped by the errors of plans (and applies) that would remove or
// demote the token's own user, or leave an org with fewer admins than `min_admins`.
var ErrUnsafeOrgChange = errors.New("unsafe change to the org's owners refused")

// DefaultMinAdmins is the default of the `min_admins` key of a github_org OU.
const DefaultMinAdmins = 1

// finalRoles is the role every active member of the org will have once want (lower login →
// desired role) is applied: ignored users and, with `remove` disabled, users in no group keep
// their role; other users in no group are removed (""). Called with st.mu held.
func (p *OrgProvider) finalRoles(st *orgState, want map[string]string) map[string]string {
	out := make(map[string]string, len(st.roles))
	for k, r := range st.roles {
		switch {
		case p.cfg.ignore[k]:
			out[k] = r
		case want[k] != "":
			out[k] = want[k]
		case !p.cfg.remove:
			out[k] = r
		default:
			out[k] = ""
		}
	}
	return out
}

// checkSafety refuses a change of the org's membership that would remove or demote the
// token's own user (a user's token; a GitHub App has none) (the run would lock itself out, or lose the right to finish), or lower
// the number of admins below min_admins (peribolos has the same two guards). An org that
// already has fewer admins than the minimum is not refused for changes that do not lower the
// count further; it is reported as a warning.
func (p *OrgProvider) checkSafety(st *orgState, want map[string]string) error {
	st.mu.Lock()
	final := p.finalRoles(st, want)
	now, after := 0, 0
	var demoted []string
	for k, r := range st.roles {
		if r == "admin" {
			now++
			if final[k] != "admin" {
				demoted = append(demoted, k)
			}
		}
		if final[k] == "admin" {
			after++
		}
	}
	viewer := strings.ToLower(st.viewer)
	if p.s.app() {
		// An App's installation has no user (its viewer is its bot, never an org member):
		// there is no own user to lock out.
		viewer = ""
	}
	vr, vf := st.roles[viewer], final[viewer]
	st.mu.Unlock()
	var errs []error
	switch {
	case viewer == "" || vr == "":
	case vf == "":
		errs = append(errs, fmt.Errorf("%w: the plan would remove %s, the token's own user, from %s; add them to admin.txt or member.txt (or to `ignore`)",
			ErrUnsafeOrgChange, st.viewer, p.cfg.org))
	case vr == "admin" && vf != "admin":
		errs = append(errs, fmt.Errorf("%w: the plan would demote %s, the token's own user, from admin to member of %s; keep them in admin.txt (or add them to `ignore`)",
			ErrUnsafeOrgChange, st.viewer, p.cfg.org))
	}
	if min := p.cfg.minAdmins; min > 0 && after < min {
		if after < now {
			slices.Sort(demoted)
			errs = append(errs, fmt.Errorf("%w: the plan would leave %s with %d admins (%d now; min_admins is %d): it removes or demotes %s",
				ErrUnsafeOrgChange, p.cfg.org, after, now, min, strings.Join(demoted, ", ")))
		} else {
			p.warn("the org has fewer admins than min_admins", "org", p.cfg.org, "admins", after, "min_admins", min)
		}
	}
	return errors.Join(errs...)
}
