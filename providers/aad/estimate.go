package aad

import (
	"fmt"

	"github.com/entitlements-go/entitlements/providers"
)

var _ providers.Estimator = (*Provider)(nil)

// Estimate implements providers.Estimator: the write requests Apply sends, by kind —
// group_create (one POST each, when create_if_missing is set), member_add (one
// members@odata.bind PATCH per group and 20 members), member_remove (one DELETE each),
// description (one PATCH) and group_delete (one DELETE, with delete_groups) — and how long
// the write pacer takes to send them, after the targets of the same Graph client planned
// before. Users that turn out not to exist are counted (Apply skips them).
func (p *Provider) Estimate(changes []*providers.Change) providers.Estimate {
	writes := map[string]int{}
	adds := 0
	for _, c := range changes {
		switch c.Kind {
		case providers.CreateGroup:
			if !p.createMissing {
				continue
			}
			writes["group_create"]++
		case providers.DeleteGroup:
			if p.deleteGroups {
				writes["group_delete"]++
			}
			continue
		case providers.UpdateGroup:
			if c.DescriptionChanged {
				writes["description"]++
			}
		default:
			continue
		}
		writes["member_remove"] += len(c.Remove)
		writes["member_add"] += (len(c.Add) + maxBind - 1) / maxBind
		adds += len(c.Add)
	}
	wc := WriteCounts{GroupCreates: writes["group_create"]}
	for k, n := range writes {
		if k != "group_create" {
			wc.Batched += n
		}
	}
	e := providers.Estimate{Writes: writes, Duration: p.svc.g.pacer.simulate(wc.batchSizes(p.reg.opt.BatchSize))}
	if adds > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("%d member add(s) in %d members@odata.bind request(s)", adds, writes["member_add"]))
	}
	return e
}
