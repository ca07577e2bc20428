package aad

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// TestCreateFirstSyncNoop: a missing group is created with its members, an existing one gets
// its adds and removes, non-user members are left alone, and the second run is a no-op that
// costs one lookup batch and one member batch.
func TestCreateFirstSyncNoop(t *testing.T) {
	e := newEnv(t, fakegraph.Options{EmptyPages: 1}, "create_if_missing: true", 10)
	e.seedUsers(e.people...)
	gid := e.seedGroup("existing", "u000", "u001", "u009")
	sp := e.fake.AddObject(fakegraph.KindServicePrincipal, "robot")
	e.fake.SetMembers(gid, append(e.fake.Groups()[0].Members, sp)...)
	e.group("existing", []string{"u000", "u001", "u002", "u003"})
	e.group("fresh", []string{"u004", "u005"})
	reg := e.registry(Options{})

	plan, tp, prov := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	want := []string{
		"ADD cn=fresh,ou=aad,dc=example,dc=net to aad/groups (Members: u004,u005)",
		"CHANGE cn=existing,ou=aad,dc=example,dc=net in aad/groups (+2 -1)",
	}
	if got := changeSummary(tp); !slices.Equal(got, want) {
		t.Fatalf("changes:\n%s", strings.Join(got, "\n"))
	}
	if w := strings.Join(prov.Warnings(), "\n"); !strings.Contains(w, sp) || !strings.Contains(w, "servicePrincipal") {
		t.Errorf("non-user member not reported: %q", w)
	}
	e.apply(plan)
	if got := e.members("existing"); !slices.Equal(got, []string{"u000", "u001", "u002", "u003"}) {
		t.Errorf("existing: %v", got)
	}
	if got := e.members("fresh"); !slices.Equal(got, []string{"u004", "u005"}) {
		t.Errorf("fresh: %v", got)
	}
	g := e.fake.GroupsByNickname("fresh")[0]
	if !g.SecurityEnabled || g.MailEnabled || g.Description != "Group fresh" || g.DisplayName != "fresh" {
		t.Errorf("created group %+v", g)
	}
	if ms := e.fake.Groups()[0].Members; !slices.Contains(ms, sp) {
		t.Errorf("service principal removed: %v", ms)
	}

	// Second run, same Registry (apply invalidated what it touched), then a cold one.
	for _, reg2 := range []*Registry{reg, e.registry(Options{})} {
		before, fs := reg2.Counters(), e.fake.Stats()
		_, tp2, _ := e.plan(reg2, false)
		if tp2.Err != nil || len(tp2.Changes) != 0 {
			t.Fatalf("second run: err=%v changes=%v", tp2.Err, changeSummary(tp2))
		}
		d := delta(reg2.Counters(), before)
		// 1 lookup batch + 1 member batch + 1 more round for the empty first pages.
		if d["batches"] != 3 || d["requests"] != 3 {
			t.Errorf("second run cost %v", d)
		}
		if fd := e.fake.Stats(); fd.Unauthorized != fs.Unauthorized {
			t.Errorf("unauthorized requests")
		}
	}
	st := e.fake.Stats()
	if st.ObjectDeletes != 0 || st.GzipBodies != 0 || st.Unauthorized != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestChunking: 45 adds and 30 removes in one group, and a group of 1,200 members read over
// two pages of 999 (plus an empty page): writes go 20 per batch.
func TestChunking(t *testing.T) {
	e := newEnv(t, fakegraph.Options{EmptyPages: 1}, "", 1300)
	e.seedUsers(e.people...)
	e.seedGroup("big", uids(0, 1200)...)
	e.seedGroup("churn", uids(0, 30)...)
	e.group("big", uids(0, 1200))
	e.group("churn", uids(100, 145))
	reg := e.registry(Options{})
	plan, tp, _ := e.plan(reg, true) // removing every member trips the removal guard
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	if got := changeSummary(tp); len(got) != 1 || got[0] != "CHANGE cn=churn,ou=aad,dc=example,dc=net in aad/groups (+45 -30)" {
		t.Fatalf("changes %v", got)
	}
	c := reg.Counters()
	// Reads: 1 lookup batch; members: round 1 (2 empty pages), round 2 (2 first pages),
	// round 3 (big's second page).
	if c["batches"] != 4 || c["pages"] != 1+5 {
		t.Errorf("read counters %v", c)
	}
	before, fs := reg.Counters(), e.fake.Stats()
	e.apply(plan)
	d, fd := delta(reg.Counters(), before), e.fake.Stats()
	// 45 adds in 3 members@odata.bind PATCHes and 30 removals: 33 sub-requests, 2 batches.
	if d["batches"] != 2 || d["subrequests"] != 33 {
		t.Errorf("write counters %v", d)
	}
	if fd.Routes["groups.patch"]-fs.Routes["groups.patch"] != 3 || fd.Routes["members.remove"]-fs.Routes["members.remove"] != 30 ||
		fd.Routes["members.add"] != fs.Routes["members.add"] {
		t.Errorf("routes %v", fd.Routes)
	}
	if got := e.members("churn"); !slices.Equal(got, uids(100, 145)) {
		t.Errorf("churn: %v", got)
	}
	_, tp2, _ := e.plan(reg, false)
	if tp2.Err != nil || len(tp2.Changes) != 0 {
		t.Fatalf("second run: %v %v", tp2.Err, changeSummary(tp2))
	}
}

// TestMissingUsers: users that do not exist are skipped (and the next run is a no-op) with
// ignore_not_found, and fail the target's plan without it.
func TestMissingUsers(t *testing.T) {
	for _, ignore := range []bool{true, false} {
		t.Run(map[bool]string{true: "ignore", false: "fail"}[ignore], func(t *testing.T) {
			settings := "create_if_missing: true"
			if ignore {
				settings += "\nignore_not_found: true"
			}
			e := newEnv(t, fakegraph.Options{}, settings, 6)
			e.seedUsers("u000", "u001", "u002") // u003..u005 do not exist in Entra
			e.seedGroup("team", "u000")
			e.group("team", []string{"u000", "u001", "u003"})
			e.group("newteam", []string{"u002", "u004", "u005"})
			reg := e.registry(Options{})
			plan, tp, prov := e.plan(reg, false)
			if !ignore {
				if tp.Err == nil || !strings.Contains(tp.Err.Error(), "u003") || !strings.Contains(tp.Err.Error(), "u005") {
					t.Fatalf("want a not-found error naming the users, got %v", tp.Err)
				}
				if len(tp.Changes) != 0 {
					t.Fatalf("changes planned despite the error")
				}
				return
			}
			if tp.Err != nil {
				t.Fatal(tp.Err)
			}
			want := []string{
				"ADD cn=newteam,ou=aad,dc=example,dc=net to aad/groups (Members: u002)",
				"CHANGE cn=team,ou=aad,dc=example,dc=net in aad/groups (+1 -0)",
			}
			if got := changeSummary(tp); !slices.Equal(got, want) {
				t.Fatalf("changes %v", got)
			}
			if w := strings.Join(prov.Warnings(), "\n"); !strings.Contains(w, "u003") || !strings.Contains(w, "u004, u005") {
				t.Errorf("warnings %q", w)
			}
			e.apply(plan)
			_, tp2, _ := e.plan(reg, false)
			if tp2.Err != nil || len(tp2.Changes) != 0 {
				t.Fatalf("second run: %v %v", tp2.Err, changeSummary(tp2))
			}
		})
	}
}

// TestThrottling: per-item 429s (reads and writes) are retried after their own Retry-After,
// a whole-request 429 after its Retry-After, a 503 item with backoff; the result is the same
// as without faults, and the waits went through the injected sleeper.
func TestThrottling(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 40)
	e.seedUsers(e.people...)
	for _, n := range []string{"a", "b", "c"} {
		e.seedGroup(n, "u000")
		e.group(n, uids(0, 10))
	}
	e.fake.Inject(fakegraph.Fault{Path: "/groups/*/members", Scope: fakegraph.InBatch, Status: 429, RetryAfter: "7", Times: 2})
	e.fake.Inject(fakegraph.Fault{Path: "/groups/*/members", Scope: fakegraph.InBatch, Status: 503, Times: 1})
	e.fake.Inject(fakegraph.Fault{Path: "/$batch", Scope: fakegraph.TopLevel, Status: 429, RetryAfter: "11", Times: 1})
	reg := e.registry(Options{BaseBackoff: 100 * time.Millisecond})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	if len(tp.Changes) != 3 {
		t.Fatalf("changes %v", changeSummary(tp))
	}
	waits := e.sleep.Waits()
	if !slices.Contains(waits, 11*time.Second) || !slices.Contains(waits, 7*time.Second) {
		t.Errorf("waits %v", waits)
	}
	e.fake.Inject(fakegraph.Fault{Method: "PATCH", Path: "/groups/*", Scope: fakegraph.InBatch, Status: 429, RetryAfter: "2", Times: 5})
	e.apply(plan)
	for _, n := range []string{"a", "b", "c"} {
		if got := e.members(n); !slices.Equal(got, uids(0, 10)) {
			t.Errorf("%s: %v", n, got)
		}
	}
	if c := reg.Counters(); c["throttled"] != 2+1+5 {
		t.Errorf("throttled %v", c)
	}
	if st := e.fake.Stats(); st.Routes["groups.patch"] != 3+5 {
		t.Errorf("members@odata.bind PATCHes sent %d (3 writes of 9 adds + 5 throttled)", st.Routes["groups.patch"])
	}
	if !slices.Contains(e.sleep.Waits(), 2*time.Second) {
		t.Errorf("write waits %v", e.sleep.Waits())
	}
}

// TestFailedReadRemovesNothing: a member list that keeps failing (first page or a later
// page) fails the target's plan; nothing is planned, applied or removed.
func TestFailedReadRemovesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault fakegraph.Fault
		pages int
	}{
		{"first page 500", fakegraph.Fault{Path: "/groups/*/members", Scope: fakegraph.InBatch, Status: 500, Times: -1}, 0},
		{"503 forever", fakegraph.Fault{Path: "/groups/*/members", Scope: fakegraph.InBatch, Status: 503, Times: -1}, 0},
		{"batch 502", fakegraph.Fault{Path: "/$batch", Scope: fakegraph.TopLevel, Status: 502, Times: -1}, 0},
		{"dropped connection", fakegraph.Fault{Path: "/$batch", Scope: fakegraph.TopLevel, Drop: true, Times: -1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{}, "", 30)
			gid := e.seedGroup("team", uids(0, 20)...)
			e.group("team", uids(0, 2)) // would remove 18
			e.fake.Inject(tc.fault)
			reg := e.registry(Options{MaxAttempts: 3})
			plan, tp, _ := e.plan(reg, true)
			if tp.Err == nil || len(tp.Changes) != 0 {
				t.Fatalf("err=%v changes=%v", tp.Err, changeSummary(tp))
			}
			rep := e.applyAllowingErrors(plan)
			if len(rep.Targets[0].Outcomes) != 0 {
				t.Errorf("outcomes %v", rep.Targets[0].Outcomes)
			}
			if got := e.fake.MemberUPNs(gid); len(got) != 20 {
				t.Errorf("members now %d", len(got))
			}
		})
	}
}

// TestUnknownWriteOutcome: the connection drops after Graph executed the batch of writes.
// The provider reads the group back instead of replaying, finds the writes done, and a
// re-run converges with no change. When the drop happens before execution, the read-back
// finds them missing and sends them again.
func TestUnknownWriteOutcome(t *testing.T) {
	for _, after := range []bool{true, false} {
		t.Run(map[bool]string{true: "executed", false: "not executed"}[after], func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{}, "", 10)
			e.seedUsers(e.people...)
			e.seedGroup("team", "u000", "u001")
			e.group("team", []string{"u001", "u002", "u003"})
			reg := e.registry(Options{})
			plan, tp, _ := e.plan(reg, false)
			if tp.Err != nil {
				t.Fatal(tp.Err)
			}
			e.fake.Inject(fakegraph.Fault{Method: "POST", Path: "/$batch", Scope: fakegraph.TopLevel, Drop: true, After: after})
			fs, before := e.fake.Stats(), reg.Counters()
			e.apply(plan)
			fd := e.fake.Stats()
			// executed: the write batch, the read-back; not executed: both, then the resend.
			if n, want := delta(reg.Counters(), before)["batches"], map[bool]int64{true: 2, false: 3}[after]; n != want {
				t.Errorf("batches %d, want %d", n, want)
			}
			if got := e.members("team"); !slices.Equal(got, []string{"u001", "u002", "u003"}) {
				t.Errorf("team: %v", got)
			}
			adds := fd.Routes["groups.patch"] - fs.Routes["groups.patch"]
			if want := map[bool]int64{true: 1, false: 1}[after]; adds != want {
				// executed: 2 adds in one PATCH, then read back, nothing resent; not
				// executed: the fake never saw the first batch, so the PATCH is sent once.
				t.Errorf("adds executed %d, want %d", adds, want)
			}
			if fd.Routes["members.list"]-fs.Routes["members.list"] != 1 {
				t.Errorf("no read-back: %v", fd.Routes)
			}
			_, tp2, _ := e.plan(reg, false)
			if tp2.Err != nil || len(tp2.Changes) != 0 {
				t.Fatalf("re-run: %v %v", tp2.Err, changeSummary(tp2))
			}
		})
	}
}

func (e *env) applyAllowingErrors(plan *deploy.Plan) *deploy.Report {
	rep, _ := deploy.Apply(context.Background(), plan, deploy.ApplyOptions{})
	return rep
}

// TestLeftAlone: a dynamic group and a mail-enabled security group are reported and never
// written; users outside user_principal_format are not removed.
func TestLeftAlone(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 5)
	e.seedUsers(e.people...)
	guest := e.fake.AddUser("someone_partner.test#EXT#@corp.onmicrosoft.com")
	e.fake.AddGroup(fakegraph.Group{MailNickname: "dyn", SecurityEnabled: true, GroupTypes: []string{"DynamicMembership"}})
	e.fake.AddGroup(fakegraph.Group{MailNickname: "mailsec", SecurityEnabled: true, MailEnabled: true})
	gid := e.seedGroup("plain", "u000")
	e.fake.SetMembers(gid, append(e.fake.GroupsByNickname("plain")[0].Members, guest)...)
	e.group("dyn", []string{"u001"})
	e.group("mailsec", []string{"u002"})
	e.group("plain", []string{"u000"})
	reg := e.registry(Options{})
	_, tp, prov := e.plan(reg, false)
	if tp.Err != nil || len(tp.Changes) != 0 {
		t.Fatalf("err=%v changes=%v", tp.Err, changeSummary(tp))
	}
	w := strings.Join(prov.Warnings(), "\n")
	for _, want := range []string{"dynamic membership", "mail-enabled", "#EXT#"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q: %s", want, w)
		}
	}
}

// TestDeleteOptIn: groups are deleted only with delete_groups, and only groups under
// managed_prefix that no file defines.
func TestDeleteOptIn(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[optIn], func(t *testing.T) {
			settings := ""
			if optIn {
				settings = "delete_groups: true\nmanaged_prefix: sg-"
			}
			e := newEnv(t, fakegraph.Options{}, settings, 3)
			e.seedGroup("sg-keep", "u000")
			e.seedGroup("sg-old", "u001")
			e.seedGroup("other", "u002")
			e.group("sg-keep", []string{"u000"})
			reg := e.registry(Options{})
			plan, tp, _ := e.plan(reg, false)
			if tp.Err != nil {
				t.Fatal(tp.Err)
			}
			if !optIn {
				if len(tp.Changes) != 0 {
					t.Fatalf("changes without opt-in: %v", changeSummary(tp))
				}
				return
			}
			if got := changeSummary(tp); len(got) != 1 || got[0] != "DELETE cn=sg-old,ou=aad,dc=example,dc=net from aad/groups" {
				t.Fatalf("changes %v", got)
			}
			e.apply(plan)
			if len(e.fake.GroupsByNickname("sg-old")) != 0 || len(e.fake.GroupsByNickname("other")) != 1 {
				t.Errorf("groups now %v", e.fake.Groups())
			}
		})
	}
}

// TestCoalescing: concurrent reads of the same groups share one request per group.
func TestCoalescing(t *testing.T) {
	e := newEnv(t, fakegraph.Options{Latency: 20 * time.Millisecond}, "", 5)
	var ids []string
	for _, n := range []string{"a", "b", "c", "d"} {
		ids = append(ids, e.seedGroup(n, "u000"))
	}
	reg := e.registry(Options{})
	p, err := reg.provider(testOU(e.fake.BaseURL(), ""))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			// Overlapping subsets, all at once.
			if _, err := p.svc.readMembers(context.Background(), ids[i%2:]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := e.fake.Stats().Routes["members.list"]; n != 4 {
		t.Errorf("member lists fetched %d times, want 4", n)
	}
}

// TestStaleWhileRevalidate: with a TTL, an expired member list is served at once and
// refreshed in the background by one request; one more than MaxStale (one TTL) past its
// expiry is not served but read again, as cache.TTL does.
func TestStaleWhileRevalidate(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 5)
	gid := e.seedGroup("a", "u000")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	reg := e.registry(Options{CacheTTL: time.Minute, StaleWhileRevalidate: true, Now: clock})
	p, err := reg.provider(testOU(e.fake.BaseURL(), ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.svc.readMembers(ctx, []string{gid}); err != nil {
		t.Fatal(err)
	}
	e.fake.SetMembers(gid, e.fake.AddUser(upn("u001")))
	mu.Lock()
	now = now.Add(90 * time.Second)
	mu.Unlock()
	got, err := p.svc.readMembers(ctx, []string{gid})
	if err != nil || got[gid].members[0].UPN != upn("u000") {
		t.Fatalf("stale value not served: %v %v", got, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		e2, ok := p.svc.member.Peek(gid)
		if ok && e2.Value.members[0].UPN == upn("u001") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no background refresh")
		}
		time.Sleep(5 * time.Millisecond)
	}

	e.fake.SetMembers(gid, e.fake.AddUser(upn("u002")))
	mu.Lock()
	now = now.Add(2 * time.Minute) // exactly TTL + MaxStale past: too old to serve
	mu.Unlock()
	got, err = p.svc.readMembers(ctx, []string{gid})
	if err != nil || got[gid].members[0].UPN != upn("u002") {
		t.Fatalf("a too-stale value was served: %v %v", got, err)
	}
}

func testOU(graphURL, extra string) *config.OU {
	src := "type: aad\nbase: ou=aad,dc=example,dc=net\nuser_principal_format: '%KEY%" + upnDomain + "'\ngraph_url: " + graphURL + "\n" + extra
	return &config.OU{Key: "aad/groups", Type: "aad", Base: "ou=aad,dc=example,dc=net", Settings: mustParse(src)}
}

// TestProviderErrors: configuration problems are reported when the provider is built.
func TestProviderErrors(t *testing.T) {
	for _, tc := range []struct {
		name, extra, want string
		static            bool
		env               map[string]string
	}{
		// Issue 24: no credential key and no $AZURE_CLIENT_SECRET is azidentity's chain, which
		// fails when a token is requested, not here.
		{"no credentials: default chain", "", "", false, nil},
		{"client secret, nothing given", "credential: client_secret", "credential client_secret: missing tenant_id (or $AZURE_TENANT_ID), client_id (or $AZURE_CLIENT_ID), client_secret", false, nil},
		{"secret only from env", "tenant_id: t\nclient_id: c\ncredential: client_secret", "client_secret (or $AZURE_CLIENT_SECRET)", false, nil},
		{"certificate without file", "tenant_id: t\nclient_id: c\ncredential: certificate\nclient_certificate_path: /nonexistent/c.pem", "reading client_certificate_path", false, nil},
		{"workload identity without token file", "tenant_id: t\nclient_id: c\ncredential: workload_identity", "missing $AZURE_FEDERATED_TOKEN_FILE", false, nil},
		{"github oidc outside Actions", "credential: github_oidc", "missing tenant_id (or $AZURE_TENANT_ID), client_id (or $AZURE_CLIENT_ID), " +
			"$ACTIONS_ID_TOKEN_REQUEST_URL (the job needs `permissions: id-token: write`), $ACTIONS_ID_TOKEN_REQUEST_TOKEN", false, nil},
		{"github oidc", "credential: github_oidc", "", false, map[string]string{"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c",
			"ACTIONS_ID_TOKEN_REQUEST_URL": "https://actions.example/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "rt"}},
		{"managed identity", "credential: managed_identity\nclient_id: c", "", false, nil},
		{"azure cli", "credential: azure_cli", "", false, nil},
		{"unknown kind (config built in code)", "credential: pat", `unknown Azure AD credential kind "pat"`, false, nil},
		{"env credentials", "", "", false, map[string]string{"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s"}},
		{"bad format", "user_principal_format: nokey", "must contain %KEY%", true, nil},
		{"delete without prefix", "delete_groups: true", "managed_prefix", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{Getenv: func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }}
			if tc.static {
				opt.TokenCredential = staticCred{"x"}
			}
			reg := NewRegistry(opt)
			defer reg.Close()
			ou := testOU("https://graph.example.test/v1.0", tc.extra)
			if tc.extra != "" && strings.Contains(tc.extra, "user_principal_format") {
				ou = testOU("https://graph.example.test/v1.0", "")
				ou.Settings = mustParse("type: aad\nbase: ou=aad,dc=example,dc=net\n" + tc.extra)
			}
			_, err := reg.Provider(ou)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func mustParse(s string) config.Value {
	n, err := config.ParseValue(s)
	if err != nil {
		panic(err)
	}
	return n
}

// TestDesireChecks: malformed object IDs are refused per group.
func TestDesireChecks(t *testing.T) {
	reg := NewRegistry(Options{TokenCredential: staticCred{"x"}})
	p, err := reg.provider(testOU("https://graph.example.test/v1.0", ""))
	if err != nil {
		t.Fatal(err)
	}
	g := &providers.Group{DN: "cn=x,ou=aad", CN: "x", Metadata: map[string]any{"aad_object_id": "nope"}}
	if err := p.Desire(nil, g); err == nil {
		t.Error("bad object ID accepted")
	}
}

// TestCreateOutcomeNotSeen: a create that Graph did (connection dropped after it), did not
// (dropped before), or throttled. A 429 proves nothing was made, so the create is sent again
// after its Retry-After. After a lost reply the provider only looks the name up: it adopts a
// group it finds and adds the members; if it finds none, the change is Unknown and the create
// is NOT sent again in this run (Graph would accept a duplicate), and the next run creates it.
// Always one group, never two. The SDK's retry middleware is off, so a 429 is not replayed
// behind our back.
func TestCreateOutcomeNotSeen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   fakegraph.Fault
		sent    int64
		wait    time.Duration
		unknown bool
	}{
		{"created", fakegraph.Fault{Drop: true, After: true}, 1, 0, false},
		{"not created", fakegraph.Fault{Drop: true}, 1, 0, true},
		{"throttled", fakegraph.Fault{Status: 429, RetryAfter: "3"}, 2, 3 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, fakegraph.Options{}, "create_if_missing: true", 4)
			e.seedUsers(e.people...)
			e.group("fresh", []string{"u000", "u001"})
			reg := e.registry(Options{})
			plan, tp, _ := e.plan(reg, false)
			if tp.Err != nil {
				t.Fatal(tp.Err)
			}
			f := tc.fault
			f.Method, f.Path, f.Scope = "POST", "/groups", fakegraph.TopLevel
			e.fake.Inject(f)
			if tc.unknown {
				rep := e.applyAllowingErrors(plan)
				if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Status != providers.Unknown ||
					!strings.Contains(o[0].Err.Error(), "not sent again") {
					t.Fatalf("outcomes %+v", o)
				}
				if n := len(e.fake.GroupsByNickname("fresh")); n != 0 {
					t.Fatalf("%d groups named fresh", n)
				}
				// The next run creates it.
				plan, tp, _ = e.plan(reg, false)
				if got := changeSummary(tp); tp.Err != nil || len(got) != 1 || !strings.HasPrefix(got[0], "ADD ") {
					t.Fatalf("next run: %v %v", tp.Err, got)
				}
				e.apply(plan)
				tc.sent++
			} else {
				e.apply(plan)
			}
			if n := len(e.fake.GroupsByNickname("fresh")); n != 1 {
				t.Fatalf("%d groups named fresh", n)
			}
			if got := e.members("fresh"); !slices.Equal(got, []string{"u000", "u001"}) {
				t.Errorf("members %v", got)
			}
			if n := reg.Counters()["creates"]; n != tc.sent {
				t.Errorf("creates sent %d, want %d", n, tc.sent)
			}
			if tc.wait != 0 && !slices.Contains(e.sleep.Waits(), tc.wait) {
				t.Errorf("waits %v", e.sleep.Waits())
			}
			if n := e.fake.Stats().Routes["groups.create"]; tc.fault.Status != 0 && n != tc.sent {
				t.Errorf("the server saw %d creates, want %d (a middleware retry?)", n, tc.sent)
			}
			_, tp2, _ := e.plan(reg, false)
			if tp2.Err != nil || len(tp2.Changes) != 0 {
				t.Fatalf("re-run: %v %v", tp2.Err, changeSummary(tp2))
			}
		})
	}
}

// TestWriteEnvelope503: a 503 on the batch of writes is an unseen outcome: the provider reads
// the group back and sends only what is missing.
func TestWriteEnvelope503(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 6)
	e.seedUsers(e.people...)
	e.seedGroup("team", "u000", "u001")
	e.group("team", []string{"u001", "u002", "u003"})
	reg := e.registry(Options{})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	e.fake.Inject(fakegraph.Fault{Method: "POST", Path: "/$batch", Scope: fakegraph.TopLevel, Status: 503, RetryAfter: "1"})
	rep := e.apply(plan)
	if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Status != providers.Applied {
		t.Errorf("outcomes %+v", o)
	}
	if got := e.members("team"); !slices.Equal(got, []string{"u001", "u002", "u003"}) {
		t.Errorf("team: %v", got)
	}
	if n := e.fake.Stats().Routes["members.list"]; n != 2 { // plan + read-back
		t.Errorf("member reads %d", n)
	}
}

// TestObjectIDDescriptionAmbiguity: metadata_aad_object_id names a group whatever its
// mailNickname; a description drift is one PATCH; two groups with the file's name fail the
// plan with a hint.
func TestObjectIDDescriptionAmbiguity(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 4)
	e.seedUsers(e.people...)
	gid := e.seedGroup("Legacy Name", "u000")
	e.write("groups/aad/groups/renamed.txt", "description = New text\nusername = u000\nmetadata_aad_object_id = "+gid+"\n")
	reg := e.registry(Options{})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	if got := changeSummary(tp); len(got) != 1 || !tp.Changes[0].DescriptionChanged {
		t.Fatalf("changes %v", got)
	}
	e.apply(plan)
	if g, _ := e.fake.Group(gid); g.Description != "New text" || g.MailNickname != "Legacy Name" {
		t.Errorf("group %+v", g)
	}
	if n := e.fake.Stats().Routes["groups.patch"]; n != 1 {
		t.Errorf("patches %d", n)
	}

	e.seedGroup("twin", "u001")
	e.seedGroup("twin", "u001")
	e.group("twin", []string{"u001"})
	_, tp, _ = e.plan(e.registry(Options{}), false)
	if tp.Err == nil || !strings.Contains(tp.Err.Error(), "metadata_aad_object_id") {
		t.Fatalf("ambiguity not reported: %v", tp.Err)
	}
}

// TestPredictive: a group whose predictive entry equals the desired members is trusted with
// no request (even if Graph drifted, by design); one whose entry differs is invalidated and
// read from Graph, so only diffs based on Graph data become changes.
func TestPredictive(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "", 5)
	e.seedUsers(e.people...)
	e.seedGroup("a", "u000", "u001")
	e.seedGroup("b", "u000") // drifted: the cache says u000,u002
	e.seedGroup("c", "u000")
	e.group("a", []string{"u000", "u001"})
	e.group("b", []string{"u000", "u002"})
	e.group("c", []string{"u000", "u003"})
	pred := e.predictive(map[string][]string{"a": {"U000", "u001"}, "b": {"u000", "u002"}, "c": {"u000"}})
	reg := e.registry(Options{Predictive: pred})
	_, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	if got := changeSummary(tp); len(got) != 1 || got[0] != "CHANGE cn=c,ou=aad,dc=example,dc=net in aad/groups (+1 -0)" {
		t.Fatalf("changes %v", got)
	}
	c := reg.Counters()
	// c only: one lookup, one member list, one user resolution.
	if c["predictive_hits"] != 2 || c["batches"] != 3 || c["subrequests"] != 3 {
		t.Errorf("counters %v", c)
	}
	if _, ok := pred.Lookup("cn=c,ou=aad,dc=example,dc=net"); ok {
		t.Error("differing entry not invalidated")
	}
}
