package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The write scheduler paces content-creating requests (every REST write: membership PUT and
// DELETE, team POST, PATCH and DELETE, invitations) to GitHub's documented secondary rate
// limits, so that a large apply is slow but never refused. GitHub's "Best practices for using
// the REST API" (docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api)
// asks to "make requests serially instead of concurrently" and, for requests that create
// content, to "wait at least one second between each request"; "Rate limits for the REST API"
// (docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits)
// documents "no more than 80 content-generating requests per minute and no more than 500
// content-generating requests per hour", and an answer without retry-after asks to wait at
// least a minute. Octokit's throttling plugin spaces writes by 1 s and org invitations by 3 s.
// Organisation invitations are limited to 50 (new orgs) or 500 per 24 hours.
//
// Every budget is a sliding window over the starts of the writes a session (one token, or one
// App installation) sent: a write waits until the spacing since the previous write (and since
// the previous invitation) has passed and until its minute and hour windows have room. The
// slot is taken before the wait, so concurrent writers of one session queue in order. With a
// StateDir the windows are remembered across runs, so two runs an hour apart together keep
// within the hourly budget and the daily invitation budget holds across a day of runs.

// The defaults of the write budgets: GitHub's documented limits minus a margin for other
// clients of the same token and for clock skew.
const (
	DefaultWritesPerMinute   = 70  // GitHub: 80 content-creating requests per minute
	DefaultWritesPerHour     = 450 // GitHub: 500 content-creating requests per hour
	DefaultWriteInterval     = time.Second
	DefaultInviteInterval    = 3 * time.Second
	DefaultInvitationsPerDay = 500 // GitHub: 500 org invitations per 24 h (50 for new orgs)
)

// ErrInvitationBudget is wrapped by the error of an invitation that was not sent because the
// daily invitation budget (Options.InvitationsPerDay) is used up; it also wraps
// ErrInvitationLimit, so it is handled as GitHub's own refusal is.
var ErrInvitationBudget = fmt.Errorf("the daily org invitation budget (Options.InvitationsPerDay) is used up: %w", ErrInvitationLimit)

// budgetFile is the file of the write windows in Options.StateDir. Its name starts with '.',
// so the predictive state (cache.StateFiles) never takes it for a group file.
const budgetFile = ".entitlements-github-writes.json"

// writeBudget is the pacing of one session (the options' values; 0 means no limit).
type writeBudget struct {
	interval, inviteInterval              time.Duration
	perMinute, perHour, invitationsPerDay int
}

func budgetOf(o Options) writeBudget {
	pos := func(n int) int { return max(n, 0) }
	return writeBudget{interval: max(o.WriteInterval, 0), inviteInterval: max(o.InviteInterval, 0),
		perMinute: pos(o.WritesPerMinute), perHour: pos(o.WritesPerHour), invitationsPerDay: pos(o.InvitationsPerDay)}
}

// writeLog is what a session sent: the starts of its writes in the last hour, and of its
// invitations in the last 24 hours per org (lower case).
type writeLog struct {
	Writes      []time.Time            `json:"writes,omitempty"`
	Invitations map[string][]time.Time `json:"invitations,omitempty"`
	lastWrite   time.Time
	lastInvite  time.Time
}

// since returns the times of ts after cutoff (ts is sorted).
func since(ts []time.Time, cutoff time.Time) []time.Time {
	i, _ := slices.BinarySearchFunc(ts, cutoff, func(a, b time.Time) int { return a.Compare(b) })
	for i < len(ts) && !ts[i].After(cutoff) {
		i++
	}
	return ts[i:]
}

// windowWait moves t forward until the window of length w before it holds fewer than limit
// of ts; it reports whether t moved.
func windowWait(ts []time.Time, limit int, w time.Duration, t *time.Time) bool {
	if limit <= 0 {
		return false
	}
	in := since(ts, t.Add(-w))
	if len(in) < limit {
		return false
	}
	// Once the oldest write that keeps the window full has left it, there is room.
	*t = in[len(in)-limit].Add(w)
	return true
}

// slot is the earliest start at or after now for the next write (an invitation to org when
// invite is set), or ErrInvitationBudget (with when the next invitation could be sent) when
// the daily invitation budget is used up.
func (b writeBudget) slot(l *writeLog, now time.Time, invite bool, org string) (time.Time, error) {
	t := now
	if b.interval > 0 && !l.lastWrite.IsZero() && l.lastWrite.Add(b.interval).After(t) {
		t = l.lastWrite.Add(b.interval)
	}
	if invite {
		if b.inviteInterval > 0 && !l.lastInvite.IsZero() && l.lastInvite.Add(b.inviteInterval).After(t) {
			t = l.lastInvite.Add(b.inviteInterval)
		}
		if b.invitationsPerDay > 0 {
			in := since(l.Invitations[org], t.Add(-24*time.Hour))
			if len(in) >= b.invitationsPerDay {
				return time.Time{}, fmt.Errorf("%w: %d invitations to %s in the last 24 hours; the next one can be sent at %s",
					ErrInvitationBudget, len(in), org, in[len(in)-b.invitationsPerDay].Add(24*time.Hour).UTC().Format(time.RFC3339))
			}
		}
	}
	// Each move only lengthens the wait, and the windows only empty as t grows: a few rounds.
	for windowWait(l.Writes, b.perHour, time.Hour, &t) || windowWait(l.Writes, b.perMinute, time.Minute, &t) {
	}
	return t, nil
}

// take records a write starting at t and forgets what no window needs any more.
func (l *writeLog) take(t time.Time, invite bool, org string) {
	l.Writes = append(since(l.Writes, t.Add(-time.Hour)), t)
	l.lastWrite = t
	if invite {
		if l.Invitations == nil {
			l.Invitations = map[string][]time.Time{}
		}
		l.Invitations[org] = append(since(l.Invitations[org], t.Add(-24*time.Hour)), t)
		l.lastInvite = t
	}
}

// give returns the slot at t, taken for a write that was never sent (its wait was cut short):
// the windows and spacings are as if it had not been taken. Slots taken after it stay valid,
// since windows that lose a write only have more room.
func (l *writeLog) give(t time.Time, invite bool, org string) {
	l.Writes = dropLast(l.Writes, t)
	l.lastWrite = time.Time{}
	if n := len(l.Writes); n > 0 {
		l.lastWrite = l.Writes[n-1]
	}
	if invite {
		l.Invitations[org] = dropLast(l.Invitations[org], t)
		l.lastInvite = time.Time{}
		for _, ts := range l.Invitations {
			if n := len(ts); n > 0 && ts[n-1].After(l.lastInvite) {
				l.lastInvite = ts[n-1]
			}
		}
	}
}

// dropLast removes the last occurrence of t from ts.
func dropLast(ts []time.Time, t time.Time) []time.Time {
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Equal(t) {
			return slices.Delete(ts, i, i+1)
		}
	}
	return ts
}

// scheduler holds the write logs of every session of a registry, and their file.
type scheduler struct {
	budget writeBudget
	path   string // "" without a StateDir
	now    func() time.Time

	mu      sync.Mutex
	loaded  bool
	loadErr error
	logs    map[string]*writeLog // session key → log
}

// log returns a session's log, reading the file on first use. Called with s.mu held.
func (s *scheduler) log(key string) *writeLog {
	if !s.loaded {
		s.loaded = true
		s.logs = map[string]*writeLog{}
		s.loadErr = s.load()
	}
	l := s.logs[key]
	if l == nil {
		l = &writeLog{}
		s.logs[key] = l
	}
	return l
}

type budgetState struct {
	Version  int                  `json:"version"`
	Sessions map[string]*writeLog `json:"sessions"`
}

func (s *scheduler) load() error {
	if s.path == "" {
		return nil
	}
	// Read as any file of a directory others may reach: a regular file, size-capped, not a
	// link that leads out of the directory (never a FIFO that blocks, a device, a secret).
	b, err := safefile.Read(s.path, safefile.Options{Roots: []string{filepath.Dir(s.path)}})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the write budget state %s: %w", s.path, err)
	}
	var st budgetState
	if err := json.Unmarshal(b, &st); err != nil || st.Version != 1 {
		return fmt.Errorf("the write budget state %s is not readable (version %d, %v): starting from empty windows", s.path, st.Version, err)
	}
	now := s.now()
	for k, l := range st.Sessions {
		if l == nil {
			continue
		}
		slices.SortFunc(l.Writes, time.Time.Compare)
		l.Writes = since(l.Writes, now.Add(-time.Hour))
		if n := len(l.Writes); n > 0 {
			l.lastWrite = l.Writes[n-1]
		}
		for org, ts := range l.Invitations {
			slices.SortFunc(ts, time.Time.Compare)
			l.Invitations[org] = since(ts, now.Add(-24*time.Hour))
			if n := len(l.Invitations[org]); n > 0 && l.Invitations[org][n-1].After(l.lastInvite) {
				l.lastInvite = l.Invitations[org][n-1]
			}
		}
		s.logs[k] = l
	}
	return nil
}

// save writes the logs (temporary file, then rename: a crash leaves the old or the new file).
// Called with s.mu held.
func (s *scheduler) save() error {
	if s.path == "" {
		return nil
	}
	b, err := json.Marshal(budgetState{Version: 1, Sessions: s.logs})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), budgetFile+".*")
	if err != nil {
		return fmt.Errorf("saving the write budget state: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving the write budget state: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving the write budget state: %w", err)
	}
	return nil
}

type inviteKey struct{}

// asInvitation marks a write as an org invitation to org (spaced and budgeted as one).
func asInvitation(ctx context.Context, org string) context.Context {
	return context.WithValue(ctx, inviteKey{}, strings.ToLower(org))
}

// pace waits for the session's next write slot (see the comment at the top of the file). A
// write of a run that is stopping takes no slot, and one whose wait is cut short gives its
// slot back: the windows, which a StateDir hands to the next run (a resume), hold only the
// writes that were sent, so the next run does not wait for writes that never happened.
func (s *session) pace(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sc := &s.h.reg.sched
	opt := &s.h.reg.opt
	org, invite := ctx.Value(inviteKey{}).(string)
	sc.mu.Lock()
	l := sc.log(s.key)
	if err := sc.loadErr; err != nil {
		sc.loadErr = nil
		s.h.reg.opt.Logger.Warn("write budget state", "err", err.Error())
	}
	now := opt.Now()
	t, err := sc.budget.slot(l, now, invite, org)
	if err != nil {
		sc.mu.Unlock()
		return err
	}
	l.take(t, invite, org)
	serr := sc.save()
	sc.mu.Unlock()
	if serr != nil {
		// The windows still hold in this run; only the next run may start too fast.
		s.h.reg.opt.Logger.Warn("write budget state not saved", "err", serr.Error())
	}
	if invite {
		s.both(ctx, func(c *counters) { c.invitations.Add(1) })
	}
	d := t.Sub(now)
	if d <= 0 {
		return nil
	}
	s.both(ctx, func(c *counters) { c.paceWait.Add(int64(d)) })
	if err := opt.Sleep(ctx, d); err != nil {
		sc.mu.Lock()
		l.give(t, invite, org)
		serr := sc.save()
		sc.mu.Unlock()
		if serr != nil {
			s.h.reg.opt.Logger.Warn("write budget state not saved", "err", serr.Error())
		}
		return err
	}
	return nil
}

// credKey names a credential in the budget file without giving it away.
func credKey(kind, secret string) string {
	h := sha256.Sum256([]byte(secret))
	return kind + ":" + hex.EncodeToString(h[:8])
}

// WriteCounts are the writes an apply sends: Writes content-creating requests in all, of which
// Invitations are org invitations.
type WriteCounts struct {
	Writes, Invitations int
}

// EstimateWrites is how long the write scheduler takes to send c (on one session, starting
// with empty windows; the time of the requests themselves is not counted). Invitations are
// sent first, as one block, which is the slowest order. Invitations beyond the daily budget
// are not sent (GitHub would refuse them): they take no time. In closed form, with the
// defaults and no invitations: n writes take ⌈n/450⌉-1 hours plus (n-1 mod 450) seconds,
// about 4 h 3 min for 2,000.
func EstimateWrites(c WriteCounts, opt Options) time.Duration {
	b := budgetOf(opt.withDefaults())
	var l writeLog
	start := time.Unix(0, 0)
	now := start
	inv := min(c.Invitations, c.Writes)
	for i := range c.Writes {
		invite := i < inv
		t, err := b.slot(&l, now, invite, "")
		if err != nil {
			continue
		}
		l.take(t, invite, "")
		now = t
	}
	return now.Sub(start)
}
