package main

import (
	"context"
	"slices"
	"sync"
	"time"
)

// fakeClock is the simulated time of the apply benchmark, shared by the providers' clients
// and the fakes: a wait returns at once with the clock moved forward, so hours of write
// pacing take seconds while every window, spacing and reset is computed on the same
// timeline on both sides. Requests take no simulated time. Safe for concurrent use, but
// waits add up one after another: it models a client that waits for one thing at a time,
// as the providers' paced writes do (serially, per token or app).
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	events []clockEvent // sorted by at
}

// clockEvent is something that happens when the clock reaches at (the benchmark's kill).
type clockEvent struct {
	at time.Time
	fn func()
}

func newFakeClock(start time.Time) *fakeClock { return &fakeClock{now: start} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// at makes fn run when the clock reaches t, in the wait that reaches it (at once if t has
// passed and a wait is made).
func (c *fakeClock) at(t time.Time, fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, _ := slices.BinarySearchFunc(c.events, t, func(e clockEvent, t time.Time) int {
		if e.at.After(t) {
			return 1
		}
		return -1 // after the events of the same time: they run in the order given
	})
	c.events = slices.Insert(c.events, i, clockEvent{at: t, fn: fn})
}

// Sleep waits d on the clock, which moves at once. When an event falls inside the wait, the
// clock stops at it and runs it; if that ends ctx (the kill of the benchmark's first apply),
// the wait ends there with ctx's error, as a real wait ends on a signal.
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	end := c.now.Add(max(d, 0))
	for len(c.events) > 0 && !c.events[0].at.After(end) {
		ev := c.events[0]
		c.events = c.events[1:]
		if ev.at.After(c.now) {
			c.now = ev.at
		}
		c.mu.Unlock()
		ev.fn()
		if err := ctx.Err(); err != nil {
			return err
		}
		c.mu.Lock()
	}
	if end.After(c.now) {
		c.now = end
	}
	c.mu.Unlock()
	return nil
}
