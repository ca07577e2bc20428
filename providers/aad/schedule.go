package aad

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The write pacer keeps a Graph client's writes (one application in one tenant) under the
// write quota Graph documents for the identity and access service ("Microsoft Graph
// service-specific throttling limits", learn.microsoft.com/graph/throttling-limits, "Identity
// and access service limits"): 3,000 requests per 2 minutes and 30 seconds per
// application+tenant pair, where every POST, PATCH, PUT and DELETE on a directory path costs
// one write. Requests in a $batch are evaluated one by one ("Microsoft Graph throttling
// guidance", learn.microsoft.com/graph/throttling, "Throttling and batching"), so a batch of
// 20 write sub-requests costs 20 writes; a PATCH adding 20 members through
// members@odata.bind costs one.
//
// The budget is a sliding window over the starts of the writes the client sent
// (Options.WritesPerWindow, default 90% of the quota), with writes spaced evenly through the
// window (Options.WriteInterval, default window/budget, about 56 ms): a batch of n writes
// earns a pause of n intervals before the next one, so a large apply flows at the budget's
// rate instead of bursting the whole window at once (which would also spend the resource-unit
// quota of 3,500 per 10 seconds of a small tenant). A write waits until the pause after the
// previous one has passed and the window has room for all of its sub-requests; the slot is
// taken before the wait, under a lock held until the slot comes, so concurrent batches of one
// client start in slot order. Write batches are sent one at a time by default
// (Options.WriteConcurrency): each is slotted after the previous reply, and its throttle
// header, was read.
//
// Graph also reports how much of a limit an application has used: a reply carries
// x-ms-throttle-limit-percentage (0.8 to 1.8, the fraction of the limit used; only sent above
// 0.8) when the application is close to a limit. That count includes writes this client did
// not send (another run or tool with the same application). When a write's reply carries a
// value at or above Options.ThrottleThreshold (default 0.9, the default budget's share of the
// quota, so a run alone at full pace never passes it), the pacer books the writes Graph counts
// beyond its own window as if they had just been sent: the next writes wait until the window
// has room again (at most one window, 2.5 minutes). The tenant-wide write quota (18,000 per
// 5 minutes for all applications) is not paced: one application at its budget sends at most
// 5,400 in 5 minutes.

// Graph's documented write quota.
const (
	// WriteWindow is the window of Graph's write quota per application and tenant.
	WriteWindow = 150 * time.Second
	// DefaultWriteQuota is Graph's write quota per application and tenant per WriteWindow.
	DefaultWriteQuota = 3000
	// DefaultThrottleThreshold is the x-ms-throttle-limit-percentage at or above which the
	// pacer books the writes Graph counts beyond its own.
	DefaultThrottleThreshold = 0.9
)

// throttleHeader is the header in which Graph reports the fraction of a limit used.
const throttleHeader = "x-ms-throttle-limit-percentage"

// writeBudget is the pacing of one Graph client (the options' values; 0 means no limit).
type writeBudget struct {
	interval  time.Duration
	perWindow int
	quota     int
	threshold float64 // 0: the throttle header is ignored
}

func budgetOf(o Options) writeBudget {
	b := writeBudget{interval: max(o.WriteInterval, 0), perWindow: max(o.WritesPerWindow, 0), quota: o.WriteQuota}
	if o.ThrottleThreshold > 0 {
		b.threshold = o.ThrottleThreshold
	}
	return b
}

// off reports a budget that never waits.
func (b writeBudget) off() bool { return b.interval == 0 && b.perWindow == 0 }

// writeLog is what a client sent: the starts of its writes in the last window, sorted (a
// batch of n writes is n entries), with the writes Graph reported beyond them, and the
// start and size of its last batch.
type writeLog struct {
	writes []time.Time
	last   time.Time
	lastN  int
}

// since returns the times of ts after cutoff (ts is sorted).
func since(ts []time.Time, cutoff time.Time) []time.Time {
	i, _ := slices.BinarySearchFunc(ts, cutoff, func(a, b time.Time) int { return a.Compare(b) })
	for i < len(ts) && !ts[i].After(cutoff) {
		i++
	}
	return ts[i:]
}

// slot is the earliest start at or after now for a batch of n writes.
func (b writeBudget) slot(l *writeLog, now time.Time, n int) time.Time {
	t := now
	if b.interval > 0 && !l.last.IsZero() {
		if s := l.last.Add(time.Duration(l.lastN) * b.interval); s.After(t) {
			t = s
		}
	}
	if b.perWindow > 0 {
		n = min(n, b.perWindow) // a batch larger than the budget waits for an empty window
		in := since(l.writes, t.Add(-WriteWindow))
		if m := len(in) + n - b.perWindow; m > 0 {
			// Once the m oldest writes of the window have left it, there is room.
			t = in[m-1].Add(WriteWindow)
		}
	}
	return t
}

// take records a batch of n writes starting at t and forgets what the window no longer needs.
func (l *writeLog) take(t time.Time, n int) {
	l.writes = since(l.writes, t.Add(-WriteWindow))
	i, _ := slices.BinarySearchFunc(l.writes, t, func(a, b time.Time) int {
		if a.After(b) {
			return 1
		}
		return -1 // after every entry equal to t
	})
	l.writes = slices.Insert(l.writes, i, slices.Repeat([]time.Time{t}, n)...)
	if !t.Before(l.last) {
		l.last, l.lastN = t, n
	}
}

// book records the writes Graph counts beyond the log's (the throttle header's fraction p of
// the quota) as sent at now, and returns how many it booked.
func (b writeBudget) book(l *writeLog, now time.Time, p float64) int {
	if b.threshold <= 0 || b.quota <= 0 || p < b.threshold || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0
	}
	// The header has a few decimals: do not let a rounding error book a write.
	counted := int(math.Ceil(min(p, 2)*float64(b.quota) - 1e-6))
	extra := counted - len(since(l.writes, now.Add(-WriteWindow)))
	if extra <= 0 {
		return 0
	}
	last, lastN := l.last, l.lastN
	l.take(now, extra)
	l.last, l.lastN = last, lastN // booked writes move the window, not the spacing
	return extra
}

// parsePercentage reads an x-ms-throttle-limit-percentage value ("0.93").
func parsePercentage(v string) (float64, bool) {
	p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0, false
	}
	return p, true
}

// pacer is the write schedule of one Graph client.
type pacer struct {
	budget writeBudget
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	c      *counters

	// inflight bounds the write batches in flight (Options.WriteConcurrency): taken before
	// the slot, given back once the reply was read.
	inflight chan struct{}
	// turn is held from taking a slot until the slot comes, so that writes start in slot
	// order (and a fake clock advances once per wait, not once per waiter).
	turn sync.Mutex
	mu   sync.Mutex
	log  writeLog
	// sim continues, target after target of one plan, the client's window from what it has
	// sent, so that each target's estimate is the time its writes add to the previous ones'.
	// Read starts a new plan (resetSim).
	sim    *writeLog
	simNow time.Time
}

func newPacer(o Options, c *counters) *pacer {
	return &pacer{budget: budgetOf(o), now: o.Now, sleep: o.Sleep, c: c, inflight: make(chan struct{}, o.WriteConcurrency)}
}

// pace waits for the slot of a batch of n writes (and for a place among the writes in
// flight). Call done once the reply was read (and observe had its throttle header), or when
// the batch was not sent; it is a no-op after an error.
func (p *pacer) pace(ctx context.Context, n int) (done func(), err error) {
	p.c.writes.Add(int64(n))
	select {
	case p.inflight <- struct{}{}:
	case <-ctx.Done():
		return func() {}, ctx.Err()
	}
	var once sync.Once
	done = func() { once.Do(func() { <-p.inflight }) }
	if err := p.wait(ctx, n); err != nil {
		done()
		return func() {}, err
	}
	return done, nil
}

// wait takes the slot of a batch of n writes and sleeps until it comes.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p.budget.off() || n <= 0 {
		return ctx.Err()
	}
	p.turn.Lock()
	defer p.turn.Unlock()
	now := p.now()
	p.mu.Lock()
	t := p.budget.slot(&p.log, now, n)
	p.log.take(t, n)
	p.mu.Unlock()
	d := t.Sub(now)
	if d <= 0 {
		return ctx.Err()
	}
	p.c.paceWait.Add(int64(d))
	return p.sleep(ctx, d)
}

// observe reads the throttle header of a write's reply.
func (p *pacer) observe(v string) {
	f, ok := parsePercentage(v)
	if !ok {
		return
	}
	p.mu.Lock()
	n := p.budget.book(&p.log, p.now(), f)
	p.mu.Unlock()
	if n > 0 {
		p.c.slowdowns.Add(1)
	}
}

// resetSim starts the estimates of a new plan.
func (p *pacer) resetSim() {
	p.mu.Lock()
	p.sim = nil
	p.mu.Unlock()
}

// simulate books batches of writes (their sizes, in the order Apply sends them) after the
// plan's previous ones and returns how long they take.
func (p *pacer) simulate(batches []int) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sim == nil {
		p.sim = &writeLog{writes: slices.Clone(p.log.writes), last: p.log.last, lastN: p.log.lastN}
		p.simNow = p.now()
	}
	start := p.simNow
	for _, n := range batches {
		if n <= 0 {
			continue
		}
		t := p.budget.slot(p.sim, p.simNow, n)
		p.sim.take(t, n)
		p.simNow = t
	}
	return p.simNow.Sub(start)
}

// WriteCounts are the write requests an apply sends: GroupCreates POSTs one at a time, then
// Batched write sub-requests (member adds in members@odata.bind PATCHes of up to 20, member
// removals, description changes, group deletions) in $batch requests of up to
// Options.BatchSize.
type WriteCounts struct {
	GroupCreates, Batched int
}

// batchSizes is the sizes of the write batches of c, in the order Apply paces them.
func (c WriteCounts) batchSizes(batchSize int) []int {
	var out []int
	for range c.GroupCreates {
		out = append(out, 1)
	}
	for left := c.Batched; left > 0; left -= batchSize {
		out = append(out, min(left, batchSize))
	}
	return out
}

// EstimateWrites is how long the write pacer takes to send c (one Graph client, starting with
// an empty window; the time of the requests themselves is not counted). With the defaults, n
// write sub-requests in batches of 20 take (n - the last batch's size) × 55.6 ms: about
// 1 min 50 s for 2,000, since the spacing alone keeps the window under its budget.
func EstimateWrites(c WriteCounts, opt Options) time.Duration {
	opt = opt.withDefaults()
	b := budgetOf(opt)
	var l writeLog
	start := time.Unix(0, 0)
	now := start
	for _, n := range c.batchSizes(opt.BatchSize) {
		t := b.slot(&l, now, n)
		l.take(t, n)
		now = t
	}
	return now.Sub(start)
}
