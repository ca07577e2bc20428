package aad

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers"
)

// The slots of consecutive batches (each sent as soon as allowed), in seconds from the first.
func TestWriteSlots(t *testing.T) {
	for _, tc := range []struct {
		name    string
		b       writeBudget
		batches []int
		want    []float64
	}{
		{"spacing per write", writeBudget{interval: time.Second}, []int{1, 3, 2, 1}, []float64{0, 1, 4, 6}},
		{"window", writeBudget{perWindow: 5}, []int{2, 2, 2, 1, 3}, []float64{0, 0, 150, 150, 300}},
		{"batch larger than the window", writeBudget{perWindow: 3}, []int{1, 20, 1}, []float64{0, 150, 300}},
		{"spacing keeps the window", writeBudget{interval: 30 * time.Second, perWindow: 5}, []int{1, 1, 1, 1, 1, 1, 1}, []float64{0, 30, 60, 90, 120, 150, 180}},
		{"spacing and window", writeBudget{interval: 10 * time.Second, perWindow: 4}, []int{2, 2, 2}, []float64{0, 20, 150}},
		{"off", writeBudget{}, []int{20, 20, 20}, []float64{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l writeLog
			t0 := time.Unix(1000, 0)
			now := t0
			var got []float64
			for _, n := range tc.batches {
				s := tc.b.slot(&l, now, n)
				l.take(s, n)
				now = s
				got = append(got, s.Sub(t0).Seconds())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("slots %v, want %v", got, tc.want)
			}
		})
	}
}

// x-ms-throttle-limit-percentage at or above the threshold books the writes Graph counts
// beyond the client's own (as sent now): the next batch waits for them to leave the window.
// Below the threshold, or when Graph counts no more than the client sent, nothing changes.
func TestThrottleHeaderBooks(t *testing.T) {
	b := writeBudget{perWindow: 9, quota: 10, threshold: 0.9}
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name   string
		sent   int     // writes the client sent at t0
		header float64 // Graph's fraction at t0+10s
		booked int
		next   float64 // slot of the next single write, seconds from t0
	}{
		{"below the threshold", 2, 0.85, 0, 10},
		{"Graph counts what we sent", 9, 0.9, 0, 150},
		{"another client: Graph counts 10, we sent 1", 1, 1.0, 9, 160},
		{"over the limit", 0, 1.2, 12, 160},
		{"no header", 3, 0, 0, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l writeLog
			if tc.sent > 0 {
				l.take(t0, tc.sent)
			}
			now := t0.Add(10 * time.Second)
			if got := b.book(&l, now, tc.header); got != tc.booked {
				t.Fatalf("booked %d, want %d", got, tc.booked)
			}
			if got := b.slot(&l, now, 1).Sub(t0).Seconds(); got != tc.next {
				t.Fatalf("next slot at %vs, want %vs", got, tc.next)
			}
		})
	}
	if off := (writeBudget{perWindow: 9, quota: 10}); off.book(&writeLog{}, t0, 1.5) != 0 {
		t.Fatal("a threshold of 0 must ignore the header")
	}
	for _, v := range []string{"", "x", "-1", "NaN"} {
		if _, ok := parsePercentage(v); ok {
			t.Errorf("parsePercentage(%q) accepted", v)
		}
	}
}

// EstimateWrites with the defaults: 20-write batches 20 × 55.6 ms apart; the window (2,700
// per 150 s) never binds at that pace.
func TestEstimateWrites(t *testing.T) {
	iv := (WriteWindow + 2699) / 2700 // rounded up: the spacing alone never overfills the window
	for _, tc := range []struct {
		c    WriteCounts
		opt  Options
		want time.Duration
	}{
		{WriteCounts{}, Options{}, 0},
		{WriteCounts{Batched: 20}, Options{}, 0},
		{WriteCounts{Batched: 21}, Options{}, 20 * iv},
		{WriteCounts{GroupCreates: 3, Batched: 5}, Options{}, 3 * iv},
		{WriteCounts{Batched: 2000}, Options{}, 1980 * iv},
		{WriteCounts{Batched: 6000}, Options{}, 5980 * iv},
		{WriteCounts{Batched: 2000}, Options{NoWritePacing: true}, 0},
		// A budget of 100 without spacing: five bursts of 100, one window apart.
		{WriteCounts{Batched: 500}, Options{WritesPerWindow: 100, WriteInterval: -1}, 4 * WriteWindow},
	} {
		if got := EstimateWrites(tc.c, tc.opt); got != tc.want {
			t.Errorf("EstimateWrites(%+v, %+v): %s, want %s", tc.c, tc.opt, got, tc.want)
		}
	}
}

// pack: member adds per group in chunks of 20, in order; every other write alone.
func TestPack(t *testing.T) {
	ops := map[string]*changeOp{"a": {groupID: "a"}, "b": {groupID: "b"}}
	mk := func(spec string) []*write {
		var ws []*write
		for i, f := range strings.Fields(spec) {
			kind, g, _ := strings.Cut(f, ":")
			n := 1
			if k, c, ok := strings.Cut(kind, "*"); ok {
				kind = k
				fmt.Sscan(c, &n)
			}
			for j := range n {
				w := &write{op: ops[g], uid: fmt.Sprintf("u%d.%d", i, j)}
				w.kind = map[string]writeKind{"add": addMember, "rm": removeMember, "desc": setDescription}[kind]
				ws = append(ws, w)
			}
		}
		return ws
	}
	shape := func(us []*unit) string {
		var out []string
		for _, u := range us {
			k := map[writeKind]string{addMember: "add", removeMember: "rm", setDescription: "desc"}[u.writes[0].kind]
			out = append(out, fmt.Sprintf("%s%d:%s", k, len(u.writes), u.writes[0].op.groupID))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"add:a", "add1:a"},
		{"add*20:a", "add20:a"},
		{"add*21:a", "add20:a add1:a"},
		{"add*45:a", "add20:a add20:a add5:a"},
		{"add*3:a add*2:b add*18:a", "add20:a add2:b add1:a"},
		{"rm*2:a desc:a add*2:a rm:b add:b", "rm1:a rm1:a desc1:a add2:a rm1:b add1:b"},
	} {
		if got := shape(pack(mk(tc.in))); got != tc.want {
			t.Errorf("pack(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// settleUnit: what a members@odata.bind chunk's reply makes of its adds and what is sent
// again (sizes of the next units).
func TestSettleUnit(t *testing.T) {
	const exists = "One or more added object references already exist for the following modified properties: 'members'."
	for _, tc := range []struct {
		name   string
		n      int
		status int
		msg    string // "{id3}" is replaced with the object ID of the fourth add
		next   []int
		st     providers.Status // of the settled adds
	}{
		{"applied", 20, 204, "", nil, providers.Applied},
		{"one already a member: halves", 20, 400, exists, []int{10, 10}, 0},
		{"odd split", 5, 400, exists, []int{2, 3}, 0},
		{"single already a member", 1, 400, exists, nil, providers.AlreadyInState},
		{"one object gone: the rest again", 6, 404, "Resource '{id3}' does not exist or one of its queried reference-property objects are not present.", []int{5}, 0},
		{"object gone, unnamed: halves", 6, 404, "Resource not found.", []int{3, 3}, 0},
		{"single gone", 1, 404, "Resource '{id0}' does not exist.", nil, providers.Failed},
		{"group refuses (dynamic)", 20, 400, "Insufficient privileges to complete the operation.", nil, providers.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Provider{reg: &Registry{}}
			op := &changeOp{groupID: "g"}
			u := &unit{it: &item{write: true, status: tc.status}}
			for i := range tc.n {
				w := &write{op: op, kind: addMember, uid: fmt.Sprintf("u%d", i), objectID: fmt.Sprintf("id%d", i)}
				w.it = u.it
				u.writes = append(u.writes, w)
			}
			if tc.msg != "" {
				msg := strings.NewReplacer("{id3}", "id3", "{id0}", "id0").Replace(tc.msg)
				u.it.body = []byte(fmt.Sprintf(`{"error":{"code":"Request_BadRequest","message":%q}}`, msg))
			}
			next := p.settleUnit(u)
			var sizes []int
			again := map[*write]bool{}
			for _, x := range next {
				sizes = append(sizes, len(x.writes))
				for _, w := range x.writes {
					again[w] = true
				}
			}
			if !slices.Equal(sizes, tc.next) {
				t.Fatalf("next units %v, want %v", sizes, tc.next)
			}
			for _, w := range u.writes {
				switch {
				case again[w] && w.done:
					t.Fatalf("%s is both settled and sent again", w)
				case !again[w] && !w.done:
					t.Fatalf("%s is neither settled nor sent again", w)
				case !again[w] && tc.st != 0 && w.status != tc.st:
					t.Fatalf("%s: %s, want %s", w, w.status, tc.st)
				}
			}
			if tc.status == 404 && tc.n > 1 && len(next) == 1 && (!u.writes[3].done || u.writes[3].status != providers.Failed) {
				t.Fatalf("the add Graph named: done %v, %s", u.writes[3].done, u.writes[3].status)
			}
		})
	}
}
