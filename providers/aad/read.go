package aad

import (
	"context"
	"fmt"
	"slices"
	"strings"

	abstractions "github.com/microsoft/kiota-abstractions-go"
	"github.com/microsoftgraph/msgraph-sdk-go/groups"
	"github.com/microsoftgraph/msgraph-sdk-go/users"
)

// groupInfo is a group as a lookup returns it ($select of groupSelect).
type groupInfo struct {
	ID              string   `json:"id"`
	DisplayName     string   `json:"displayName"`
	MailNickname    string   `json:"mailNickname"`
	Description     *string  `json:"description"`
	GroupTypes      []string `json:"groupTypes"`
	SecurityEnabled *bool    `json:"securityEnabled"`
	MailEnabled     *bool    `json:"mailEnabled"`
}

// groupSelect is the $select of group lookups (a fresh slice: the SDK keeps a reference).
func groupSelect() []string {
	return []string{"id", "displayName", "mailNickname", "description", "groupTypes", "securityEnabled", "mailEnabled"}
}

// unmanageable says why Graph cannot write the group's members ("" when it can): dynamic
// groups compute their members from a rule; mail-enabled security groups and distribution
// lists are mastered in Exchange.
func (g *groupInfo) unmanageable() string {
	has := func(t string) bool {
		return slices.ContainsFunc(g.GroupTypes, func(x string) bool { return strings.EqualFold(x, t) })
	}
	switch {
	case has("DynamicMembership"):
		return "it has dynamic membership"
	case deref(g.MailEnabled) && !has("Unified"):
		return "it is mail-enabled (Exchange manages its members)"
	}
	return ""
}

// member is one direct member as a member list returns it.
type member struct {
	Type string `json:"@odata.type"`
	ID   string `json:"id"`
	UPN  string `json:"userPrincipalName"`
}

func (m member) isUser() bool { return strings.EqualFold(m.Type, "#microsoft.graph.user") }

// memberList is the direct members of one group.
type memberList struct {
	members []member
}

// memberSelect is the $select of member and user reads: the object ID and the key
// attribute, nothing else.
func memberSelect() []string { return []string{"id", "userPrincipalName"} }

func top999() *int32 {
	n := int32(pageSize)
	return &n
}

// lookupGroups finds groups by mailNickname ("nick:<lower name>" keys) and by object ID
// ("id:<object id>" keys). Names go 15 to an `in` filter, so one $batch looks up 300 groups.
// fresh bypasses the cache (after a create whose answer was lost).
func (s *service) lookupGroups(ctx context.Context, nicks, ids []string, fresh bool) (map[string][]*groupInfo, error) {
	keys := make([]string, 0, len(nicks)+len(ids))
	for _, n := range nicks {
		keys = append(keys, "nick:"+strings.ToLower(n))
	}
	for _, id := range ids {
		keys = append(keys, "id:"+strings.ToLower(id))
	}
	if fresh {
		for _, k := range keys {
			s.groups.invalidate(k)
		}
	}
	got, err := s.groups.getMany(ctx, keys, s.fetchGroups)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]*groupInfo, len(got))
	for k, e := range got {
		if e.found {
			out[k] = e.v
		}
	}
	return out, nil
}

func (s *service) fetchGroups(ctx context.Context, keys []string) (map[string][]*groupInfo, error) {
	var nicks, ids []string
	for _, k := range keys {
		if n, ok := strings.CutPrefix(k, "nick:"); ok {
			nicks = append(nicks, n)
		} else if id, ok := strings.CutPrefix(k, "id:"); ok {
			ids = append(ids, id)
		}
	}
	var reqs []*abstractions.RequestInformation
	for _, part := range []struct {
		prop string
		vals []string
	}{{"mailNickname", nicks}, {"id", ids}} {
		for c := range slices.Chunk(part.vals, maxInValues) {
			ri, err := s.groupQuery(ctx, inFilter(part.prop, c))
			if err != nil {
				return nil, err
			}
			reqs = append(reqs, ri)
		}
	}
	pages, err := readPaged[*groupInfo](ctx, s.g, reqs)
	if err != nil {
		return nil, fmt.Errorf("looking up groups: %w", err)
	}
	out := map[string][]*groupInfo{}
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	for _, p := range pages {
		for _, g := range p {
			if k := "nick:" + strings.ToLower(g.MailNickname); want[k] {
				out[k] = append(out[k], g)
			}
			if k := "id:" + strings.ToLower(g.ID); want[k] {
				out[k] = append(out[k], g)
			}
		}
	}
	return out, nil
}

func (s *service) groupQuery(ctx context.Context, filter string) (*abstractions.RequestInformation, error) {
	ri, err := s.g.client.Groups().ToGetRequestInformation(ctx, &groups.GroupsRequestBuilderGetRequestConfiguration{
		QueryParameters: &groups.GroupsRequestBuilderGetQueryParameters{Filter: &filter, Select: groupSelect(), Top: top999()}})
	if err != nil {
		return nil, fmt.Errorf("building a group query: %w", err)
	}
	return ri, nil
}

// listPrefix lists every group whose mailNickname starts with prefix (never cached: it is how
// deletions are found, and it must see groups created since).
func (s *service) listPrefix(ctx context.Context, prefix string) ([]*groupInfo, error) {
	ri, err := s.groupQuery(ctx, "startswith(mailNickname,"+quote(prefix)+")")
	if err != nil {
		return nil, err
	}
	pages, err := readPaged[*groupInfo](ctx, s.g, []*abstractions.RequestInformation{ri})
	if err != nil {
		return nil, fmt.Errorf("listing groups with prefix %q: %w", prefix, err)
	}
	return pages[0], nil
}

func inFilter(prop string, vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = quote(v)
	}
	if len(q) == 1 {
		return prop + " eq " + q[0]
	}
	return prop + " in (" + strings.Join(q, ",") + ")"
}

// readMembers returns the direct members of groups by object ID: one first-page request per
// group, 20 per $batch, then further rounds for groups with more than 999 members.
func (s *service) readMembers(ctx context.Context, ids []string) (map[string]*memberList, error) {
	got, err := s.member.getMany(ctx, ids, s.fetchMembers)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*memberList, len(got))
	for k, e := range got {
		if e.found {
			out[k] = e.v
		}
	}
	return out, nil
}

func (s *service) fetchMembers(ctx context.Context, ids []string) (map[string]*memberList, error) {
	reqs := make([]*abstractions.RequestInformation, len(ids))
	for i, id := range ids {
		ri, err := s.g.client.Groups().ByGroupId(id).Members().ToGetRequestInformation(ctx,
			&groups.ItemMembersRequestBuilderGetRequestConfiguration{
				QueryParameters: &groups.ItemMembersRequestBuilderGetQueryParameters{Top: top999(), Select: memberSelect()}})
		if err != nil {
			return nil, fmt.Errorf("building a member query: %w", err)
		}
		reqs[i] = ri
	}
	pages, err := readPaged[member](ctx, s.g, reqs)
	if err != nil {
		return nil, fmt.Errorf("reading group members: %w", err)
	}
	out := make(map[string]*memberList, len(ids))
	for i, id := range ids {
		out[id] = &memberList{members: pages[i]}
		for _, m := range pages[i] {
			if m.isUser() && m.UPN != "" {
				// Every member read tells us a user's object ID: removals and re-adds need
				// no lookup.
				s.users.set(strings.ToLower(m.UPN), m.ID)
			}
		}
	}
	return out, nil
}

// resolveUsers returns the object IDs of user principal names (lower-case keys; users that
// do not exist are absent). 15 names per `in` filter, 300 per $batch, cached for the run.
func (s *service) resolveUsers(ctx context.Context, upns []string) (map[string]string, error) {
	keys := make([]string, len(upns))
	for i, u := range upns {
		keys[i] = strings.ToLower(u)
	}
	got, err := s.users.getMany(ctx, keys, s.fetchUsers)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(got))
	for k, e := range got {
		if e.found {
			out[k] = e.v
		}
	}
	return out, nil
}

func (s *service) fetchUsers(ctx context.Context, keys []string) (map[string]string, error) {
	var reqs []*abstractions.RequestInformation
	for c := range slices.Chunk(keys, maxInValues) {
		f := inFilter("userPrincipalName", c)
		ri, err := s.g.client.Users().ToGetRequestInformation(ctx, &users.UsersRequestBuilderGetRequestConfiguration{
			QueryParameters: &users.UsersRequestBuilderGetQueryParameters{Filter: &f, Select: memberSelect(), Top: top999()}})
		if err != nil {
			return nil, fmt.Errorf("building a user query: %w", err)
		}
		reqs = append(reqs, ri)
	}
	pages, err := readPaged[member](ctx, s.g, reqs)
	if err != nil {
		return nil, fmt.Errorf("resolving users: %w", err)
	}
	out := map[string]string{}
	for _, p := range pages {
		for _, u := range p {
			out[strings.ToLower(u.UPN)] = u.ID
		}
	}
	return out, nil
}
