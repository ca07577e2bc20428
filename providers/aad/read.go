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
	ID           string  `json:"id"`
	DisplayName  string  `json:"displayName"`
	MailNickname string  `json:"mailNickname"`
	Description  *string `json:"description"`
	// GroupTypes is nil when the reply did not carry it (Graph sends [] for none).
	GroupTypes      []string `json:"groupTypes"`
	SecurityEnabled *bool    `json:"securityEnabled"`
	MailEnabled     *bool    `json:"mailEnabled"`
	CreatedDateTime string   `json:"createdDateTime"`
}

// groupSelect is the $select of group lookups (a fresh slice: the SDK keeps a reference): what
// the diff needs, what unmanageable and undeletable check, and the creation time that helps
// a human tell duplicates apart.
func groupSelect() []string {
	return []string{"id", "displayName", "mailNickname", "description", "groupTypes", "securityEnabled", "mailEnabled", "createdDateTime"}
}

func (g *groupInfo) hasType(t string) bool {
	return slices.ContainsFunc(g.GroupTypes, func(x string) bool { return strings.EqualFold(x, t) })
}

// unmanageable says why Graph cannot write the group's members ("" when it can): dynamic
// groups compute their members from a rule; mail-enabled security groups and distribution
// lists are mastered in Exchange.
func (g *groupInfo) unmanageable() string {
	switch {
	case g.hasType("DynamicMembership"):
		return "it has dynamic membership"
	case deref(g.MailEnabled) && !g.hasType("Unified"):
		return "it is mail-enabled (Exchange manages its members)"
	}
	return ""
}

// undeletable says why delete_groups must not delete the group ("" when it may). Only groups
// shaped like the ones this provider creates are ever deleted: security-enabled, not
// mail-enabled, no groupTypes (so never a Microsoft 365 group, whose mailbox, files and team
// would go with it, nor a dynamic group). A property the reply did not carry counts against.
func (g *groupInfo) undeletable() string {
	switch {
	case g.SecurityEnabled == nil || g.MailEnabled == nil || g.GroupTypes == nil:
		return "Graph did not return its securityEnabled, mailEnabled and groupTypes, so it cannot be told from a group this provider did not create"
	case g.hasType("Unified"):
		return "it is a Microsoft 365 (Unified) group; only security groups like those this provider creates are deleted"
	case g.hasType("DynamicMembership"):
		return "it has dynamic membership; only security groups like those this provider creates are deleted"
	case len(g.GroupTypes) > 0:
		return fmt.Sprintf("it has groupTypes %v; only security groups like those this provider creates are deleted", g.GroupTypes)
	case !*g.SecurityEnabled:
		return "it is not security-enabled; only security groups like those this provider creates are deleted"
	case *g.MailEnabled:
		return "it is mail-enabled; only security groups like those this provider creates are deleted"
	}
	return ""
}

// ambiguous is the error for several groups sharing the mailNickname a file maps to. Graph
// accepts duplicate mailNicknames (a create whose reply was lost and was sent again makes
// one), and the provider cannot tell which group is meant, so it names them all and says how
// to choose.
func ambiguous(groupDN, name string, gs []*groupInfo) error {
	var ids []string
	for _, g := range gs {
		s := g.ID
		if g.CreatedDateTime != "" {
			s += " created " + g.CreatedDateTime
		}
		ids = append(ids, s)
	}
	return fmt.Errorf("%s: %d Entra ID groups have mailNickname %q (%s); the provider will not guess which one the file means: "+
		"add the line `metadata_aad_object_id = <object ID>` with the ID of the group to keep to the definition file, "+
		"or delete the extra groups in Entra ID", groupDN, len(gs), name, strings.Join(ids, "; "))
}

// member is one direct member as a member list returns it.
type member struct {
	Type string `json:"@odata.type"`
	ID   string `json:"id"`
	UPN  string `json:"userPrincipalName"`
}

func (m member) isUser() bool { return strings.EqualFold(m.Type, "#microsoft.graph.user") }

// identified reports whether the member list told who m is: a user with its UPN, or an
// object of another type. Graph returns only @odata.type and id for members of a type the
// application may not read (no User.Read.All, say).
func (m member) identified() bool { return m.Type != "" && (!m.isUser() || m.UPN != "") }

// memberList is the direct members of one group.
type memberList struct {
	members []member
	// unresolved is why members that the list did not identify could not be resolved by ID
	// (nil when there were none, or all were resolved).
	unresolved error
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
			s.groups.Invalidate(k)
		}
	}
	got, err := s.groups.GetMany(ctx, keys, s.fetchGroups)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]*groupInfo, len(got))
	for k, e := range got {
		if e.Found {
			out[k] = e.Value
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
	got, err := s.member.GetMany(ctx, ids, s.fetchMembers)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*memberList, len(got))
	for k, e := range got {
		if e.Found {
			out[k] = e.Value
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
	// Members the lists did not identify are resolved by ID, all groups together, before
	// anything is cached: a member we cannot name must never look absent (the plan would add
	// it again on every run, or remove what it cannot see).
	var unknown []string
	seen := map[string]bool{}
	for _, p := range pages {
		for _, m := range p {
			if !m.identified() && !seen[strings.ToLower(m.ID)] {
				seen[strings.ToLower(m.ID)] = true
				unknown = append(unknown, m.ID)
			}
		}
	}
	var names map[string]string
	var rerr error
	if len(unknown) > 0 {
		names, rerr = s.usersByID(ctx, unknown)
	}
	out := make(map[string]*memberList, len(ids))
	for i, id := range ids {
		ml := &memberList{members: pages[i]}
		for j, m := range ml.members {
			if !m.identified() {
				if upn, ok := names[strings.ToLower(m.ID)]; ok {
					ml.members[j].Type, ml.members[j].UPN = "#microsoft.graph.user", upn
				} else if rerr != nil {
					ml.unresolved = rerr
				}
			}
			if m := ml.members[j]; m.isUser() && m.UPN != "" {
				// Every member read tells us a user's object ID: removals and re-adds need
				// no lookup.
				s.users.Set(strings.ToLower(m.UPN), m.ID)
			}
		}
		out[id] = ml
	}
	return out, nil
}

// usersByID returns the UPNs of users by object ID (lower-case keys): 15 IDs per `in` filter,
// 20 filters per $batch. IDs that are not users are absent.
func (s *service) usersByID(ctx context.Context, ids []string) (map[string]string, error) {
	pages, err := s.usersWhere(ctx, "id", ids)
	if err != nil {
		return nil, fmt.Errorf("resolving members by object ID: %w", err)
	}
	out := map[string]string{}
	for _, p := range pages {
		for _, u := range p {
			if u.UPN != "" {
				out[strings.ToLower(u.ID)] = u.UPN
			}
		}
	}
	return out, nil
}

// usersWhere reads the users whose property is one of values, in batched `in` filters.
func (s *service) usersWhere(ctx context.Context, property string, values []string) ([][]member, error) {
	var reqs []*abstractions.RequestInformation
	for c := range slices.Chunk(values, maxInValues) {
		f := inFilter(property, c)
		ri, err := s.g.client.Users().ToGetRequestInformation(ctx, &users.UsersRequestBuilderGetRequestConfiguration{
			QueryParameters: &users.UsersRequestBuilderGetQueryParameters{Filter: &f, Select: memberSelect(), Top: top999()}})
		if err != nil {
			return nil, fmt.Errorf("building a user query: %w", err)
		}
		reqs = append(reqs, ri)
	}
	return readPaged[member](ctx, s.g, reqs)
}

// resolveUsers returns the object IDs of user principal names (lower-case keys; users that
// do not exist are absent). 15 names per `in` filter, 300 per $batch, cached for the run.
func (s *service) resolveUsers(ctx context.Context, upns []string) (map[string]string, error) {
	keys := make([]string, len(upns))
	for i, u := range upns {
		keys[i] = strings.ToLower(u)
	}
	got, err := s.users.GetMany(ctx, keys, s.fetchUsers)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(got))
	for k, e := range got {
		if e.Found {
			out[k] = e.Value
		}
	}
	return out, nil
}

func (s *service) fetchUsers(ctx context.Context, keys []string) (map[string]string, error) {
	pages, err := s.usersWhere(ctx, "userPrincipalName", keys)
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
