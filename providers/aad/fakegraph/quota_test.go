package fakegraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// bindItem is a $batch item adding users to a group through members@odata.bind.
func bindItem(s *Server, id, group string, users ...string) map[string]any {
	var refs []string
	for _, u := range users {
		refs = append(refs, s.BaseURL()+"/directoryObjects/"+u)
	}
	return map[string]any{"id": id, "method": "PATCH", "url": "/groups/" + group, "body": map[string]any{"members@odata.bind": refs},
		"headers": map[string]string{"Content-Type": "application/json"}}
}

// members@odata.bind is all or nothing, inside a $batch as at top level: one reference
// already a member answers Graph's 400 and adds none of the others.
func TestBindAllOrNothing(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	us := s.AddUsers("a@x.test", "b@x.test", "c@x.test")
	g := s.AddGroup(Group{MailNickname: "g", Members: us[1:2]})
	_, _, body := call(t, s, "POST", "/$batch", map[string]any{"requests": []any{bindItem(s, "1", g, us...)}}, false)
	item := body["responses"].([]any)[0].(map[string]any)
	msg := item["body"].(map[string]any)["error"].(map[string]any)["message"]
	if item["status"].(float64) != 400 || msg != "One or more added object references already exist for the following modified properties: 'members'." {
		t.Fatalf("bind with a member: %v", item)
	}
	if got, _ := s.Group(g); !slices.Equal(got.Members, us[1:2]) {
		t.Fatalf("a refused bind changed the members: %v", got.Members)
	}
	if st, _, _ := call(t, s, "PATCH", "/groups/"+g, bindItem(s, "", g, us[0], us[2])["body"], false); st != http.StatusNoContent {
		t.Fatalf("bind: status %d", st)
	}
	if got, _ := s.Group(g); len(got.Members) != 3 {
		t.Fatalf("members after the bind: %v", got.Members)
	}
	var many []string
	for i := range 21 {
		many = append(many, s.AddUser(fmt.Sprintf("m%d@x.test", i)))
	}
	if st, _, _ := call(t, s, "PATCH", "/groups/"+g, bindItem(s, "", g, many...)["body"], false); st != http.StatusBadRequest {
		t.Fatalf("21 references: status %d", st)
	}
	// Every PATCH is one write, whatever it binds; the refused ones too.
	if st := s.Stats(); st.Writes != 3 || st.WritesByApp[DefaultTenant+"/"+DefaultApp] != 3 {
		t.Fatalf("writes %d %v", st.Writes, st.WritesByApp)
	}
}

// The write quotas: per application and tenant over 150 s, per tenant over 5 minutes, on the
// server's clock; the throttle header above 80% of the application's quota; 429 with the
// seconds until the window has room; refused writes are not done and not counted.
func TestWriteQuotas(t *testing.T) {
	clk := &testClock{now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	s := New(Options{WriteQuotas: true, AppWrites: 10, TenantWrites: 15, Now: clk.Now})
	defer s.Close()
	const other = "other-app-token"
	s.AddToken(other, DefaultTenant, "other-app")
	us := s.AddUsers("a@x.test", "b@x.test")
	g := s.AddGroup(Group{MailNickname: "g"})
	add := func(tok, user string) (int, http.Header) {
		t.Helper()
		if tok == "" {
			tok = s.Token()
		}
		b, _ := json.Marshal(bindItem(s, "1", g, user)["body"])
		req, _ := http.NewRequest("PATCH", s.BaseURL()+"/groups/"+g, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	var pcts []string
	for i := range 10 {
		clk.Add(time.Second)
		st, h := add("", us[i%2])
		if st != http.StatusNoContent && st != http.StatusBadRequest {
			t.Fatalf("write %d: status %d", i, st)
		}
		pcts = append(pcts, h.Get("x-ms-throttle-limit-percentage"))
	}
	if want := []string{"", "", "", "", "", "", "", "", "0.900", "1.000"}; !slices.Equal(pcts, want) {
		t.Fatalf("throttle headers %q, want %q", pcts, want)
	}
	// The 11th write of the application: refused until the first write (at 1 s) leaves the
	// window (at 151 s): 140 s from now (11 s).
	clk.Add(time.Second)
	st, h := add("", us[0])
	if st != http.StatusTooManyRequests || h.Get("Retry-After") != "140" ||
		h.Get("x-ms-throttle-scope") != "Tenant_Application/Write/"+DefaultApp+"/"+DefaultTenant {
		t.Fatalf("over the application quota: %d %v", st, h)
	}
	// Another application of the tenant has its own quota, until the tenant's is spent.
	for i := range 5 {
		if st, _ := add(other, us[i%2]); st == http.StatusTooManyRequests {
			t.Fatalf("other application, write %d: throttled", i)
		}
	}
	if st, h := add(other, us[0]); st != http.StatusTooManyRequests || h.Get("x-ms-throttle-scope") != "Tenant/Write/other-app/"+DefaultTenant {
		t.Fatalf("over the tenant quota: %d %v", st, h)
	}
	clk.Add(140 * time.Second) // 151 s: the first write left the application's window
	// ...but not the tenant's (5 minutes).
	if st, h := add("", us[0]); st != http.StatusTooManyRequests || h.Get("x-ms-throttle-scope") != "Tenant/Write/"+DefaultApp+"/"+DefaultTenant {
		t.Fatalf("at 151 s the tenant quota (15 in 5 minutes) let a 16th write through: %d %v", st, h)
	}
	clk.Add(5 * time.Minute)
	if st, _ := add("", us[0]); st == http.StatusTooManyRequests {
		t.Fatal("still throttled after the windows passed")
	}
	st2 := s.Stats()
	if st2.WriteLimitHits != 3 || st2.Throttled != 3 || st2.Writes != 16 || st2.WritesByTenant[DefaultTenant] != 16 ||
		st2.WritesByApp[DefaultTenant+"/other-app"] != 5 || st2.ThrottleHeaders == 0 {
		t.Fatalf("stats: hits %d throttled %d writes %d %v %v headers %d", st2.WriteLimitHits, st2.Throttled, st2.Writes,
			st2.WritesByApp, st2.WritesByTenant, st2.ThrottleHeaders)
	}
}
