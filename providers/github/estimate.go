package github

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/internal/dn"
	"github.com/entitlements-go/entitlements/providers"
)

// The capabilities the estimate adds.
var (
	_ providers.Estimator = (*OrgProvider)(nil)
	_ providers.Estimator = (*TeamProvider)(nil)
)

// planSim continues, target after target of one plan, the write scheduler's windows of a
// session from what it has sent (this run and, with a StateDir, earlier runs), so that each
// target's estimate is the time its writes add after the targets planned before it.
type planSim struct {
	gen uint64
	log writeLog
	now time.Time
}

// simulate books a target's writes (invitations first, to org) and returns how long they
// take and how many invitations the daily budget leaves out.
func (s *session) simulate(gen uint64, org string, writes, invites int) (time.Duration, int, int) {
	reg := s.h.reg
	sc := &reg.sched
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if reg.sims == nil {
		reg.sims = map[string]*planSim{}
	}
	ps := reg.sims[s.key]
	if ps == nil || ps.gen != gen {
		l := sc.log(s.key)
		ps = &planSim{gen: gen, now: reg.opt.Now(), log: writeLog{Writes: slices.Clone(l.Writes), lastWrite: l.lastWrite,
			lastInvite: l.lastInvite, Invitations: map[string][]time.Time{}}}
		for k, v := range l.Invitations {
			ps.log.Invitations[k] = slices.Clone(v)
		}
		reg.sims[s.key] = ps
	}
	org = strings.ToLower(org)
	left := -1
	if b := sc.budget.invitationsPerDay; b > 0 {
		left = max(b-len(since(ps.log.Invitations[org], ps.now.Add(-24*time.Hour))), 0)
	}
	start := ps.now
	dropped := 0
	for i := range writes {
		invite := i < invites
		t, err := sc.budget.slot(&ps.log, ps.now, invite, org)
		if err != nil {
			dropped++
			continue
		}
		ps.log.take(t, invite, org)
		ps.now = t
	}
	return ps.now.Sub(start), left, dropped
}

func (t *target) estimate(writes map[string]int, invites int) providers.Estimate {
	total := 0
	for _, n := range writes {
		total += n
	}
	d, left, dropped := t.s.simulate(t.gen, t.cfg.org, total, invites)
	e := providers.Estimate{Writes: writes, Duration: d}
	if invites > 0 && left >= 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("%d invitation(s) of the %d left today", invites, left))
	}
	if dropped > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("%d invitation(s) past the daily budget are left for a later run", dropped))
	}
	return e
}

// Estimate implements providers.Estimator: one write per user whose role changes (a move
// between admin and member is one PUT), per invitation and per removal, as Apply sends them.
func (p *OrgProvider) Estimate(changes []*providers.Change) providers.Estimate {
	final := map[string]string{}
	for r, g := range p.desiredRoles() {
		for _, m := range g.Members {
			final[strings.ToLower(m)] = r
		}
	}
	p.mu.Lock()
	st := p.st
	p.mu.Unlock()
	users := map[string]string{} // lower login → role ("" removal)
	for _, c := range changes {
		if c.Kind != providers.UpdateGroup || c.OnlyCovered() {
			continue
		}
		r := strings.ToLower(dn.FirstValue(c.DN))
		for _, u := range c.Add {
			users[strings.ToLower(u)] = r
		}
		for _, u := range c.Remove {
			k := strings.ToLower(u)
			if _, ok := users[k]; !ok {
				users[k] = final[k]
			}
		}
	}
	writes := map[string]int{}
	invites := 0
	for u, role := range users {
		switch {
		case role == "" && p.cfg.remove:
			writes["removal"]++
		case role == "":
		case st != nil && st.present(u):
			writes["role_change"]++
		case p.cfg.invite:
			writes["invitation"]++
			invites++
		}
	}
	return p.estimate(writes, invites)
}

// Estimate implements providers.Estimator: team creations, updates (parent, privacy) and
// deletions, and one write per member added, removed, promoted or demoted, as Apply sends
// them. Desired members who are not org members are not written (Read leaves them out);
// removals another target covers are not counted.
func (p *TeamProvider) Estimate(changes []*providers.Change) providers.Estimate {
	writes := map[string]int{}
	for _, c := range changes {
		if c.OnlyCovered() {
			continue
		}
		switch c.Kind {
		case providers.CreateGroup:
			writes["team_create"]++
		case providers.DeleteGroup:
			writes["team_delete"]++
			continue
		case providers.UpdateGroup:
			if slices.Contains(c.AttrsChanged, "parent") || slices.Contains(c.AttrsChanged, "privacy") {
				writes["team_update"]++
			}
		}
		writes["team_member"] += len(c.Add)
		for _, m := range c.Remove {
			if c.CoveredBy(m) == nil {
				writes["team_member"]++
			}
		}
		if c.Kind == providers.UpdateGroup && slices.Contains(c.AttrsChanged, "maintainers") && c.Current != nil && c.Desired != nil {
			adds, removes := lowerSet(c.Add), lowerSet(c.Remove)
			cur, want := lowerSet(c.Current.Attrs["maintainers"]), lowerSet(c.Desired.Attrs["maintainers"])
			members := lowerSet(c.Desired.Members)
			for k := range want {
				if !cur[k] && !adds[k] {
					writes["team_role_change"]++
				}
			}
			for k := range cur {
				if !want[k] && !removes[k] && members[k] {
					writes["team_role_change"]++
				}
			}
		}
	}
	return p.estimate(writes, 0)
}
