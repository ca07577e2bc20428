package aad

import (
	"context"
	"errors"
	"fmt"
	"github.com/entitlements-go/entitlements/internal/retry"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/microsoftgraph/msgraph-sdk-go/models"

	"github.com/entitlements-go/entitlements/providers"
)

// writeKind is what one write item does.
type writeKind uint8

const (
	addMember writeKind = iota
	removeMember
	setDescription
	deleteGroup
)

// changeOp tracks one Change through Apply.
type changeOp struct {
	c       *providers.Change
	groupID string
	// decided is set when the change's outcome is known before any member write (refused,
	// or its group could not be created).
	decided *providers.Outcome
	created bool
	// adopted is set when the group was found by name after a create whose reply was lost.
	adopted bool
	writes  []*write
}

// write is one Graph write of a change: one $batch item, or (a member add) one reference of
// a members@odata.bind PATCH that adds up to 20 members to its group.
type write struct {
	op       *changeOp
	kind     writeKind
	uid      string
	objectID string
	it       *item
	status   providers.Status
	err      error
	done     bool
	// unseenRounds counts the rounds whose outcome was not seen.
	unseenRounds int
}

func (w *write) String() string {
	switch w.kind {
	case addMember:
		return "add " + w.uid
	case removeMember:
		return "remove " + w.uid
	case setDescription:
		return "set description"
	}
	return "delete group"
}

// Apply implements providers.Provider. Groups to create are created first (one POST each,
// several at once); then the member adds of each group are packed 20 to a members@odata.bind
// PATCH, and every such PATCH, member removal, description change and group deletion of the
// target becomes one $batch item: a group gaining N members costs ceil(N/20) items, W items
// cost ceil(W/20) batches. Writes are paced to the client's write budget (schedule.go). Each Change gets
// one Outcome: Unknown if any of its writes has an outcome that could not be established,
// else Failed if any failed, else Applied if any was done, else Skipped or AlreadyInState.
// The credentials of the Registry are masked in the outcomes' errors.
func (p *Provider) Apply(ctx context.Context, t *providers.Target, changes []*providers.Change) []providers.Outcome {
	out := p.apply(ctx, t, changes)
	for i := range out {
		out[i].Err = p.reg.secrets.Error(out[i].Err)
	}
	return out
}

func (p *Provider) apply(ctx context.Context, _ *providers.Target, changes []*providers.Change) []providers.Outcome {
	p.mu.Lock()
	rs := p.state
	p.mu.Unlock()
	if rs == nil {
		rs = &readState{groups: map[string]*readGroup{}}
	}
	ops := make([]*changeOp, len(changes))
	existing := p.lookupBeforeCreate(ctx, changes)
	var wg sync.WaitGroup
	for i, c := range changes {
		op := &changeOp{c: c}
		ops[i] = op
		rg := rs.groups[providers.Key(c.DN)]
		switch c.Kind {
		case providers.CreateGroup:
			if !p.createMissing {
				op.decided = &providers.Outcome{Change: c, Status: providers.Failed,
					Err: fmt.Errorf("no Entra ID group has mailNickname %q and create_if_missing is not set", groupName(c.Desired))}
				continue
			}
			name := groupName(c.Desired)
			if ex := existing[strings.ToLower(name)]; ex.err != nil {
				op.decided = &providers.Outcome{Change: c, Status: providers.Failed,
					Err: fmt.Errorf("creating group %s: not sent: %w", name, ex.err)}
				continue
			} else if ex.group != nil {
				// Created since the plan read (another run, a person, a create whose reply
				// was lost): adopted, never a second group for the file. Its members are
				// what the adds below find; the next plan removes any others.
				op.groupID, op.adopted = ex.group.ID, true
				continue
			}
			wg.Go(func() { p.create(ctx, op) })
		case providers.UpdateGroup, providers.DeleteGroup:
			if c.Kind == providers.DeleteGroup && !p.deleteGroups {
				op.decided = &providers.Outcome{Change: c, Status: providers.Failed, Err: errors.New("deleting groups needs delete_groups: true")}
				continue
			}
			if rg == nil {
				op.decided = &providers.Outcome{Change: c, Status: providers.Failed, Err: errors.New("the group was not read in this run; plan again")}
				continue
			}
			if c.Kind == providers.DeleteGroup && !rg.deletable {
				op.decided = &providers.Outcome{Change: c, Status: providers.Failed,
					Err: fmt.Errorf("refusing to delete group %s: the read did not find it to be an unclaimed group under managed_prefix that this provider could have created", rg.id)}
				continue
			}
			op.groupID = rg.id
		default:
			op.decided = &providers.Outcome{Change: c, Status: providers.Failed, Err: fmt.Errorf("the AAD provider cannot apply %s changes", c.Kind)}
		}
	}
	wg.Wait()

	if err := p.planWrites(ctx, ops, rs); err != nil {
		for _, op := range ops {
			if op.decided == nil {
				op.decided = &providers.Outcome{Change: op.c, Status: providers.Failed, Err: err}
			}
		}
	}
	p.runWrites(ctx, ops)

	out := make([]providers.Outcome, len(ops))
	touched := map[string]bool{}
	for i, op := range ops {
		out[i] = op.outcome()
		if op.groupID != "" {
			touched[op.groupID] = true
		}
		p.svc.groups.Invalidate("nick:" + strings.ToLower(groupName(op.groupOf())))
		if oid := objectID(op.groupOf()); oid != "" {
			p.svc.groups.Invalidate("id:" + strings.ToLower(oid))
		}
	}
	for id := range touched {
		p.svc.member.Invalidate(id)
	}
	p.logWrites(ctx, ops)
	return out
}

// logWrites logs every write of an Apply through Options.Logger: what it changed (the group,
// the member added or removed, the description set, the group created or deleted) and its
// outcome; info level, warn level for a write that failed or whose outcome is unknown.
func (p *Provider) logWrites(ctx context.Context, ops []*changeOp) {
	log := p.reg.opt.Logger
	level := func(st providers.Status) slog.Level {
		if st.Failure() {
			return slog.LevelWarn
		}
		return slog.LevelInfo
	}
	for _, op := range ops {
		c := op.c
		base := []any{"ou", p.ou, "group", c.DN}
		if c.Kind == providers.CreateGroup {
			st, err := providers.Applied, error(nil)
			if op.decided != nil {
				st, err = op.decided.Status, op.decided.Err
			}
			args := append(slices.Clone(base), "action", "create-group", "mail_nickname", groupName(c.Desired), "group_id", op.groupID,
				"status", st.String())
			if op.adopted {
				args = append(args, "adopted", true)
			}
			if err != nil {
				args = append(args, "err", err)
			}
			log.Log(ctx, level(st), "aad write", args...)
		} else if op.decided != nil {
			log.Log(ctx, level(op.decided.Status), "aad write not sent", append(slices.Clone(base), "change", c.Kind.String(),
				"status", op.decided.Status.String(), "err", op.decided.Err)...)
		}
		for _, w := range op.writes {
			args := append(slices.Clone(base), "group_id", op.groupID)
			switch w.kind {
			case addMember, removeMember:
				args = append(args, "action", map[writeKind]string{addMember: "add-member", removeMember: "remove-member"}[w.kind],
					"member", w.uid, "upn", p.upn(w.uid), "member_id", w.objectID)
			case setDescription:
				args = append(args, "action", "set-description", "description", c.Desired.Description)
			case deleteGroup:
				args = append(args, "action", "delete-group")
			}
			args = append(args, "status", w.status.String())
			if w.err != nil {
				args = append(args, "err", w.err)
			}
			log.Log(ctx, level(w.status), "aad write", args...)
		}
	}
}

func (op *changeOp) groupOf() *providers.Group {
	if op.c.Desired != nil {
		return op.c.Desired
	}
	return op.c.Current
}

// planWrites turns the changes into write items, resolving the object IDs of users to add
// that Read did not already learn.
func (p *Provider) planWrites(ctx context.Context, ops []*changeOp, rs *readState) error {
	var unknown []string
	seen := map[string]bool{}
	for _, op := range ops {
		if op.decided != nil {
			continue
		}
		c := op.c
		rg := rs.groups[providers.Key(c.DN)]
		switch c.Kind {
		case providers.DeleteGroup:
			op.writes = append(op.writes, &write{op: op, kind: deleteGroup})
			continue
		case providers.UpdateGroup:
			if c.DescriptionChanged {
				op.writes = append(op.writes, &write{op: op, kind: setDescription})
			}
		}
		for _, uid := range c.Remove {
			w := &write{op: op, kind: removeMember, uid: uid}
			if rg != nil {
				w.objectID = rg.members[strings.ToLower(uid)]
			}
			op.writes = append(op.writes, w)
		}
		for _, uid := range c.Add {
			op.writes = append(op.writes, &write{op: op, kind: addMember, uid: uid})
		}
		for _, w := range op.writes {
			if (w.kind == addMember || w.kind == removeMember) && w.objectID == "" {
				if e, ok := p.svc.users.Peek(strings.ToLower(p.upn(w.uid))); ok && e.Found {
					w.objectID = e.Value
				} else if l := strings.ToLower(p.upn(w.uid)); !seen[l] {
					seen[l] = true
					unknown = append(unknown, p.upn(w.uid))
				}
			}
		}
	}
	var ids map[string]string
	if len(unknown) > 0 {
		var err error
		if ids, err = p.svc.resolveUsers(ctx, unknown); err != nil {
			return err
		}
	}
	for _, op := range ops {
		for _, w := range op.writes {
			if (w.kind != addMember && w.kind != removeMember) || w.objectID != "" {
				continue
			}
			if id, ok := ids[strings.ToLower(p.upn(w.uid))]; ok {
				w.objectID = id
				continue
			}
			w.done = true
			switch {
			case w.kind == removeMember:
				w.status = providers.AlreadyInState // a user that does not exist is no member
			case p.ignoreNotFound:
				w.status, w.err = providers.Skipped, fmt.Errorf("user %s not found in Entra ID", p.upn(w.uid))
			default:
				w.status, w.err = providers.Failed, fmt.Errorf("user %s not found in Entra ID", p.upn(w.uid))
			}
		}
	}
	return nil
}

// maxBind is the most members one PATCH may add through members@odata.bind ("Add members",
// learn.microsoft.com/graph/api/group-post-members: "When using the API to add multiple
// members in one request, you can add up to only 20 members").
const maxBind = 20

// unit is what one $batch item sends: one write, or up to maxBind member adds to one group.
type unit struct {
	writes []*write
	it     *item
}

// pack turns writes into units: the member adds of each group in chunks of up to maxBind, in
// the order the writes come (the first chunk of a group where its first add was), and every
// other write alone.
func pack(ws []*write) []*unit {
	var out []*unit
	open := map[string]*unit{} // group ID -> its chunk being filled
	for _, w := range ws {
		if w.kind != addMember {
			out = append(out, &unit{writes: []*write{w}})
			continue
		}
		u := open[w.op.groupID]
		if u == nil || len(u.writes) == maxBind {
			u = &unit{}
			open[w.op.groupID] = u
			out = append(out, u)
		}
		u.writes = append(u.writes, w)
	}
	return out
}

// alreadyExists reports Graph's answer to an add of a member the group has: 400 "One or more
// added object references already exist for the following modified properties: 'members'."
func alreadyExists(it *item) bool {
	_, msg := it.odataError()
	return it.err == nil && it.status == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "already exist")
}

// settleUnit settles the writes of a unit Graph answered (not unseen, not lagging) and returns
// the units to send again. members@odata.bind is all or nothing: one member already in the
// group fails the whole PATCH with 400 "already exist", and one object gone fails it with 404
// (naming the object), and nothing is added. So an "already exist" chunk is split in halves,
// each sent again, down to single adds, where "already exist" means already in state; a 404
// settles the add it names and sends the others again (halves when it names none of them).
func (p *Provider) settleUnit(u *unit) []*unit {
	it := u.it
	if len(u.writes) > 1 && it.err == nil {
		_, msg := it.odataError()
		split := alreadyExists(it)
		if it.status == http.StatusNotFound {
			for i, w := range u.writes {
				if strings.Contains(msg, w.objectID) {
					p.settle(w)
					return []*unit{{writes: slices.Delete(slices.Clone(u.writes), i, i+1)}}
				}
			}
			split = true
		}
		if split {
			p.reg.counters.splits.Add(1)
			half := len(u.writes) / 2
			return []*unit{{writes: u.writes[:half:half]}, {writes: u.writes[half:]}}
		}
	}
	for _, w := range u.writes {
		p.settle(w)
	}
	return nil
}

// request builds the $batch item of a unit.
func (p *Provider) request(ctx context.Context, u *unit) (*item, error) {
	w := u.writes[0]
	gb := p.svc.g.client.Groups().ByGroupId(w.op.groupID)
	it := &item{write: true}
	var err error
	switch w.kind {
	case addMember:
		// PATCH /groups/{id} with "members@odata.bind": [".../directoryObjects/{id}", ...]
		// ("Add members", example "Add multiple members to a group in a single request").
		refs := make([]string, len(u.writes))
		for i, w := range u.writes {
			refs[i] = p.svc.g.base + "/directoryObjects/" + w.objectID
		}
		g := models.NewGroup()
		g.SetAdditionalData(map[string]any{"members@odata.bind": refs})
		it.ri, err = gb.ToPatchRequestInformation(ctx, g, nil)
	case removeMember:
		// Always .../members/{id}/$ref: without /$ref Graph deletes the user itself.
		it.ri, err = gb.Members().ByDirectoryObjectId(w.objectID).Ref().ToDeleteRequestInformation(ctx, nil)
	case setDescription:
		desc := w.op.c.Desired.Description
		if desc == "" {
			return nil, errors.New("clearing a group description is not supported")
		}
		g := models.NewGroup()
		g.SetDescription(&desc)
		it.ri, err = gb.ToPatchRequestInformation(ctx, g, nil)
	case deleteGroup:
		it.ri, err = gb.ToDeleteRequestInformation(ctx, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	return it, nil
}

// maxWriteRounds bounds how often writes whose outcome was not seen are read back and sent
// again.
const maxWriteRounds = 3

// firstLagWait is the first wait before member adds refused for replication lag are sent
// again; it doubles per retry within Options.ReplicationLagWait.
const firstLagWait = 500 * time.Millisecond

// runWrites sends the writes in batches, member adds packed into members@odata.bind chunks,
// and settles each. A write whose envelope failed unseen is never simply replayed: member
// writes are read back first (the group's member list, bypassing the cache) and only what is
// still missing is sent again; description and group deletions set a value, so they are sent
// again as they are. Member adds that Graph refused for replication lag are retried the same
// way, after a wait. A chunk refused because a member is already in the group is split and
// sent again (settleUnit).
func (p *Provider) runWrites(ctx context.Context, ops []*changeOp) {
	var pending []*write
	for _, op := range ops {
		for _, w := range op.writes {
			if !w.done {
				pending = append(pending, w)
			}
		}
	}
	var units []*unit // split chunks, sent as they are
	var lagWaited time.Duration
	lagWait := firstLagWait
	for len(pending) > 0 || len(units) > 0 {
		units = append(units, pack(pending)...)
		items := make([]*item, 0, len(units))
		var sent []*unit
		for _, u := range units {
			it, err := p.request(ctx, u)
			if err != nil {
				for _, w := range u.writes {
					w.done, w.status, w.err = true, providers.Failed, err
				}
				continue
			}
			u.it = it
			for _, w := range u.writes {
				w.it = it
			}
			items = append(items, it)
			sent = append(sent, u)
		}
		p.svc.g.runBatch(ctx, items)
		var unseen, lagged []*write
		units = nil
		for _, u := range sent {
			switch {
			case u.it.unknown:
				for _, w := range u.writes {
					w.unseenRounds++
				}
				unseen = append(unseen, u.writes...)
			case p.replicationLag(u.writes[0]):
				lagged = append(lagged, u.writes...)
			default:
				units = append(units, p.settleUnit(u)...)
			}
		}
		pending = nil
		if len(unseen) > 0 {
			var again []*write
			for _, w := range unseen {
				if w.unseenRounds >= maxWriteRounds || ctx.Err() != nil {
					w.done, w.status, w.err = true, providers.Unknown, w.it.err
					continue
				}
				again = append(again, w)
			}
			if len(again) > 0 {
				pending = p.readBack(ctx, again, false)
			}
		}
		if len(lagged) > 0 {
			budget := p.reg.opt.ReplicationLagWait
			if budget < 0 || lagWaited+lagWait > budget || ctx.Err() != nil {
				for _, w := range lagged {
					p.settle(w)
					w.err = fmt.Errorf("%w (Graph still did not know the group after %s of retries: replication lag after a "+
						"create, or a user deleted meanwhile; the next run adds it)", w.err, lagWaited)
				}
				continue
			}
			if err := p.svc.g.wait(ctx, lagWait); err != nil {
				for _, w := range lagged {
					p.settle(w)
				}
				continue
			}
			lagWaited += lagWait
			lagWait *= 2
			pending = append(pending, p.readBack(ctx, lagged, true)...)
		}
	}
}

// replicationLag reports a member add that Graph refused because its replicas do not know
// the group (or the user) yet: 400 "The source resource object or one of the objects being
// referenced do not exist." ("Add members", Graph v1.0). Nothing was written.
func (p *Provider) replicationLag(w *write) bool {
	if w.kind != addMember || w.it.err != nil || w.it.status != http.StatusBadRequest {
		return false
	}
	_, msg := w.it.odataError()
	return strings.Contains(strings.ToLower(msg), "do not exist")
}

// settle maps a write's reply to its status (the "already in state" replies of spec 4.4).
func (p *Provider) settle(w *write) {
	it := w.it
	w.done = true
	if it.err != nil {
		w.status, w.err = providers.Failed, fmt.Errorf("%s: %w", w, it.err)
		return
	}
	code, msg := it.odataError()
	switch {
	case it.ok():
		w.status = providers.Applied
	case w.kind == addMember && alreadyExists(it):
		w.status = providers.AlreadyInState
	case w.kind == addMember && it.status == http.StatusNotFound && strings.Contains(msg, w.objectID):
		w.err = fmt.Errorf("user %s no longer exists in Entra ID", p.upn(w.uid))
		w.status = providers.Failed
		if p.ignoreNotFound {
			w.status = providers.Skipped
		}
	case (w.kind == removeMember || w.kind == deleteGroup) && it.status == http.StatusNotFound:
		w.status = providers.AlreadyInState
	default:
		w.status, w.err = providers.Failed, fmt.Errorf("%s: %d %s: %s", w, it.status, code, msg)
	}
}

// readBack re-reads the groups of member writes whose outcome was not seen, settles those
// already in the wanted state and returns the writes to send again. If the read fails, the
// writes stay Unknown: they are never replayed blind. notDone marks writes that Graph
// answered without executing them (replication lag): if the read fails they are sent again,
// since an add already done answers "already exist".
func (p *Provider) readBack(ctx context.Context, unseen []*write, notDone bool) []*write {
	var again []*write
	var ids []string
	seen := map[string]bool{}
	for _, w := range unseen {
		if w.kind != addMember && w.kind != removeMember {
			again = append(again, w) // setting a value or deleting is safe to repeat
			continue
		}
		if !seen[w.op.groupID] {
			seen[w.op.groupID] = true
			ids = append(ids, w.op.groupID)
			p.svc.member.Invalidate(w.op.groupID)
		}
	}
	if len(ids) == 0 {
		return again
	}
	lists, err := p.svc.readMembers(ctx, ids)
	for _, w := range unseen {
		if w.kind != addMember && w.kind != removeMember {
			continue
		}
		if err != nil {
			if notDone {
				again = append(again, w)
				continue
			}
			w.done, w.status, w.err = true, providers.Unknown, fmt.Errorf("%s: outcome not seen (%v) and reading back failed: %w", w, w.it.err, err)
			continue
		}
		present := false
		if ml := lists[w.op.groupID]; ml != nil {
			for _, m := range ml.members {
				if strings.EqualFold(m.ID, w.objectID) {
					present = true
					break
				}
			}
		}
		if present == (w.kind == addMember) {
			w.done, w.status = true, providers.Applied
			continue
		}
		again = append(again, w)
	}
	return again
}

// create creates the group of a CreateGroup change: security-enabled, not mail-enabled,
// mailNickname and displayName from the file name. A create is not safe to repeat: Graph does
// not refuse a second group with the same mailNickname, and every later read of the name
// would then fail as ambiguous. So the POST is sent again only after a reply that proves
// Graph did not run it (429, before execution). After any other failure once the request may
// have reached Graph (no reply, a 5xx, a reply without a group ID), the provider only looks
// the name up (a few times: Graph's replicas can lag behind a create) and adopts the group
// it finds; if it finds none, the outcome is Unknown and the create is NOT sent again in this
// run. The next run looks the name up like any other and adopts the group if it was created
// (or creates it if it was not).
func (p *Provider) create(ctx context.Context, op *changeOp) {
	c := op.c
	name := groupName(c.Desired)
	body := models.NewGroup()
	no, yes := false, true
	body.SetDisplayName(&name)
	body.SetMailNickname(&name)
	body.SetMailEnabled(&no)
	body.SetSecurityEnabled(&yes)
	if d := c.Desired.Description; d != "" {
		body.SetDescription(&d)
	}
	fail := func(st providers.Status, err error) {
		op.decided = &providers.Outcome{Change: c, Status: st, Err: fmt.Errorf("creating group %s: %w", name, err)}
	}
	for attempt := 1; ; attempt++ {
		var g models.Groupable
		p.reg.counters.creates.Add(1)
		sent, err := p.svc.g.send(ctx, func(ctx context.Context) error {
			var err error
			g, err = p.svc.g.client.Groups().Post(ctx, body, nil)
			return err
		})
		if err == nil && g != nil && g.GetId() != nil {
			op.groupID, op.created = *g.GetId(), true
			return
		}
		status, ra := apiStatus(err)
		switch {
		case err != nil && status == 0 && !sent && !transportError(err):
			fail(providers.Failed, err) // never reached Graph (no token, no slot)
			return
		case status == http.StatusTooManyRequests:
			// Throttled before execution: the one reply that proves no group was made.
			p.reg.counters.throttled.Add(1)
			if attempt >= p.reg.opt.MaxAttempts {
				fail(providers.Failed, fmt.Errorf("giving up after %d attempts: %w", attempt, err))
				return
			}
			wait, ok := retry.After(ra, p.reg.opt.Now())
			if !ok {
				wait = p.svc.g.backoff(attempt)
			}
			if werr := p.svc.g.wait(ctx, wait); werr != nil {
				fail(providers.Failed, fmt.Errorf("%w (then %w)", err, werr))
				return
			}
			continue
		case status >= 400 && status < 500:
			code, msg := errorCode(err)
			fail(providers.Failed, fmt.Errorf("%d %s: %s: %w", status, code, msg, err))
			return
		}
		if err == nil {
			err = errors.New("the reply carried no group ID")
		}
		p.adoptUnseen(ctx, op, name, ra, err)
		return
	}
}

// existingGroup is what a lookup just before a create found for one name.
type existingGroup struct {
	group *groupInfo
	err   error // the lookup failed, or found several groups: nothing is created
}

// lookupBeforeCreate looks up, bypassing the caches, the names of the groups the changes
// create (one bulk read, 300 names per $batch): the plan's read may be minutes old (a
// long-running embedder, a plan applied later), and Graph takes a second security group with
// the same mailNickname (it is unique only among Microsoft 365 groups), so a create is sent
// only for a name that no group has right now. Keys are lower-case names.
func (p *Provider) lookupBeforeCreate(ctx context.Context, changes []*providers.Change) map[string]existingGroup {
	var names []string
	seen := map[string]bool{}
	for _, c := range changes {
		if c.Kind != providers.CreateGroup || c.Desired == nil || !p.createMissing {
			continue
		}
		if n := groupName(c.Desired); !seen[strings.ToLower(n)] {
			seen[strings.ToLower(n)] = true
			names = append(names, n)
		}
	}
	out := make(map[string]existingGroup, len(names))
	if len(names) == 0 {
		return out
	}
	found, err := p.svc.lookupGroups(ctx, names, nil, true)
	for _, c := range changes {
		if c.Kind != providers.CreateGroup || c.Desired == nil {
			continue
		}
		n := groupName(c.Desired)
		k := strings.ToLower(n)
		switch gs := found["nick:"+k]; {
		case err != nil:
			out[k] = existingGroup{err: fmt.Errorf("looking the name up just before creating failed: %w", err)}
		case len(gs) == 1:
			out[k] = existingGroup{group: gs[0]}
		case len(gs) > 1:
			out[k] = existingGroup{err: ambiguous(c.DN, n, gs)}
		}
	}
	return out
}

// unseenLookups is how many times a name is looked up after a create whose outcome was not
// seen, with backoff before each: Graph's directory replicas can take seconds to show a new
// group.
const unseenLookups = 3

// adoptUnseen settles a create whose outcome was not seen (cause): the group found by name is
// adopted; otherwise the change is Unknown, and the create is never sent again in this run.
func (p *Provider) adoptUnseen(ctx context.Context, op *changeOp, name, retryAfterHeader string, cause error) {
	c := op.c
	var lerr error
	for i := 1; i <= unseenLookups; i++ {
		wait := p.svc.g.backoff(i)
		if d, ok := retry.After(retryAfterHeader, p.reg.opt.Now()); ok && i == 1 {
			wait = d
		}
		if werr := p.svc.g.wait(ctx, wait); werr != nil {
			lerr = werr
			break
		}
		found, err := p.svc.lookupGroups(ctx, []string{name}, nil, true)
		if err != nil {
			lerr = err
			continue
		}
		lerr = nil
		switch gs := found["nick:"+strings.ToLower(name)]; len(gs) {
		case 0:
			continue
		case 1:
			op.groupID, op.created, op.adopted = gs[0].ID, true, true
			return
		default:
			op.decided = &providers.Outcome{Change: c, Status: providers.Unknown,
				Err: fmt.Errorf("creating group %s: outcome not seen (%w), and then: %w", name, cause, ambiguous(c.DN, name, gs))}
			return
		}
	}
	why := "no group with this mailNickname is visible yet (Graph replicas can lag behind a create)"
	if lerr != nil {
		why = fmt.Sprintf("looking it up failed: %v", lerr)
	}
	op.decided = &providers.Outcome{Change: c, Status: providers.Unknown,
		Err: fmt.Errorf("creating group %s: outcome not seen (%w) and %s; the create is not sent again in this run, so as not to "+
			"make a second group with this mailNickname: the next run adopts the group if it was created, or creates it", name, cause, why)}
}

// outcome folds the writes of a change into its Outcome.
func (op *changeOp) outcome() providers.Outcome {
	if op.decided != nil {
		return *op.decided
	}
	var errs []error
	var unknown, failed, applied, skipped bool
	applied = op.created
	for _, w := range op.writes {
		switch w.status {
		case providers.Unknown:
			unknown = true
		case providers.Failed:
			failed = true
		case providers.Applied:
			applied = true
		case providers.Skipped:
			skipped = true
		}
		if w.err != nil {
			errs = append(errs, w.err)
		}
	}
	st := providers.AlreadyInState
	switch {
	case unknown:
		st = providers.Unknown
	case failed:
		st = providers.Failed
	case applied:
		st = providers.Applied
	case skipped:
		st = providers.Skipped
	}
	return providers.Outcome{Change: op.c, Status: st, Err: errors.Join(errs...)}
}
