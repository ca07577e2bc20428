package fakegraph

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// call sends one request with the server's token and decodes a JSON reply.
func call(t *testing.T, s *Server, method, path string, body any, gz bool) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			b = buf.Bytes()
		}
		rd = bytes.NewReader(b)
	}
	u := path
	if !strings.HasPrefix(u, "http") {
		u = s.BaseURL() + path
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	if gz {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, resp.Header, m
}

func TestMembersPagingWithEmptyPages(t *testing.T) {
	s := New(Options{EmptyPages: 2})
	defer s.Close()
	var ids []string
	for i := range 25 {
		ids = append(ids, s.AddUser(fmt.Sprintf("u%02d@x.test", i)))
	}
	sp := s.AddObject(KindServicePrincipal, "robot")
	g := s.AddGroup(Group{MailNickname: "g", SecurityEnabled: true, Members: append(ids, sp)})

	next := "/groups/" + g + "/members?%24top=10&%24select=id,userPrincipalName"
	var got []string
	pages, empty := 0, 0
	for next != "" {
		st, _, body := call(t, s, "GET", next, nil, false)
		if st != 200 {
			t.Fatalf("status %d: %v", st, body)
		}
		pages++
		vals := body["value"].([]any)
		if len(vals) == 0 {
			empty++
		}
		for _, v := range vals {
			m := v.(map[string]any)
			if _, ok := m["displayName"]; ok {
				t.Fatalf("$select not applied: %v", m)
			}
			got = append(got, fmt.Sprint(m["@odata.type"], " ", m["userPrincipalName"]))
		}
		next, _ = body["@odata.nextLink"].(string)
		if next != "" && !strings.HasPrefix(next, s.BaseURL()+"/") {
			t.Fatalf("nextLink %q is not absolute on the server base", next)
		}
	}
	if pages != 5 || empty != 2 || len(got) != 26 {
		t.Fatalf("pages=%d empty=%d items=%d", pages, empty, len(got))
	}
	if got[25] != "#microsoft.graph.servicePrincipal <nil>" {
		t.Errorf("last member %q", got[25])
	}
	if st := s.Stats(); st.MemberPages != 5 || st.NewConnections != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestBatchShuffledAndLimits(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	var reqs []map[string]any
	for i := range 20 {
		g := s.AddGroup(Group{MailNickname: fmt.Sprintf("g%d", i)})
		reqs = append(reqs, map[string]any{"id": fmt.Sprint(i), "method": "GET", "url": "/groups/" + g + "?%24select=mailNickname"})
	}
	// Graph is not documented to take compressed request bodies: the fake refuses them.
	if st, _, body := call(t, s, "POST", "/$batch", map[string]any{"requests": reqs}, true); st != http.StatusUnsupportedMediaType {
		t.Fatalf("gzip body: status %d %v", st, body)
	}
	st, _, body := call(t, s, "POST", "/$batch", map[string]any{"requests": reqs}, false)
	if st != 200 {
		t.Fatalf("status %d %v", st, body)
	}
	var order []string
	for _, r := range body["responses"].([]any) {
		m := r.(map[string]any)
		id := m["id"].(string)
		order = append(order, id)
		if nick := m["body"].(map[string]any)["mailNickname"]; nick != "g"+id {
			t.Errorf("item %s answered %v", id, nick)
		}
	}
	if slices.IsSortedFunc(order, func(a, b string) int { return cmp.Compare(atoi(a), atoi(b)) }) {
		t.Errorf("replies not shuffled: %v", order)
	}
	reqs = append(reqs, map[string]any{"id": "x", "method": "GET", "url": "/groups"})
	if st, _, _ := call(t, s, "POST", "/$batch", map[string]any{"requests": reqs}, false); st != 400 {
		t.Errorf("21 items: status %d", st)
	}
	dup := []map[string]any{{"id": "1", "method": "GET", "url": "/groups"}, {"id": "1", "method": "GET", "url": "/groups"}}
	if st, _, _ := call(t, s, "POST", "/$batch", map[string]any{"requests": dup}, false); st != 400 {
		t.Errorf("duplicate ids: status %d", st)
	}
	if got := s.Stats().GzipBodies; got != 1 {
		t.Errorf("gzip bodies %d", got)
	}
}

func TestRefSemanticsAndFaults(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	u := s.AddUser("a@x.test")
	g := s.AddGroup(Group{MailNickname: "g"})
	ref := map[string]any{"@odata.id": s.BaseURL() + "/directoryObjects/" + u}
	for _, want := range []int{204, 400} {
		if st, _, _ := call(t, s, "POST", "/groups/"+g+"/members/$ref", ref, false); st != want {
			t.Errorf("add: status %d, want %d", st, want)
		}
	}
	missing := map[string]any{"@odata.id": s.BaseURL() + "/directoryObjects/nope"}
	if st, _, _ := call(t, s, "POST", "/groups/"+g+"/members/$ref", missing, false); st != 404 {
		t.Errorf("add unknown: status %d", st)
	}
	for _, want := range []int{204, 404} {
		if st, _, _ := call(t, s, "DELETE", "/groups/"+g+"/members/"+u+"/$ref", nil, false); st != want {
			t.Errorf("remove: status %d, want %d", st, want)
		}
	}
	s.Inject(Fault{Path: "/groups/*/members/$ref", Scope: InBatch, Status: 429, RetryAfter: "7"})
	reqs := []map[string]any{{"id": "a", "method": "POST", "url": "/groups/" + g + "/members/$ref", "body": ref,
		"headers": map[string]string{"Content-Type": "application/json"}}}
	_, _, body := call(t, s, "POST", "/$batch", map[string]any{"requests": reqs}, false)
	item := body["responses"].([]any)[0].(map[string]any)
	if item["status"].(float64) != 429 || item["headers"].(map[string]any)["Retry-After"] != "7" {
		t.Errorf("throttled item %v", item)
	}
	s.Inject(Fault{Path: "/$batch", Scope: TopLevel, Status: 503, RetryAfter: "1"})
	if st, h, _ := call(t, s, "POST", "/$batch", map[string]any{"requests": reqs}, false); st != 503 || h.Get("Retry-After") != "1" {
		t.Errorf("whole-request fault: %d %v", st, h)
	}
	if _, _, body = call(t, s, "POST", "/$batch", map[string]any{"requests": reqs}, false); body["responses"].([]any)[0].(map[string]any)["status"].(float64) != 204 {
		t.Errorf("after faults: %v", body)
	}
	if st := s.Stats(); st.Throttled != 1 || st.Faults != 2 {
		t.Errorf("stats %+v", st)
	}
	// The dangerous URL deletes the object and is counted.
	call(t, s, "DELETE", "/groups/"+g+"/members/"+u, nil, false)
	if _, ok := s.UserID("a@x.test"); ok || s.Stats().ObjectDeletes != 1 {
		t.Errorf("DELETE without $ref not emulated")
	}
}

func TestFilterAndAuth(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, n := range []string{"alpha", "beta", "gamma", "sg-one"} {
		s.AddGroup(Group{MailNickname: n, SecurityEnabled: true})
	}
	q := url.Values{"$filter": {"mailNickname in ('ALPHA','gamma','nope')"}, "$select": {"id,mailNickname"}}
	_, _, body := call(t, s, "GET", "/groups?"+q.Encode(), nil, false)
	if n := len(body["value"].([]any)); n != 2 {
		t.Errorf("in filter matched %d", n)
	}
	q.Set("$filter", "startswith(mailNickname,'sg-') or mailNickname eq 'beta'")
	_, _, body = call(t, s, "GET", "/groups?"+q.Encode(), nil, false)
	if n := len(body["value"].([]any)); n != 2 {
		t.Errorf("startswith/or matched %d", n)
	}
	var many []string
	for i := range 16 {
		many = append(many, fmt.Sprintf("'n%d'", i))
	}
	q.Set("$filter", "mailNickname in ("+strings.Join(many, ",")+")")
	if st, _, _ := call(t, s, "GET", "/groups?"+q.Encode(), nil, false); st != 400 {
		t.Errorf("16 values: status %d", st)
	}
	req, _ := http.NewRequest("GET", s.BaseURL()+"/groups", nil)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || s.Stats().Unauthorized != 1 {
		t.Errorf("no token: %d", resp.StatusCode)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestBatchDependsOn(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	g := s.AddGroup(Group{MailNickname: "g"})
	reqs := []map[string]any{
		{"id": "1", "method": "GET", "url": "/groups/missing"},
		{"id": "2", "method": "GET", "url": "/groups/" + g, "dependsOn": []string{"1"}},
		{"id": "3", "method": "GET", "url": "groups/" + g},
	}
	_, _, body := call(t, s, "POST", "/$batch", map[string]any{"requests": reqs}, false)
	got := map[string]float64{}
	for _, r := range body["responses"].([]any) {
		m := r.(map[string]any)
		got[m["id"].(string)] = m["status"].(float64)
	}
	if got["1"] != 404 || got["2"] != 424 || got["3"] != 200 {
		t.Errorf("statuses %v", got)
	}
}
