package aad

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

const ouBase = "ou=aad,dc=example,dc=net"

func groupDN(cn string) string { return "cn=" + cn + "," + ouBase }

// TestPredictiveHitKeepsClaimedGroups: with delete_groups, a predictive hit on a
// file that names its group by metadata_aad_object_id (mailNickname sg-legacy, file
// "engineers") must not turn that group into a deletion; an unclaimed group under the prefix
// is still deleted in the same run.
func TestPredictiveHitKeepsClaimedGroups(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "delete_groups: true\nmanaged_prefix: sg-", 3)
	e.seedUsers(e.people...)
	gid := e.seedGroup("sg-legacy", "u000")
	e.seedGroup("sg-named", "u001") // claimed by name, also a predictive hit
	e.seedGroup("sg-old", "u002")   // claimed by nothing
	e.group("engineers", []string{"u000"}, "metadata_aad_object_id = "+gid)
	e.group("sg-named", []string{"u001"})
	pred := e.predictive(map[string][]string{"engineers": {"u000"}, "sg-named": {"u001"}})
	reg := e.registry(Options{Predictive: pred})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	if got := changeSummary(tp); !slices.Equal(got, []string{"DELETE " + groupDN("sg-old") + " from aad/groups"}) {
		t.Fatalf("changes %v", got)
	}
	if reg.Counters()["predictive_hits"] != 2 {
		t.Errorf("counters %v", reg.Counters())
	}
	e.apply(plan)
	if _, ok := e.fake.Group(gid); !ok {
		t.Fatal("the group named by metadata_aad_object_id was deleted")
	}
	if len(e.fake.GroupsByNickname("sg-named")) != 1 || len(e.fake.GroupsByNickname("sg-old")) != 0 {
		t.Errorf("groups now %v", e.fake.Groups())
	}
}

// TestRefusedDefinitionPlansNoDeletion: a definition that Desire refused claims
// groups the provider cannot know, so a Read after it plans no deletion and says why.
func TestRefusedDefinitionPlansNoDeletion(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 3)
	e.seedUsers(e.people...)
	e.seedGroup("sg-keep", "u000")
	e.seedGroup("sg-bad", "u001") // the file sg-bad is refused (malformed object ID)
	e.seedGroup("sg-old", "u002")
	reg := e.registry(Options{})
	p, err := reg.provider(testOU(e.fake.BaseURL(), "delete_groups: true\nmanaged_prefix: sg-"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Desire(nil, &providers.Group{DN: groupDN("sg-keep"), CN: "sg-keep", Members: []string{"u000"}}); err != nil {
		t.Fatal(err)
	}
	bad := &providers.Group{DN: groupDN("sg-bad"), CN: "sg-bad", Members: []string{"u001"}, Metadata: map[string]any{"aad_object_id": "nope"}}
	if err := p.Desire(nil, bad); err == nil {
		t.Fatal("malformed object ID accepted")
	}
	st, err := p.Read(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Groups) != 1 || st.Groups[providers.Key(groupDN("sg-keep"))] == nil {
		t.Fatalf("state holds deletion candidates: %v", st.Groups)
	}
	if w := strings.Join(p.Warnings(), "\n"); !strings.Contains(w, "no group deletion planned") || !strings.Contains(w, "nope") {
		t.Errorf("warnings %q", w)
	}
	// Once the refused definition is gone (Forget, and a plan without it), deletions resume.
	p.Forget()
	if err := p.Desire(nil, &providers.Group{DN: groupDN("sg-keep"), CN: "sg-keep", Members: []string{"u000"}}); err != nil {
		t.Fatal(err)
	}
	if st, err = p.Read(context.Background(), nil); err != nil || len(st.Groups) != 3 {
		t.Fatalf("after Forget: %v %v", err, st.Groups)
	}
}

// TestApplyDeletesOnlyWhatReadOffered: a DeleteGroup change for a group that the
// read did not offer as a deletion candidate is refused.
func TestApplyDeletesOnlyWhatReadOffered(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "delete_groups: true\nmanaged_prefix: sg-", 2)
	e.seedUsers(e.people...)
	gid := e.seedGroup("sg-keep", "u000")
	e.group("sg-keep", []string{"u000"})
	_, tp, prov := e.plan(e.registry(Options{}), false)
	if tp.Err != nil || len(tp.Changes) != 0 {
		t.Fatalf("%v %v", tp.Err, changeSummary(tp))
	}
	c := &providers.Change{Kind: providers.DeleteGroup, OU: "aad/groups", DN: groupDN("sg-keep"),
		Current: &providers.Group{DN: groupDN("sg-keep"), CN: "sg-keep"}}
	out := prov.Apply(context.Background(), nil, []*providers.Change{c})
	if len(out) != 1 || out[0].Status != providers.Failed || !strings.Contains(out[0].Err.Error(), "refusing to delete") {
		t.Fatalf("outcome %+v", out)
	}
	if _, ok := e.fake.Group(gid); !ok {
		t.Fatal("a desired group was deleted")
	}
}

// TestCreateReplicationLagNoDuplicate: the create's reply is lost after Graph made
// the group, and Graph's replicas do not show it yet. The provider must not POST again
// (Graph would accept a second group with the same mailNickname): the change is Unknown, and
// the next run, once the group is visible, adopts it.
func TestCreateReplicationLagNoDuplicate(t *testing.T) {
	e := newEnv(t, fakegraph.Options{HideCreated: true}, "create_if_missing: true", 3)
	e.seedUsers(e.people...)
	e.group("fresh", []string{"u000", "u001"})
	reg := e.registry(Options{})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	e.fake.Inject(fakegraph.Fault{Method: "POST", Path: "/groups", Scope: fakegraph.TopLevel, Drop: true, After: true})
	rep := e.applyAllowingErrors(plan)
	if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Status != providers.Unknown {
		t.Fatalf("outcomes %+v", o)
	}
	if n := len(e.fake.GroupsByNickname("fresh")); n != 1 {
		t.Fatalf("%d groups named fresh (a duplicate create?)", n)
	}
	if n := e.fake.Stats().Routes["groups.create"]; n != 1 {
		t.Errorf("creates sent %d", n)
	}
	e.fake.Replicate()
	plan, tp, _ = e.plan(reg, false)
	if got := changeSummary(tp); tp.Err != nil || !slices.Equal(got, []string{"CHANGE " + groupDN("fresh") + " in aad/groups (+2 -0)"}) {
		t.Fatalf("next run: %v %v", tp.Err, got)
	}
	e.apply(plan)
	if got := e.members("fresh"); !slices.Equal(got, []string{"u000", "u001"}) {
		t.Errorf("members %v", got)
	}
	if _, tp, _ = e.plan(reg, false); tp.Err != nil || len(tp.Changes) != 0 {
		t.Fatalf("third run: %v %v", tp.Err, changeSummary(tp))
	}
}

// TestCreateUndecodableReplyAdopts: Graph made the group but its reply
// cannot be decoded: the provider looks it up and adopts it, one POST.
func TestCreateUndecodableReplyAdopts(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "create_if_missing: true", 3)
	e.seedUsers(e.people...)
	e.group("fresh", []string{"u000"})
	reg := e.registry(Options{})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	e.fake.Inject(fakegraph.Fault{Method: "POST", Path: "/groups", Scope: fakegraph.TopLevel, Garbage: true})
	e.apply(plan)
	if n := len(e.fake.GroupsByNickname("fresh")); n != 1 || reg.Counters()["creates"] != 1 {
		t.Fatalf("%d groups, %d creates", n, reg.Counters()["creates"])
	}
	if got := e.members("fresh"); !slices.Equal(got, []string{"u000"}) {
		t.Errorf("members %v", got)
	}
}

// TestAmbiguousNicknameActionable: two groups share a file's mailNickname: the
// plan fails naming both object IDs and their creation times and the exact line to add, the
// warning reaches the Logger, and following the advice unblocks the target.
func TestAmbiguousNicknameActionable(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 2)
	e.seedUsers(e.people...)
	first := e.seedGroup("twin", "u000")
	second := e.seedGroup("twin", "u000")
	e.group("twin", []string{"u000"})
	var logs syncBuffer
	_, tp, _ := e.plan(e.registry(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}), false)
	if tp.Err == nil {
		t.Fatal("no error")
	}
	msg := tp.Err.Error()
	for _, want := range []string{first, second, "created 20", "metadata_aad_object_id = <object ID>", "delete the extra groups"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if !strings.Contains(logs.String(), second) {
		t.Errorf("not logged: %s", logs.String())
	}
	e.group("twin", []string{"u000"}, "metadata_aad_object_id = "+first)
	if _, tp, _ = e.plan(e.registry(Options{}), false); tp.Err != nil || len(tp.Changes) != 0 {
		t.Fatalf("after naming one: %v %v", tp.Err, changeSummary(tp))
	}
}

// TestDeleteOnlyPlainSecurityGroups: delete_groups deletes only unclaimed groups
// shaped like those the provider creates; Microsoft 365 groups (mail-enabled or not),
// dynamic, mail-enabled security and non-security groups under the prefix are reported and
// kept.
func TestDeleteOnlyPlainSecurityGroups(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "delete_groups: true\nmanaged_prefix: sg-", 1)
	keep := map[string]fakegraph.Group{
		"sg-m365":       {MailEnabled: true, SecurityEnabled: false, GroupTypes: []string{"Unified"}},
		"sg-m365sec":    {MailEnabled: true, SecurityEnabled: true, GroupTypes: []string{"Unified"}},
		"sg-dynamic":    {SecurityEnabled: true, GroupTypes: []string{"DynamicMembership"}},
		"sg-mailsec":    {SecurityEnabled: true, MailEnabled: true},
		"sg-nonsec":     {},
		"sg-distlist":   {MailEnabled: true},
		"sg-othertypes": {SecurityEnabled: true, GroupTypes: []string{"SomethingNew"}},
	}
	for nick, g := range keep {
		g.MailNickname, g.DisplayName = nick, nick
		e.fake.AddGroup(g)
	}
	e.seedGroup("sg-old")
	e.seedGroup("sg-keep", "u000")
	e.group("sg-keep", []string{"u000"})
	_, tp, prov := e.plan(e.registry(Options{}), false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	if got := changeSummary(tp); !slices.Equal(got, []string{"DELETE " + groupDN("sg-old") + " from aad/groups"}) {
		t.Fatalf("changes %v", got)
	}
	w := strings.Join(prov.Warnings(), "\n")
	for nick := range keep {
		if !strings.Contains(w, groupDN(nick)+": group") {
			t.Errorf("%s not reported: %s", nick, w)
		}
	}
	if !strings.Contains(w, "Microsoft 365 (Unified)") {
		t.Errorf("warnings %s", w)
	}
	// A reply without the properties never makes a group deletable.
	if why := (&groupInfo{ID: "x"}).undeletable(); why == "" {
		t.Error("a group of unknown shape is deletable")
	}
	if sel := groupSelect(); !slices.Contains(sel, "securityEnabled") || !slices.Contains(sel, "mailEnabled") || !slices.Contains(sel, "groupTypes") {
		t.Errorf("select %v", sel)
	}
}

// TestNegativeCacheExpires: with CacheTTL 0 (forever), a user or group that was
// not found is asked again once NegativeCacheTTL (default 1 minute) has passed, while what
// was found stays cached; a negative NegativeCacheTTL never caches "not found".
func TestNegativeCacheExpires(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 2)
	known := e.fake.AddUser(upn("u000"))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	reg := e.registry(Options{Now: clock})
	p, err := reg.provider(testOU(e.fake.BaseURL(), ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	users := func() map[string]string {
		t.Helper()
		got, err := p.svc.resolveUsers(ctx, []string{upn("u000"), upn("u001")})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	groups := func() int {
		t.Helper()
		got, err := p.svc.lookupGroups(ctx, []string{"late"}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		return len(got["nick:late"])
	}
	if got := users(); got[strings.ToLower(upn("u000"))] != known || len(got) != 1 {
		t.Fatalf("users %v", got)
	}
	if groups() != 0 {
		t.Fatal("group found")
	}
	newID := e.fake.AddUser(upn("u001"))
	e.seedGroup("late")
	st := e.fake.Stats()
	advance(30 * time.Second) // within the negative TTL: cached, no request
	if got := users(); len(got) != 1 || groups() != 0 || e.fake.Stats().Requests != st.Requests {
		t.Fatalf("negative entries not cached for the run: %v", got)
	}
	advance(time.Minute)
	if got := users(); got[strings.ToLower(upn("u001"))] != newID {
		t.Fatalf("new user not seen after the negative TTL: %v", got)
	}
	if groups() != 1 {
		t.Fatal("new group not seen after the negative TTL")
	}
	if n := e.fake.Stats().Routes["users.list"] - st.Routes["users.list"]; n != 1 {
		t.Errorf("users looked up %d times; the one found must stay cached, only u001 asked again", n)
	}

	reg2 := e.registry(Options{NegativeCacheTTL: -1})
	p2, err := reg2.provider(testOU(e.fake.BaseURL(), ""))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := p2.svc.resolveUsers(ctx, []string{upn("nobody")}); err != nil {
			t.Fatal(err)
		}
	}
	if n := reg2.Counters()["batches"]; n != 2 {
		t.Errorf("NegativeCacheTTL<0: %d batches, want 2", n)
	}
}

// TestStaleRefreshIsBatched: with stale-while-revalidate, the expired member
// lists of one read are refreshed in one background $batch, not one request per group.
func TestStaleRefreshIsBatched(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 2)
	var ids []string
	for _, n := range []string{"a", "b", "c", "d"} {
		ids = append(ids, e.seedGroup(n, "u000"))
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	reg := e.registry(Options{CacheTTL: time.Minute, StaleWhileRevalidate: true, Now: clock})
	p, err := reg.provider(testOU(e.fake.BaseURL(), ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.svc.readMembers(ctx, ids); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(90 * time.Second)
	mu.Unlock()
	before := reg.Counters()["batches"]
	for range 3 { // concurrent-ish callers: still one refresh
		if got, err := p.svc.readMembers(ctx, ids); err != nil || len(got) != 4 {
			t.Fatalf("%v %v", got, err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		fresh := 0
		for _, id := range ids {
			if _, ok := p.svc.member.Peek(id); ok {
				fresh++
			}
		}
		if fresh == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no background refresh")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := reg.Counters()["batches"] - before; n != 1 {
		t.Errorf("stale refresh took %d batches, want 1", n)
	}
}

// TestUnseenAfterSend: a $batch reply that cannot be decoded after Graph ran the
// writes, and per-item 500/502 replies to member writes, leave the writes' outcome unknown:
// the provider reads the group back instead of reporting them failed (or resending blind).
// A read whose reply cannot be decoded is retried.
func TestUnseenAfterSend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  fakegraph.Fault
		adds   int64 // members@odata.bind PATCHes Graph executed (both adds in one)
		writes int64 // member write batches sent
	}{
		{"undecodable envelope, executed", fakegraph.Fault{Method: "POST", Path: "/$batch", Scope: fakegraph.TopLevel, Garbage: true}, 1, 1},
		{"item 502 after executing", fakegraph.Fault{Method: "PATCH", Path: "/groups/*", Scope: fakegraph.InBatch, Status: 502, After: true}, 1, 1},
		{"item 500 not executed", fakegraph.Fault{Method: "PATCH", Path: "/groups/*", Scope: fakegraph.InBatch, Status: 500}, 1, 2},
		{"item 503 after executing", fakegraph.Fault{Method: "PATCH", Path: "/groups/*", Scope: fakegraph.InBatch, Status: 503, After: true}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{}, "", 5)
			e.seedUsers(e.people...)
			e.seedGroup("team", "u000", "u001")
			e.group("team", []string{"u001", "u002", "u003"})
			reg := e.registry(Options{})
			plan, tp, _ := e.plan(reg, false)
			if tp.Err != nil {
				t.Fatal(tp.Err)
			}
			e.fake.Inject(tc.fault)
			fs, before := e.fake.Stats(), reg.Counters()
			rep := e.applyAllowingErrors(plan)
			if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Status != providers.Applied {
				t.Fatalf("outcomes %+v", o)
			}
			fd := e.fake.Stats()
			if n := fd.Routes["groups.patch"] - fs.Routes["groups.patch"]; n != tc.adds+map[bool]int64{true: 1, false: 0}[tc.fault.Scope == fakegraph.InBatch && !tc.fault.After] {
				t.Errorf("adds routed %d", n)
			}
			if n := fd.Routes["members.list"] - fs.Routes["members.list"]; n != 1 {
				t.Errorf("read-backs %d, want 1", n)
			}
			// write batches + the read-back batch
			if n := delta(reg.Counters(), before)["batches"]; n != tc.writes+1 {
				t.Errorf("batches %d, want %d", n, tc.writes+1)
			}
			if got := e.members("team"); !slices.Equal(got, []string{"u001", "u002", "u003"}) {
				t.Errorf("team: %v", got)
			}
		})
	}

	t.Run("read retried", func(t *testing.T) {
		e := newEnv(t, fakegraph.Options{}, "", 3)
		e.seedUsers(e.people...)
		e.seedGroup("team", "u000")
		e.group("team", []string{"u000", "u001"})
		e.fake.Inject(fakegraph.Fault{Method: "POST", Path: "/$batch", Scope: fakegraph.TopLevel, Garbage: true})
		_, tp, _ := e.plan(e.registry(Options{}), false)
		if got := changeSummary(tp); tp.Err != nil || len(got) != 1 {
			t.Fatalf("%v %v", tp.Err, got)
		}
		if len(e.sleep.Waits()) == 0 {
			t.Error("no backoff before the retry")
		}
	})
}

// TestHTTPClientWithoutTransport: an HTTPClient whose Transport is nil gets the
// provider's pooled transport (PoolSize idle connections per host), not
// http.DefaultTransport, and keeps its Timeout.
func TestHTTPClientWithoutTransport(t *testing.T) {
	r := NewRegistry(Options{HTTPClient: &http.Client{Timeout: 7 * time.Second}, PoolSize: 6, TokenCredential: staticCred{"x"}})
	defer r.Close()
	// Under the counting transport, the one that caps answers, then the pooled one.
	ct, ok := r.parent.(*countingTransport)
	base := func(ct *countingTransport) http.RoundTripper { return ct.next.(cappingTransport).next }
	if !ok || r.transport == nil || base(ct) != http.RoundTripper(r.transport) {
		t.Fatalf("parent transport %#v", r.parent)
	}
	if base(ct) == http.DefaultTransport || r.transport.MaxIdleConnsPerHost != 6 || r.transport.MaxConnsPerHost != 6 {
		t.Errorf("transport pool %d/%d", r.transport.MaxIdleConnsPerHost, r.transport.MaxConnsPerHost)
	}
	if r.timeout != 7*time.Second {
		t.Errorf("timeout %s", r.timeout)
	}
	// A supplied transport is used as it is.
	own := &http.Transport{}
	r2 := NewRegistry(Options{HTTPClient: &http.Client{Transport: own}})
	if r2.transport != nil || base(r2.parent.(*countingTransport)) != http.RoundTripper(own) {
		t.Errorf("own transport not used")
	}
}

// TestWritesLogged: every write reaches Options.Logger at info level with what it
// changed: the group, the action, the member.
func TestWritesLogged(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "create_if_missing: true\ndelete_groups: true\nmanaged_prefix: sg-", 4)
	e.seedUsers(e.people...)
	gid := e.seedGroup("sg-team", "u000", "u001")
	e.seedGroup("sg-old", "u003")
	e.write("groups/aad/groups/sg-team.txt", "description = New text\nusername = u001\nusername = u002\n")
	e.group("sg-new", []string{"u003"})
	var logs syncBuffer
	reg := e.registry(Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	e.apply(plan)
	type rec struct {
		Level, Msg, Group, Action, Member, Status, GroupID string
		Description                                        string
	}
	var got []rec
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["msg"] != "aad write" {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		got = append(got, rec{Level: s("level"), Msg: s("msg"), Group: s("group"), Action: s("action"), Member: s("member"),
			Status: s("status"), GroupID: s("group_id"), Description: s("description")})
	}
	want := []struct{ group, action, member string }{
		{groupDN("sg-new"), "create-group", ""},
		{groupDN("sg-new"), "add-member", "u003"},
		{groupDN("sg-team"), "set-description", ""},
		{groupDN("sg-team"), "remove-member", "u000"},
		{groupDN("sg-team"), "add-member", "u002"},
		{groupDN("sg-old"), "delete-group", ""},
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(r rec) bool {
			return r.Group == w.group && r.Action == w.action && r.Member == w.member && r.Level == "INFO" && r.Status == "applied" && r.GroupID != ""
		}) {
			t.Errorf("no info record for %+v in %+v", w, got)
		}
	}
	if !slices.ContainsFunc(got, func(r rec) bool { return r.GroupID == gid && r.Description == "New text" }) {
		t.Errorf("description change not logged with its value: %+v", got)
	}
	if len(got) != len(want) {
		t.Errorf("%d write records, want %d: %+v", len(got), len(want), got)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
