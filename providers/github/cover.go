package github

import (
	"slices"
	"strings"

	"github.com/entitlements-go/entitlements/providers"
)

// Cover implements providers.Coverer. Removing a user from the org removes them from every
// team of the org (GitHub does it; the Ruby plugin then skips those team removals), so a team
// removal of a user this plan removes from the org is covered by that org removal: shown in
// the plan, not sent unless the org removal fails. Such a user cannot be added to a team of
// the org either (apply would skip them as no org member; GitHub would answer the add with an
// invitation back to the org), so the add is taken out of the plan, with a warning: the plan
// shows what apply does.
func (p *OrgProvider) Cover(_ *providers.Target, mine []*providers.Change, _ *providers.Target, other providers.Provider, theirs []*providers.Change) []*providers.Change {
	tp, ok := other.(*TeamProvider)
	if !ok || !p.cfg.remove || !strings.EqualFold(p.cfg.org, tp.cfg.org) || p.s.h.restBase.String() != tp.s.h.restBase.String() {
		return theirs
	}
	leaving := p.leaving(mine)
	if len(leaving) == 0 {
		return theirs
	}
	out := make([]*providers.Change, 0, len(theirs))
	for _, c := range theirs {
		if c.Kind != providers.UpdateGroup && c.Kind != providers.CreateGroup {
			out = append(out, c)
			continue
		}
		var covered []providers.Cover
		if c.Kind == providers.UpdateGroup {
			for _, u := range c.Remove {
				if by := leaving[strings.ToLower(u)]; by != nil && c.CoveredBy(u) == nil {
					covered = append(covered, providers.Cover{Member: u, By: by})
				}
			}
		}
		var add, dropped []string
		for _, u := range c.Add {
			if leaving[strings.ToLower(u)] != nil {
				dropped = append(dropped, u)
			} else {
				add = append(add, u)
			}
		}
		if len(covered) == 0 && len(dropped) == 0 {
			out = append(out, c)
			continue
		}
		cp := *c
		cp.Covered = append(slices.Clip(c.Covered), covered...)
		cp.Add = add
		if len(dropped) > 0 {
			tp.warn("users this plan removes from the org are not added to the team (the add would invite them back to the org)",
				"org", p.cfg.org, "team", slugOf(c.Desired), "users", strings.Join(dropped, ","), "removed_by", p.ou)
		}
		if slices.Contains(cp.AttrsChanged, "maintainers") && c.Current != nil &&
			providers.SameFold(without(c.Desired.Attrs["maintainers"], leaving), without(c.Current.Attrs["maintainers"], leaving)) {
			// The maintainers differ only by users who leave the org: nothing to write.
			cp.AttrsChanged = slices.DeleteFunc(slices.Clone(cp.AttrsChanged), func(a string) bool { return a == "maintainers" })
		}
		if cp.Kind == providers.UpdateGroup && len(cp.Add) == 0 && len(cp.Remove) == 0 && !cp.DescriptionChanged && len(cp.AttrsChanged) == 0 {
			continue
		}
		out = append(out, &cp)
	}
	return out
}

// leaving maps the users this org plan removes from the org (lower login) to the change
// that removes them: a removal from a role group of a user whom no role group wants (a user
// moving to the other role stays in the org).
func (p *OrgProvider) leaving(mine []*providers.Change) map[string]*providers.Change {
	final := map[string]bool{}
	for _, g := range p.desiredRoles() {
		for _, m := range g.Members {
			final[strings.ToLower(m)] = true
		}
	}
	out := map[string]*providers.Change{}
	for _, c := range mine {
		if c.Kind != providers.UpdateGroup {
			continue
		}
		for _, u := range c.Remove {
			if k := strings.ToLower(u); !final[k] && validLogin(k) {
				out[k] = c
			}
		}
	}
	return out
}

func without(v []string, drop map[string]*providers.Change) []string {
	var out []string
	for _, x := range v {
		if drop[strings.ToLower(x)] == nil {
			out = append(out, x)
		}
	}
	return out
}
