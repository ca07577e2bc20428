package fakegraph

import (
	"net/http"
	"strings"
	"testing"
)

func odataError(t *testing.T, body map[string]any) (code, msg string) {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", body)
	}
	code, _ = e["code"].(string)
	msg, _ = e["message"].(string)
	return code, msg
}

// TestMailNicknameRules: Graph's documented mailNickname rules (64 ASCII characters, none of
// @ ( ) \ [ ] " ; : . < > , or space) are enforced on create and update; security groups may
// share a mailNickname, Microsoft 365 groups may not.
func TestMailNicknameRules(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	create := func(nick string, types ...string) (int, map[string]any) {
		body := map[string]any{"displayName": nick, "mailNickname": nick, "mailEnabled": len(types) > 0, "securityEnabled": len(types) == 0}
		if len(types) > 0 {
			body["groupTypes"] = types
		}
		st, _, b := call(t, s, "POST", "/groups", body, false)
		return st, b
	}
	for _, nick := range []string{"a@b", "a(b", "a)b", `a\b`, "a[b", "a]b", `a"b`, "a;b", "a:b", "a.b", "a<b", "a>b", "a,b", "a b",
		"caf\u00e9", "tab\tx", "", strings.Repeat("x", 65)} {
		st, b := create(nick)
		if st != http.StatusBadRequest {
			t.Errorf("%q: status %d", nick, st)
			continue
		}
		if code, msg := odataError(t, b); code != "Request_BadRequest" || !strings.Contains(msg, "'mailNickname'") {
			t.Errorf("%q: %s %s", nick, code, msg)
		}
	}
	for _, nick := range []string{strings.Repeat("x", 64), "a-b_c+d!e#f$g%h&i'j*k/l=m?n^o`p{q|r}s~t"} {
		if st, b := create(nick); st != http.StatusCreated {
			t.Errorf("%q: status %d %v", nick, st, b)
		}
	}
	if st, b := create("dup"); st != http.StatusCreated {
		t.Fatalf("dup: %d %v", st, b)
	}
	if st, b := create("DUP"); st != http.StatusCreated {
		t.Errorf("second security group with the same mailNickname: %d %v", st, b)
	}
	if st, b := create("m365", "Unified"); st != http.StatusCreated {
		t.Fatalf("m365: %d %v", st, b)
	}
	st, b := create("M365", "Unified")
	if st != http.StatusBadRequest {
		t.Fatalf("duplicate Microsoft 365 mailNickname: status %d", st)
	}
	if _, msg := odataError(t, b); !strings.Contains(msg, "same value for property mailNickname") {
		t.Errorf("duplicate: %s", msg)
	}
	if st := s.Stats().Invalid; st != 19 {
		t.Errorf("invalid %d", st)
	}
	gs := s.GroupsByNickname("dup")
	if st, _, b := call(t, s, "PATCH", "/groups/"+gs[0].ID, map[string]any{"mailNickname": "no way"}, false); st != http.StatusBadRequest {
		t.Errorf("patch with a space: %d %v", st, b)
	}
}

// TestWriteLag: the first WriteLag member adds to a group created through the API are
// refused with Graph's replication-lag answer and change nothing; seeded groups never lag.
func TestWriteLag(t *testing.T) {
	s := New(Options{WriteLag: 2})
	defer s.Close()
	u := s.AddUser("u@x")
	seeded := s.AddGroup(Group{MailNickname: "old", SecurityEnabled: true})
	ref := map[string]any{"@odata.id": s.BaseURL() + "/directoryObjects/" + u}
	if st, _, b := call(t, s, "POST", "/groups/"+seeded+"/members/$ref", ref, false); st != http.StatusNoContent {
		t.Fatalf("seeded group: %d %v", st, b)
	}
	_, _, g := call(t, s, "POST", "/groups", map[string]any{"displayName": "n", "mailNickname": "n", "mailEnabled": false, "securityEnabled": true}, false)
	id := g["id"].(string)
	for i := range 2 {
		st, _, b := call(t, s, "POST", "/groups/"+id+"/members/$ref", ref, false)
		if st != http.StatusBadRequest {
			t.Fatalf("attempt %d: %d", i, st)
		}
		if code, msg := odataError(t, b); code != "Request_BadRequest" || msg != "The source resource object or one of the objects being referenced do not exist." {
			t.Errorf("attempt %d: %s %s", i, code, msg)
		}
		if got := s.MemberUPNs(id); len(got) != 0 {
			t.Fatalf("a refused add changed the group: %v", got)
		}
	}
	if st, _, b := call(t, s, "POST", "/groups/"+id+"/members/$ref", ref, false); st != http.StatusNoContent {
		t.Fatalf("after the lag: %d %v", st, b)
	}
	if s.Stats().LagRefusals != 2 {
		t.Errorf("lag refusals %d", s.Stats().LagRefusals)
	}
}

// TestLimitedMembersAndDeniedUsers: members come back with only @odata.type and id, whatever
// $select asks; user reads are refused with 403.
func TestLimitedMembersAndDeniedUsers(t *testing.T) {
	s := New(Options{LimitedMembers: true, DenyUserReads: true})
	defer s.Close()
	u := s.AddUser("u@x")
	sp := s.AddObject(KindServicePrincipal, "robot")
	g := s.AddGroup(Group{MailNickname: "g", SecurityEnabled: true, Members: []string{u, sp}})
	st, _, b := call(t, s, "GET", "/groups/"+g+"/members?$select=id,userPrincipalName", nil, false)
	if st != 200 {
		t.Fatalf("members: %d %v", st, b)
	}
	vals := b["value"].([]any)
	if len(vals) != 2 {
		t.Fatalf("members %v", vals)
	}
	for _, v := range vals {
		m := v.(map[string]any)
		if len(m) != 2 || m["id"] == nil || m["@odata.type"] == nil {
			t.Errorf("member %v: want only @odata.type and id", m)
		}
	}
	for _, path := range []string{"/users?$filter=id+eq+'" + u + "'", "/users/" + u} {
		st, _, b := call(t, s, "GET", path, nil, false)
		if st != http.StatusForbidden {
			t.Errorf("%s: %d", path, st)
			continue
		}
		if code, _ := odataError(t, b); code != "Authorization_RequestDenied" {
			t.Errorf("%s: %s", path, code)
		}
	}
}
