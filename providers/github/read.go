package github

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	gh "github.com/google/go-github/v62/github"
	"golang.org/x/sync/errgroup"
)

// pageSize is GitHub's largest GraphQL connection page.
const pageSize = 100

// maxRounds bounds the read rounds of one bulk team read (100 rounds of 100 members is a
// 10,000-member team, plus retries of failed aliases).
const maxRounds = 200

type gqlError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Path    []any  `json:"path"`
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// alias returns the alias an error is about (the second path element under organization),
// or "".
func (e gqlError) alias() string {
	if len(e.Path) >= 2 {
		if s, ok := e.Path[1].(string); ok {
			return s
		}
	}
	return ""
}

// graphql posts one query. It retries a whole-document RATE_LIMITED answer (after the wait
// GitHub asks for); partial errors with a path are returned to the caller, which re-asks only
// the failed aliases.
func (s *session) graphql(ctx context.Context, query string, vars map[string]any) (*gqlResponse, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	opt := &s.h.reg.opt
	for attempt := 1; ; attempt++ {
		var out gqlResponse
		var hdr http.Header
		err := s.read(ctx, func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(markIdempotent(ctx), http.MethodPost, s.h.graphqlURL, bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			resp, err := s.http.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				return fmt.Errorf("reading the GraphQL answer: %w", err)
			}
			hdr = resp.Header
			if resp.StatusCode != http.StatusOK {
				return s.h.addrHint(fmt.Errorf("GraphQL answered HTTP %d: %s", resp.StatusCode, snippet(b)), resp.StatusCode)
			}
			if err := json.Unmarshal(b, &out); err != nil {
				return fmt.Errorf("GraphQL answer is not JSON: %w (%s)", err, snippet(b))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !rateLimitedDoc(out.Errors) {
			if len(out.Errors) > 0 && (len(out.Data) == 0 || string(out.Data) == "null") {
				// GitHub refused the document as a whole (invalid, or not executed at all):
				// no data, whatever paths its errors carry.
				return nil, fmt.Errorf("GraphQL query refused: %s", errorsText(out.Errors))
			}
			return &out, nil
		}
		s.both(ctx, func(c *counters) { c.rateLimited.Add(1); c.retries.Add(1) })
		if attempt >= opt.MaxAttempts {
			return nil, &RateLimitError{Status: http.StatusOK, Kind: "GraphQL", Msg: out.Errors[0].Message}
		}
		wait := retryAfter(hdr, opt.Now())
		if reset, ok := resetAt(hdr); ok && wait <= 0 {
			wait = reset.Sub(opt.Now())
		}
		if wait <= 0 {
			wait = opt.SecondaryWait
		}
		if err := s.block("graphql", opt.Now().Add(wait), "GitHub's GraphQL rate limit"); err != nil {
			return nil, err
		}
	}
}

func rateLimitedDoc(errs []gqlError) bool {
	for _, e := range errs {
		if e.Type == "RATE_LIMITED" {
			return true
		}
	}
	return false
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// docErr turns errors without a path (the document failed as a whole) into an error.
func docErr(errs []gqlError) error {
	var msgs []string
	for _, e := range errs {
		if len(e.Path) == 0 {
			msgs = append(msgs, e.Message)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("GraphQL query failed: %s", strings.Join(msgs, "; "))
}

// ---- teams ----

// teamSnap is a team as read.
type teamSnap struct {
	ID          int64
	Slug, Name  string
	Privacy     string // closed or secret
	Parent      string // parent slug, "" for none
	ParentID    int64
	Members     []string          // logins as GitHub spells them
	Maintainers map[string]string // lower login → login
}

type memberPage struct {
	Edges []struct {
		Role string `json:"role"`
		Node struct {
			Login string `json:"login"`
		} `json:"node"`
	} `json:"edges"`
	PageInfo pageInfo `json:"pageInfo"`
}

type pageInfo struct {
	HasNextPage bool   `json:"hasNextPage"`
	EndCursor   string `json:"endCursor"`
}

type teamData struct {
	DatabaseID int64  `json:"databaseId"`
	Slug       string `json:"slug"`
	Name       string `json:"name"`
	Privacy    string `json:"privacy"`
	ParentTeam *struct {
		Slug       string `json:"slug"`
		DatabaseID int64  `json:"databaseId"`
	} `json:"parentTeam"`
	Members memberPage `json:"members"`
}

const memberSel = `{ edges { role node { login } } pageInfo { hasNextPage endCursor } }`

// teamJob is one alias of a bulk read: a team's first page (cursor "") or a later one.
type teamJob struct {
	slug, cursor string
	tries        int
	walk         cursorWalk // the team's member cursors so far
}

// cursorWalk follows a GraphQL connection page by page and stops one that does not advance:
// a next page without a cursor, after a page without items, or at a cursor given before (a
// loop). GitHub never answers so; a server that does would otherwise be followed up to the
// walk's page cap, a request each.
type cursorWalk map[string]bool

// next returns the cursor of the next page ("" at the end) of a page of n items.
func (w cursorWalk) next(n int, pi pageInfo) (string, error) {
	switch {
	case !pi.HasNextPage:
		return "", nil
	case pi.EndCursor == "":
		return "", errors.New("GitHub said there are more items but gave no cursor")
	case n == 0:
		return "", errors.New("GitHub said there are more items after a page without any")
	case w[pi.EndCursor]:
		return "", errors.New("GitHub gave the same page cursor twice")
	}
	w[pi.EndCursor] = true
	return pi.EndCursor, nil
}

// readTeams reads teams by slug in bulk: BatchSize aliases per query, the first member page
// with the team, then continuation pages for large teams (aliased too) and re-asks for
// aliases that failed, round by round. Teams that do not exist are absent from the result.
// progress, when set, is told after each query how many of the teams are read to their last
// member page (or known not to exist).
func (s *session) readTeams(ctx context.Context, org string, slugs []string, progress func(done, total int)) (map[string]*teamSnap, error) {
	opt := &s.h.reg.opt
	s.both(ctx, func(c *counters) { c.memberReads.Add(int64(len(slugs))) })
	found := map[string]*teamSnap{}
	var mu sync.Mutex
	done := 0
	jobs := make([]teamJob, 0, len(slugs))
	for _, sl := range slugs {
		jobs = append(jobs, teamJob{slug: sl})
	}
	for round := 0; len(jobs) > 0; round++ {
		if round >= maxRounds {
			return nil, fmt.Errorf("reading teams of %s: still paging after %d rounds", org, maxRounds)
		}
		var next []teamJob
		eg, ectx := errgroup.WithContext(ctx)
		eg.SetLimit(opt.ReadConcurrency)
		for chunk := range slices.Chunk(jobs, opt.BatchSize) {
			eg.Go(func() error {
				more, err := s.readTeamChunk(ectx, org, chunk, found, &mu)
				if err != nil {
					return err
				}
				mu.Lock()
				next = append(next, more...)
				// Each job of the chunk either settles its team or becomes one job of the next round.
				done += len(chunk) - len(more)
				if progress != nil {
					progress(done, len(slugs))
				}
				mu.Unlock()
				return nil
			})
		}
		if err := eg.Wait(); err != nil {
			return nil, err
		}
		jobs = next
	}
	return found, nil
}

// readTeamChunk runs one aliased query and returns the jobs of the next round.
func (s *session) readTeamChunk(ctx context.Context, org string, chunk []teamJob, found map[string]*teamSnap, mu *sync.Mutex) ([]teamJob, error) {
	var q strings.Builder
	vars := map[string]any{"org": org}
	q.WriteString("query($org: String!")
	for i, j := range chunk {
		fmt.Fprintf(&q, ", $s%d: String!", i)
		vars["s"+strconv.Itoa(i)] = j.slug
		if j.cursor != "" {
			fmt.Fprintf(&q, ", $c%d: String!", i)
			vars["c"+strconv.Itoa(i)] = j.cursor
		}
	}
	q.WriteString(") { organization(login: $org) {")
	for i, j := range chunk {
		if j.cursor == "" {
			fmt.Fprintf(&q, " t%d: team(slug: $s%d) { databaseId slug name privacy parentTeam { slug databaseId } members(first: %d, membership: IMMEDIATE) %s }",
				i, i, pageSize, memberSel)
		} else {
			fmt.Fprintf(&q, " t%d: team(slug: $s%d) { members(first: %d, after: $c%d, membership: IMMEDIATE) %s }",
				i, i, pageSize, i, memberSel)
		}
	}
	q.WriteString(" } }")
	resp, err := s.graphql(ctx, q.String(), vars)
	if err != nil {
		return nil, fmt.Errorf("reading teams of %s: %w", org, err)
	}
	if err := docErr(resp.Errors); err != nil {
		return nil, fmt.Errorf("reading teams of %s: %w", org, err)
	}
	failed := map[string]string{}
	for _, e := range resp.Errors {
		if a := e.alias(); a != "" {
			failed[a] = e.Message
		}
	}
	var data struct {
		Organization map[string]json.RawMessage `json:"organization"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		return nil, fmt.Errorf("reading teams of %s: %w", org, err)
	}
	if data.Organization == nil {
		return nil, fmt.Errorf("reading teams of %s: the organization does not exist or the token cannot see it (%s)",
			org, errorsText(resp.Errors))
	}
	opt := &s.h.reg.opt
	var next []teamJob
	mu.Lock()
	defer mu.Unlock()
	for i, j := range chunk {
		alias := "t" + strconv.Itoa(i)
		if msg, bad := failed[alias]; bad {
			if j.tries+1 >= opt.MaxAttempts {
				return nil, fmt.Errorf("reading team %s/%s: %s", org, j.slug, msg)
			}
			j.tries++
			next = append(next, j)
			continue
		}
		raw := data.Organization[alias]
		if len(raw) == 0 || string(raw) == "null" {
			if j.cursor != "" {
				return nil, fmt.Errorf("reading team %s/%s: the team disappeared while its members were read", org, j.slug)
			}
			continue // not found: the diff creates it
		}
		var td teamData
		if err := json.Unmarshal(raw, &td); err != nil {
			return nil, fmt.Errorf("reading team %s/%s: %w", org, j.slug, err)
		}
		snap := found[j.slug]
		if j.cursor == "" {
			snap = &teamSnap{ID: td.DatabaseID, Slug: td.Slug, Name: td.Name, Privacy: "closed",
				Maintainers: map[string]string{}}
			if strings.EqualFold(td.Privacy, "SECRET") {
				snap.Privacy = "secret"
			}
			if td.ParentTeam != nil {
				snap.Parent, snap.ParentID = strings.ToLower(td.ParentTeam.Slug), td.ParentTeam.DatabaseID
			}
			found[j.slug] = snap
		}
		for _, e := range td.Members.Edges {
			snap.Members = append(snap.Members, e.Node.Login)
			if strings.EqualFold(e.Role, "MAINTAINER") {
				snap.Maintainers[strings.ToLower(e.Node.Login)] = e.Node.Login
			}
		}
		if j.walk == nil {
			j.walk = cursorWalk{}
		}
		c, err := j.walk.next(len(td.Members.Edges), td.Members.PageInfo)
		if err != nil {
			return nil, fmt.Errorf("reading the members of team %s/%s: %w", org, j.slug, err)
		}
		if c != "" {
			next = append(next, teamJob{slug: j.slug, cursor: c, walk: j.walk})
		}
	}
	return next, nil
}

func errorsText(errs []gqlError) string {
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Message)
	}
	if len(msgs) == 0 {
		return "no error given"
	}
	return strings.Join(msgs, "; ")
}

// listTeamSlugs lists every team of the org (for delete_teams, which must see the teams that
// no file defines).
// teamSyncGroups returns the identity-provider groups a team is synced with (empty when it is
// not). An answer that refuses the lookup (403, 404, 422: no team synchronization in the org,
// or no permission to see it) means not synced.
func (s *session) teamSyncGroups(ctx context.Context, org, slug string) ([]string, error) {
	if !validSlug(slug) {
		return nil, badSlug(slug)
	}
	var out struct {
		Groups []struct {
			Name string `json:"group_name"`
		} `json:"groups"`
	}
	err := s.read(ctx, func(ctx context.Context) error {
		req, err := s.gh.NewRequest(http.MethodGet, fmt.Sprintf("orgs/%s/teams/%s/team-sync/group-mappings", org, slug), nil)
		if err != nil {
			return err
		}
		_, err = s.gh.Do(ctx, req, &out)
		return err
	})
	switch code := httpStatus(err); {
	case err == nil:
	case !isRateLimit(err) && (code == http.StatusForbidden || code == http.StatusNotFound || code == http.StatusUnprocessableEntity):
		return nil, nil
	default:
		return nil, err
	}
	var names []string
	for _, g := range out.Groups {
		names = append(names, g.Name)
	}
	return names, nil
}

func (s *session) listTeamSlugs(ctx context.Context, org string) ([]string, error) {
	var out []string
	cursor := ""
	walk := cursorWalk{}
	for range maxRounds * 10 {
		q := `query($org: String!) { organization(login: $org) { teams(first: 100) { nodes { slug } pageInfo { hasNextPage endCursor } } } }`
		vars := map[string]any{"org": org}
		if cursor != "" {
			q = `query($org: String!, $c: String!) { organization(login: $org) { teams(first: 100, after: $c) { nodes { slug } pageInfo { hasNextPage endCursor } } } }`
			vars["c"] = cursor
		}
		resp, err := s.graphql(ctx, q, vars)
		if err != nil {
			return nil, fmt.Errorf("listing teams of %s: %w", org, err)
		}
		if len(resp.Errors) > 0 {
			return nil, fmt.Errorf("listing teams of %s: %s", org, errorsText(resp.Errors))
		}
		var data struct {
			Organization *struct {
				Teams struct {
					Nodes []struct {
						Slug string `json:"slug"`
					} `json:"nodes"`
					PageInfo pageInfo `json:"pageInfo"`
				} `json:"teams"`
			} `json:"organization"`
		}
		if err := json.Unmarshal(resp.Data, &data); err != nil || data.Organization == nil {
			return nil, fmt.Errorf("listing teams of %s: the organization does not exist or the token cannot see it", org)
		}
		for _, n := range data.Organization.Teams.Nodes {
			out = append(out, strings.ToLower(n.Slug))
		}
		next, err := walk.next(len(data.Organization.Teams.Nodes), data.Organization.Teams.PageInfo)
		if err != nil {
			return nil, fmt.Errorf("listing teams of %s: %w", org, err)
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
	return nil, errors.New("listing teams: too many pages")
}

// ---- org members ----

// orgState is the membership of an org as read once per plan and kept up to date by the
// writes of this run (team targets check it after the org target wrote).
type orgState struct {
	mu      sync.Mutex
	roles   map[string]string // lower login → admin|member (active members)
	pending map[string]bool   // lower login → pending invitation
	// viewer is the token's own login, lower case (GraphQL viewer, read with the member
	// count): a user, or an app installation's bot ("<app>[bot]").
	viewer string
}

// userToken reports whether the token is a user's (not an app installation's, whose viewer
// is a bot): GitHub makes a user who creates a team its maintainer.
func (o *orgState) userToken() bool {
	return o.viewer != "" && !strings.HasSuffix(o.viewer, "[bot]")
}

func (o *orgState) active(login string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.roles[strings.ToLower(login)] != ""
}

func (o *orgState) present(login string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := strings.ToLower(login)
	return o.roles[k] != "" || o.pending[k]
}

func (o *orgState) set(login, role, state string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := strings.ToLower(login)
	if state == "pending" {
		delete(o.roles, k)
		o.pending[k] = true
	} else {
		o.roles[k] = role
		delete(o.pending, k)
	}
}

func (o *orgState) drop(login string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := strings.ToLower(login)
	delete(o.roles, k)
	delete(o.pending, k)
}

// orgEntry is one (coalesced) read of an org for one snapshot generation.
type orgEntry struct {
	gen  uint64
	done chan struct{}
	st   *orgState
	err  error
}

// orgState returns the org's membership for snapshot generation gen (see
// Registry.generation): read at most once per generation per (host, org) whoever asks
// (concurrent callers share one read; a failed read is not kept). A later generation (the
// next plan) reads the org again, so a snapshot never outlives its plan; a caller of an older
// generation gets a read of its own.
func (s *session) orgState(ctx context.Context, org string, gen uint64) (*orgState, error) {
	// The load outlives one caller's cancellation (others may wait on it) but keeps its
	// values, so the read is counted for the target that triggered it.
	if !s.h.reg.readGeneration(gen) {
		return s.readOrg(ctx, org)
	}
	lctx := context.WithoutCancel(ctx)
	k := strings.ToLower(org)
	s.h.orgMu.Lock()
	e := s.h.orgs[k]
	if e == nil || e.gen < gen || failedEntry(e) {
		e = &orgEntry{gen: gen, done: make(chan struct{})}
		s.h.orgs[k] = e
		go func() {
			e.st, e.err = s.readOrg(lctx, org)
			close(e.done)
		}()
	}
	s.h.orgMu.Unlock()
	if e.gen > gen { // a later plan started meanwhile and holds the entry: read our own
		return s.readOrg(ctx, org)
	}
	select {
	case <-e.done:
		return e.st, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func failedEntry(e *orgEntry) bool {
	select {
	case <-e.done:
		return e.err != nil
	default:
		return false
	}
}

// errOrgChanging: the member lists did not add up, attempt after attempt.
var errOrgChanging = errors.New("the org's membership kept changing while it was read")

// readOrg reads the active members with their role and the pending invitations. Members come
// from the two REST lists (role=admin, role=member), whose later pages are fetched in
// parallel once the first page gives the last page number: GraphQL's membersWithRole would
// need one sequential round trip per 100 members, the slowest part of a large org's read.
// Pending invitations come from GraphQL (none on GitHub Enterprise Server, Ruby parity).
//
// Offset pages shift when the membership changes while they are read: a user who leaves
// makes another one slide from page n+1 into page n, after it was read, and that user is
// missed (a user who joins makes one appear twice). So the member count is read before and
// after the lists (GraphQL totalCount), and the read is accepted only when both counts agree
// with the number of distinct users listed and no user is listed with both roles. Otherwise
// it is read again, following the pages one by one; after MaxAttempts inconsistent reads the
// read fails (a failed read is never taken for the org's state).
func (s *session) readOrg(ctx context.Context, org string) (*orgState, error) {
	ghes, err := s.enterprise(ctx)
	if err != nil {
		return nil, fmt.Errorf("asking %s whether it is GitHub Enterprise Server: %w", s.h.restBase, err)
	}
	opt := &s.h.reg.opt
	var why string
	for attempt := 1; attempt <= opt.MaxAttempts; attempt++ {
		st, problem, err := s.readOrgOnce(ctx, org, ghes, attempt > 1)
		if err != nil {
			return nil, fmt.Errorf("reading members of %s: %w", org, err)
		}
		if problem == "" {
			return st, nil
		}
		why = problem
		if attempt < opt.MaxAttempts {
			s.h.counters.warnings.Add(1)
			opt.Logger.Warn("the org's member lists do not add up (membership changed while it was read); reading them again, page by page",
				"org", org, "attempt", attempt, "problem", problem)
		}
	}
	return nil, fmt.Errorf("reading members of %s: %w: %s", org, errOrgChanging, why)
}

// readOrgOnce reads the org once; problem says why the lists are not consistent.
func (s *session) readOrgOnce(ctx context.Context, org string, ghes, sequential bool) (st *orgState, problem string, err error) {
	before, pending, viewer, err := s.countAndPending(ctx, org, !ghes)
	if err != nil {
		return nil, "", err
	}
	var admins, members []string
	eg, ectx := errgroup.WithContext(ctx)
	eg.Go(func() (err error) { admins, err = s.listMembers(ectx, org, "admin", before, sequential); return err })
	eg.Go(func() (err error) { members, err = s.listMembers(ectx, org, "member", before, sequential); return err })
	if err := eg.Wait(); err != nil {
		return nil, "", err
	}
	after, _, _, err := s.countAndPending(ctx, org, false)
	if err != nil {
		return nil, "", err
	}
	// Logins are kept in lower case: the provider compares and sends them so (Ruby parity).
	st = &orgState{roles: map[string]string{}, pending: map[string]bool{}, viewer: strings.ToLower(viewer)}
	var both []string
	for _, l := range members {
		st.roles[strings.ToLower(l)] = "member"
	}
	for _, l := range admins {
		k := strings.ToLower(l)
		if st.roles[k] == "member" {
			both = append(both, l)
		}
		st.roles[k] = "admin"
	}
	switch {
	case before != after:
		return nil, fmt.Sprintf("%d members before the lists were read, %d after", before, after), nil
	case len(both) > 0:
		return nil, fmt.Sprintf("listed both as admin and as member: %s", strings.Join(both, ",")), nil
	case len(st.roles) != after:
		return nil, fmt.Sprintf("%d members listed, GitHub counts %d", len(st.roles), after), nil
	}
	for _, l := range pending {
		if k := strings.ToLower(l); st.roles[k] == "" {
			st.pending[k] = true
		}
	}
	return st, "", nil
}

// pagesFor bounds the pages of one REST member list of an org that counted total members
// just before: every page but the last is full, plus room for members who join while the
// lists are read (the count after the lists catches those). The Link header of an answer is
// the server's word; a list that claims or needs more pages fails the read instead of
// sending as many requests as the server asks for.
func pagesFor(total int) int { return (total+total/10)/pageSize + 2 }

// listMembers lists the org members with one role; total is the org's member count read just
// before. In parallel mode: page 1, then the other pages that its Link header announces, as
// many at once as the host's read slots; sequentially (or without a last-page link), it
// follows the next links. Both stop at pagesFor(total) pages. Pages are asked for by number
// on the configured host (go-github builds the URL): a Link header never chooses a host.
func (s *session) listMembers(ctx context.Context, org, role string, total int, sequential bool) ([]string, error) {
	get := func(ctx context.Context, page int) ([]*gh.User, *gh.Response, error) {
		var users []*gh.User
		var resp *gh.Response
		err := s.read(ctx, func(ctx context.Context) error {
			var err error
			users, resp, err = s.gh.Organizations.ListMembers(ctx, org, &gh.ListMembersOptions{Role: role,
				ListOptions: gh.ListOptions{PerPage: pageSize, Page: page}})
			return err
		})
		return users, resp, err
	}
	s.both(ctx, func(c *counters) { c.memberReads.Add(1) })
	users, resp, err := get(ctx, 1)
	if err != nil {
		return nil, fmt.Errorf("listing %ss: %w", role, err)
	}
	limit := pagesFor(total)
	if resp.LastPage > limit {
		return nil, fmt.Errorf("listing %ss: GitHub announces %d pages for an org of %d members (at most %d expected); refusing to follow",
			role, resp.LastPage, total, limit)
	}
	pages := [][]*gh.User{users}
	switch {
	case resp.LastPage > 1 && !sequential:
		rest := make([][]*gh.User, resp.LastPage-1)
		eg, ectx := errgroup.WithContext(ctx)
		// One goroutine per read slot, not per page: the others would only wait for a slot.
		eg.SetLimit(cap(s.h.reads))
		for p := 2; p <= resp.LastPage; p++ {
			eg.Go(func() error {
				u, _, err := get(ectx, p)
				rest[p-2] = u
				return err
			})
		}
		if err := eg.Wait(); err != nil {
			return nil, fmt.Errorf("listing %ss: %w", role, err)
		}
		pages = append(pages, rest...)
	default:
		for n := 1; resp.NextPage != 0; n++ {
			if n >= limit {
				return nil, fmt.Errorf("listing %ss: GitHub keeps announcing a next page after %d pages for an org of %d members; refusing to follow",
					role, n, total)
			}
			if users, resp, err = get(ctx, resp.NextPage); err != nil {
				return nil, fmt.Errorf("listing %ss: %w", role, err)
			}
			pages = append(pages, users)
		}
	}
	var out []string
	for _, p := range pages {
		for _, u := range p {
			out = append(out, u.GetLogin())
		}
	}
	return out, nil
}

// countAndPending reads the org's member count (GraphQL totalCount of membersWithRole), the
// token's own login (viewer, which rides along at no extra request) and, with withPending,
// the logins with a pending invitation (100 per page; the count rides on the first page's
// query).
func (s *session) countAndPending(ctx context.Context, org string, withPending bool) (total int, pending []string, viewer string, err error) {
	fail := func(err error) (int, []string, string, error) {
		return 0, nil, "", fmt.Errorf("counting members and listing pending invitations: %w", err)
	}
	total = -1
	cursor := ""
	walk := cursorWalk{}
	for range maxRounds * 10 {
		var q string
		vars := map[string]any{"org": org}
		switch {
		case !withPending:
			q = `query($org: String!) { viewer { login } organization(login: $org) { membersWithRole(first: 1) { totalCount } } }`
		case cursor == "":
			q = `query($org: String!) { viewer { login } organization(login: $org) { membersWithRole(first: 1) { totalCount } pendingMembers(first: 100) { nodes { login } pageInfo { hasNextPage endCursor } } } }`
		default:
			q = `query($org: String!, $c: String!) { organization(login: $org) { pendingMembers(first: 100, after: $c) { nodes { login } pageInfo { hasNextPage endCursor } } } }`
			vars["c"] = cursor
		}
		resp, err := s.graphql(ctx, q, vars)
		if err != nil {
			return fail(err)
		}
		if len(resp.Errors) > 0 {
			return fail(errors.New(errorsText(resp.Errors)))
		}
		var data struct {
			Viewer *struct {
				Login string `json:"login"`
			} `json:"viewer"`
			Organization *struct {
				MembersWithRole *struct {
					TotalCount int `json:"totalCount"`
				} `json:"membersWithRole"`
				PendingMembers *struct {
					Nodes []struct {
						Login string `json:"login"`
					} `json:"nodes"`
					PageInfo pageInfo `json:"pageInfo"`
				} `json:"pendingMembers"`
			} `json:"organization"`
		}
		if err := json.Unmarshal(resp.Data, &data); err != nil {
			return fail(err)
		}
		if data.Organization == nil {
			return 0, nil, "", errors.New("counting members: the organization does not exist or the token cannot see it")
		}
		if data.Viewer != nil {
			viewer = data.Viewer.Login
		}
		if mw := data.Organization.MembersWithRole; mw != nil {
			total = mw.TotalCount
		}
		pm := data.Organization.PendingMembers
		if pm == nil {
			if total < 0 {
				return 0, nil, "", errors.New("counting members: GitHub gave no totalCount")
			}
			return total, pending, viewer, nil
		}
		for _, n := range pm.Nodes {
			pending = append(pending, n.Login)
		}
		next, err := walk.next(len(pm.Nodes), pm.PageInfo)
		if err != nil {
			return fail(err)
		}
		if next == "" {
			return total, pending, viewer, nil
		}
		cursor = next
	}
	return 0, nil, "", errors.New("listing pending invitations: too many pages")
}
