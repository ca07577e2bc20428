package aad

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/providers/aad/fakegraph"
)

// Tests of issue 9: Microsoft Graph as it really behaves.

// TestBadMailNicknameRefusedAtPlan (issue 9, item 6): a group to create whose name Graph
// would refuse as a mailNickname fails the plan, naming the file and the character, before
// anything is written. A config repo only has names of [A-Za-z0-9_-] (calc refuses others
// when it loads), so through files only the length can be wrong; a library caller can pass
// any name. A group that exists with such a name (synchronised from AD, say) is managed as
// usual: no create, nothing to refuse. The fake refuses the names too, as Graph does.
func TestBadMailNicknameRefusedAtPlan(t *testing.T) {
	t.Run("file name too long", func(t *testing.T) {
		e := newEnv(t, fakegraph.Options{}, "create_if_missing: true", 2)
		e.seedUsers(e.people...)
		long := strings.Repeat("x", 65)
		e.group(long, []string{"u000"})
		e.group("fine", []string{"u001"})
		_, tp, _ := e.plan(e.registry(Options{}), false)
		if tp.Err == nil {
			t.Fatalf("plan accepted a 65-character name: %v", changeSummary(tp))
		}
		for _, want := range []string{"groups/aad/groups/" + long + ".txt", "65 characters long", "mailNickname"} {
			if !strings.Contains(tp.Err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, tp.Err)
			}
		}
		if len(tp.Changes) != 0 || len(e.fake.Groups()) != 0 {
			t.Errorf("changes %v, groups %d", changeSummary(tp), len(e.fake.Groups()))
		}
	})

	for _, tc := range []struct{ name, want string }{
		{"ops@eu", `'@' at character 4`},
		{"ops(eu)", `'(' at character 4`},
		{`a\b`, `'\\' at character 2`},
		{"team;x", `';' at character 5`},
		{"team.infra", `'.' at character 5`},
		{"two words", "a space at character 4"},
		{"caf\u00e9", `'é', which is not ASCII, at character 4`},
		{"tab\tx", "control character U+0009 at character 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakegraph.New(fakegraph.Options{})
			t.Cleanup(f.Close)
			f.AddUser(upn("u000"))
			reg := NewRegistry(Options{TokenCredential: staticCred{f.Token()}, NegativeCacheTTL: -1})
			t.Cleanup(reg.Close)
			p, err := reg.provider(testOU(f.BaseURL(), "create_if_missing: true"))
			if err != nil {
				t.Fatal(err)
			}
			g := &providers.Group{DN: "cn=x,ou=aad,dc=example,dc=net", CN: tc.name, File: "defs/x.txt", Members: []string{"u000"}}
			_, err = p.ReadDesired(context.Background(), nil, []*providers.Group{g})
			if err == nil {
				t.Fatalf("%q accepted", tc.name)
			}
			for _, want := range []string{"defs/x.txt", tc.want, "mailNickname"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			// Sent anyway, Graph (and the fake) would refuse it.
			st, _, _ := postJSON(t, f, "/groups", map[string]any{"displayName": tc.name, "mailNickname": tc.name,
				"mailEnabled": false, "securityEnabled": true})
			if st != 400 {
				t.Errorf("fake took mailNickname %q: %d", tc.name, st)
			}
			// The same name on an existing group is fine: nothing is created.
			f.AddGroup(fakegraph.Group{MailNickname: tc.name, DisplayName: tc.name, SecurityEnabled: true})
			if _, err := p.ReadDesired(context.Background(), nil, []*providers.Group{g}); err != nil {
				t.Errorf("existing group %q: %v", tc.name, err)
			}
		})
	}
}

// TestAddAfterCreateReplicationLag (issue 9, item 7): Graph refuses the member adds to a group
// it created moments before ("The source resource object or one of the objects being
// referenced do not exist."). The provider reads back, waits (through the injected sleeper:
// 500ms, then 1s, ...) and sends again what is still missing, within ReplicationLagWait; the
// apply succeeds and the next plan is empty. When the lag outlasts the budget, the adds fail
// with a message that says so, and the next run converges.
func TestAddAfterCreateReplicationLag(t *testing.T) {
	t.Run("within the budget", func(t *testing.T) {
		e := newEnv(t, fakegraph.Options{WriteLag: 2}, "create_if_missing: true", 4)
		e.seedUsers(e.people...)
		e.group("fresh", []string{"u000", "u001", "u002", "u003"})
		reg := e.registry(Options{})
		plan, tp, _ := e.plan(reg, false)
		if tp.Err != nil {
			t.Fatal(tp.Err)
		}
		rep := e.apply(plan)
		if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Status != providers.Applied {
			t.Fatalf("outcomes %+v", o)
		}
		if got := e.members("fresh"); !slices.Equal(got, []string{"u000", "u001", "u002", "u003"}) {
			t.Errorf("members %v", got)
		}
		// The 4 adds go in one members@odata.bind PATCH, refused twice (the lag was 2
		// requests): two waits, 500ms then 1s.
		if got := e.sleep.Waits(); !slices.Equal(got, []time.Duration{500 * time.Millisecond, time.Second}) {
			t.Errorf("waits %v", got)
		}
		if n := e.fake.Stats().LagRefusals; n != 2 {
			t.Errorf("lag refusals %d", n)
		}
		if n := e.fake.Stats().Routes["groups.create"]; n != 1 {
			t.Errorf("creates %d", n)
		}
		if _, tp, _ = e.plan(reg, false); tp.Err != nil || len(tp.Changes) != 0 {
			t.Fatalf("next plan: %v %v", tp.Err, changeSummary(tp))
		}
	})

	t.Run("beyond the budget", func(t *testing.T) {
		e := newEnv(t, fakegraph.Options{WriteLag: 3}, "create_if_missing: true", 1)
		e.seedUsers(e.people...)
		e.group("fresh", []string{"u000"})
		reg := e.registry(Options{ReplicationLagWait: time.Second})
		plan, tp, _ := e.plan(reg, false)
		if tp.Err != nil {
			t.Fatal(tp.Err)
		}
		rep := e.applyAllowingErrors(plan)
		o := rep.Targets[0].Outcomes
		if len(o) != 1 || o[0].Status != providers.Failed || o[0].Err == nil ||
			!strings.Contains(o[0].Err.Error(), "do not exist") || !strings.Contains(o[0].Err.Error(), "replication lag") {
			t.Fatalf("outcomes %+v", o)
		}
		if got := e.sleep.Waits(); !slices.Equal(got, []time.Duration{500 * time.Millisecond}) {
			t.Errorf("waits %v (budget 1s)", got)
		}
		plan, tp, _ = e.plan(reg, false)
		if got := changeSummary(tp); tp.Err != nil || !slices.Equal(got, []string{"CHANGE " + groupDN("fresh") + " in aad/groups (+1 -0)"}) {
			t.Fatalf("next plan: %v %v", tp.Err, got)
		}
		e.apply(plan)
		if _, tp, _ = e.plan(reg, false); tp.Err != nil || len(tp.Changes) != 0 {
			t.Fatalf("third plan: %v %v", tp.Err, changeSummary(tp))
		}
		if n := len(e.fake.GroupsByNickname("fresh")); n != 1 {
			t.Errorf("%d groups", n)
		}
	})
}

// TestMembersWithoutUPN (issue 9, item 8): Graph lists the members with only @odata.type and
// id (the application may not read users). The provider resolves them by ID in bulk and plans
// exactly the real difference (never a re-add of a member it could not name); the apply
// converges. If users cannot be read either, the plan fails with a clear error and nothing
// is written.
func TestMembersWithoutUPN(t *testing.T) {
	t.Run("resolved by ID", func(t *testing.T) {
		e := newEnv(t, fakegraph.Options{LimitedMembers: true}, "", 30)
		e.seedUsers(e.people...)
		sp := e.fake.AddObject(fakegraph.KindServicePrincipal, "robot")
		gid := e.seedGroup("team", uids(0, 20)...)
		e.fake.SetMembers(gid, append(e.fake.GroupsByNickname("team")[0].Members, sp)...)
		e.group("team", uids(1, 25))
		reg := e.registry(Options{})
		plan, tp, prov := e.plan(reg, false)
		if tp.Err != nil {
			t.Fatal(tp.Err)
		}
		if got := changeSummary(tp); !slices.Equal(got, []string{"CHANGE " + groupDN("team") + " in aad/groups (+5 -1)"}) {
			t.Fatalf("changes %v", got)
		}
		if w := strings.Join(prov.Warnings(), "\n"); !strings.Contains(w, sp) {
			t.Errorf("service principal not reported: %s", w)
		}
		e.apply(plan)
		if got := e.members("team"); !slices.Equal(got, uids(1, 25)) {
			t.Errorf("members %v", got)
		}
		if ms := e.fake.GroupsByNickname("team")[0].Members; !slices.Contains(ms, sp) {
			t.Error("service principal removed")
		}
		before := reg.Counters()
		if _, tp, _ = e.plan(reg, false); tp.Err != nil || len(tp.Changes) != 0 {
			t.Fatalf("next plan: %v %v", tp.Err, changeSummary(tp))
		}
		// Lookup, members, and the 24 unnamed members resolved in one batch (2 filters).
		if d := delta(reg.Counters(), before); d["batches"] != 3 || d["subrequests"] != 4 {
			t.Errorf("next plan cost %v", d)
		}
	})

	t.Run("users unreadable", func(t *testing.T) {
		e := newEnv(t, fakegraph.Options{LimitedMembers: true, DenyUserReads: true}, "", 3)
		e.seedUsers(e.people...)
		gid := e.seedGroup("team", "u000", "u001")
		e.group("team", []string{"u000", "u002"})
		reg := e.registry(Options{})
		_, tp, _ := e.plan(reg, false)
		if tp.Err == nil {
			t.Fatalf("plan succeeded: %v", changeSummary(tp))
		}
		for _, want := range []string{groupDN("team"), gid, "2 members", "could not be identified", "User.Read.All", "Authorization_RequestDenied"} {
			if !strings.Contains(tp.Err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, tp.Err)
			}
		}
		if len(tp.Changes) != 0 {
			t.Errorf("changes %v", changeSummary(tp))
		}
	})
}

// TestRequestBodiesUncompressed (issue 9, item 9): no request body reaches Graph compressed
// (creates, member writes, $batch): the fake refuses compressed bodies with 415, which the
// SDK's compression handler would answer by sending everything twice.
func TestRequestBodiesUncompressed(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "create_if_missing: true", 4)
	e.seedUsers(e.people...)
	e.seedGroup("old", "u000", "u001")
	e.group("old", []string{"u001", "u002"})
	e.group("fresh", []string{"u003"})
	reg := e.registry(Options{})
	plan, tp, _ := e.plan(reg, false)
	if tp.Err != nil {
		t.Fatal(tp.Err)
	}
	e.apply(plan)
	st := e.fake.Stats()
	if st.GzipBodies != 0 {
		t.Errorf("%d compressed request bodies", st.GzipBodies)
	}
	if c := reg.Counters(); c["requests"] != st.Requests {
		t.Errorf("client sent %d requests, server saw %d", c["requests"], st.Requests)
	}
	if _, tp, _ = e.plan(reg, false); tp.Err != nil || len(tp.Changes) != 0 {
		t.Fatalf("next plan: %v %v", tp.Err, changeSummary(tp))
	}
}

// TestCreateLooksUpFirst (issue 9, item 10): Graph takes a second security group with a
// mailNickname in use (unique only among Microsoft 365 groups), so the provider looks the
// name up again just before creating: a group made since the plan (by a person, another run)
// is adopted, never doubled, and the next plan converges on it.
func TestCreateLooksUpFirst(t *testing.T) {
	e := newEnv(t, fakegraph.Options{}, "create_if_missing: true", 3)
	e.seedUsers(e.people...)
	e.group("fresh", []string{"u000", "u001"})
	reg := e.registry(Options{})
	plan, tp, _ := e.plan(reg, false)
	if got := changeSummary(tp); tp.Err != nil || !slices.Equal(got, []string{"ADD " + groupDN("fresh") + " to aad/groups (Members: u000,u001)"}) {
		t.Fatalf("plan: %v %v", tp.Err, got)
	}
	// Someone creates the group between plan and apply (the plan's "not found" is cached).
	e.seedGroup("fresh", "u001", "u002")
	rep := e.apply(plan)
	if o := rep.Targets[0].Outcomes; len(o) != 1 || o[0].Status != providers.Applied {
		t.Fatalf("outcomes %+v", o)
	}
	if n := e.fake.Stats().Routes["groups.create"]; n != 0 {
		t.Errorf("%d creates sent", n)
	}
	if n := len(e.fake.GroupsByNickname("fresh")); n != 1 {
		t.Fatalf("%d groups named fresh", n)
	}
	plan, tp, _ = e.plan(reg, false)
	if got := changeSummary(tp); tp.Err != nil || !slices.Equal(got, []string{"CHANGE " + groupDN("fresh") + " in aad/groups (+0 -1)"}) {
		t.Fatalf("next plan: %v %v", tp.Err, got)
	}
	e.apply(plan)
	if got := e.members("fresh"); !slices.Equal(got, []string{"u000", "u001"}) {
		t.Errorf("members %v", got)
	}
	if _, tp, _ = e.plan(reg, false); tp.Err != nil || len(tp.Changes) != 0 {
		t.Fatalf("third plan: %v %v", tp.Err, changeSummary(tp))
	}
}

// postJSON sends one uncompressed JSON request to the fake with its token.
func postJSON(t *testing.T, f *fakegraph.Server, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, f.BaseURL()+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}
