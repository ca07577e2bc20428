package fakegithub

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// GraphQL is served as GitHub serves it: the document is parsed (gqlparser), validated
// against GitHub's published schema when the server has one (Options.Schema), its variables
// checked against their declared types, and only then executed. An invalid document is
// answered HTTP 200 with `errors` and no `data`, in GitHub's (graphql-ruby's) words; errors
// met while executing (a missing organization, a bad cursor) come with partial `data`.

type gqlError struct {
	Message    string         `json:"message"`
	Type       string         `json:"type,omitempty"`
	Path       []any          `json:"path,omitempty"`
	Locations  []gqlLocation  `json:"locations,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

type gqlLocation struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

func fromGQLError(e *gqlerror.Error) gqlError {
	out := gqlError{Message: e.Message, Extensions: e.Extensions}
	for _, l := range e.Locations {
		out.Locations = append(out.Locations, gqlLocation{Line: l.Line, Column: l.Column})
	}
	for _, p := range e.Path {
		switch p := p.(type) {
		case ast.PathName:
			out.Path = append(out.Path, string(p))
		case ast.PathIndex:
			out.Path = append(out.Path, int(p))
		}
	}
	return out
}

func (s *Server) serveGraphQL(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query         string         `json:"query"`
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
	}
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON",
			"documentation_url": "https://docs.github.com/graphql"})
		return
	}
	if strings.TrimSpace(req.Query) == "" {
		writeJSON(w, http.StatusOK, map[string]any{"errors": []gqlError{{Message: "A query attribute must be specified and must be a string."}}})
		return
	}
	op, errs := s.prepare(req.Query, req.OperationName, req.Variables)
	if len(errs) > 0 {
		writeJSON(w, http.StatusOK, map[string]any{"errors": errs})
		return
	}
	if s.primaryExhausted(w, "graphql") {
		return
	}
	s.mu.Lock()
	e := &execCtx{s: s, doc: op.doc, vars: req.Variables, viewer: s.viewerKey(r)}
	data := e.query(op.def.SelectionSet)
	if e.teamFields > 0 {
		s.stats.GraphQLTeamDocs++
		s.stats.TeamAliases += e.teamFields
		s.stats.MaxTeamAliases = max(s.stats.MaxTeamAliases, e.teamFields)
	}
	if e.orgReads {
		s.stats.GraphQLOrgDocs++
	}
	s.mu.Unlock()
	out := map[string]any{"data": data}
	if len(e.errs) > 0 {
		out["errors"] = e.errs
	}
	writeJSON(w, http.StatusOK, out)
}

type preparedOp struct {
	doc *ast.QueryDocument
	def *ast.OperationDefinition
}

// parsedDoc is a document parsed and validated once; executions only read it.
type parsedDoc struct {
	doc  *ast.QueryDocument
	errs []gqlError
}

// maxDocs bounds the documents kept: a client sends a handful of shapes (batched reads
// differ only in their variables), so the cache is small and mostly hit.
const maxDocs = 512

// document parses and validates a query text, or returns the result of an earlier request
// with the same text (validation does not depend on the variables).
func (s *Server) document(query string) parsedDoc {
	s.docMu.Lock()
	defer s.docMu.Unlock()
	if d, ok := s.docs[query]; ok {
		return d
	}
	d := s.parse(query)
	if len(s.docs) >= maxDocs {
		clear(s.docs)
	}
	s.docs[query] = d
	return d
}

func (s *Server) parse(query string) parsedDoc {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		var ge *gqlerror.Error
		if errors.As(err, &ge) {
			out := fromGQLError(ge)
			if len(out.Locations) > 0 {
				out.Message = fmt.Sprintf("Parse error: %s at [%d, %d]", ge.Message, out.Locations[0].Line, out.Locations[0].Column)
			} else {
				out.Message = "Parse error: " + ge.Message
			}
			return parsedDoc{errs: []gqlError{out}}
		}
		return parsedDoc{errs: []gqlError{{Message: "Parse error: " + err.Error()}}}
	}
	if s.opt.Schema != nil {
		if list := validator.ValidateWithRules(s.opt.Schema.s, doc, githubRules(pathsOf(doc))); len(list) > 0 {
			out := make([]gqlError, 0, len(list))
			for _, e := range list {
				out = append(out, fromGQLError(e))
			}
			return parsedDoc{errs: out}
		}
	}
	return parsedDoc{doc: doc}
}

// prepare parses, validates and checks the variables of a document; errs are GitHub's answer
// to a document that is not executed.
func (s *Server) prepare(query, opName string, vars map[string]any) (preparedOp, []gqlError) {
	pd := s.document(query)
	if len(pd.errs) > 0 {
		return preparedOp{}, pd.errs
	}
	doc := pd.doc
	def := doc.Operations.ForName(opName)
	if def == nil {
		msg := "An operation name is required"
		if opName != "" {
			msg = fmt.Sprintf("No operation named %q", opName)
		}
		return preparedOp{}, []gqlError{{Message: msg}}
	}
	if def.Operation != ast.Query && def.Operation != "" {
		return preparedOp{}, []gqlError{{Message: "the fake serves queries only"}}
	}
	if s.opt.Schema != nil {
		if _, err := validator.VariableValues(s.opt.Schema.s, def, vars); err != nil {
			return preparedOp{}, []gqlError{variableError(def, vars, err)}
		}
	}
	return preparedOp{doc: doc, def: def}, nil
}

// variableError words a variable that does not fit its declared type as GitHub does:
// "Variable $org of type String! was provided invalid value", with the problem in
// extensions.
func variableError(def *ast.OperationDefinition, vars map[string]any, err error) gqlError {
	var ge *gqlerror.Error
	name := ""
	if errors.As(err, &ge) && len(ge.Path) >= 2 {
		if n, ok := ge.Path[1].(ast.PathName); ok {
			name = string(n)
		}
	}
	vd := def.VariableDefinitions.ForName(name)
	if vd == nil {
		return gqlError{Message: err.Error()}
	}
	out := gqlError{Message: fmt.Sprintf("Variable $%s of type %s was provided invalid value", name, vd.Type.String()),
		Extensions: map[string]any{"value": vars[name], "problems": []map[string]any{{"path": []any{}, "explanation": ge.Message}}}}
	if vd.Position != nil {
		out.Locations = []gqlLocation{{Line: vd.Position.Line, Column: vd.Position.Column}}
	}
	return out
}

// execCtx executes one document. The server lock is held throughout.
type execCtx struct {
	s          *Server
	viewer     string // lower login of the token's user or app bot
	doc        *ast.QueryDocument
	vars       map[string]any
	errs       []gqlError
	teamFields int
	orgReads   bool
}

// fields flattens a selection set for an object of type typ: fragment spreads and inline
// fragments whose type condition matches are merged in, @skip and @include honoured.
func (e *execCtx) fields(typ string, set ast.SelectionSet) []*ast.Field {
	var out []*ast.Field
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if e.included(sel.Directives) {
				out = append(out, sel)
			}
		case *ast.InlineFragment:
			if e.included(sel.Directives) && e.typeMatches(typ, sel.TypeCondition) {
				out = append(out, e.fields(typ, sel.SelectionSet)...)
			}
		case *ast.FragmentSpread:
			if fd := e.doc.Fragments.ForName(sel.Name); fd != nil && e.included(sel.Directives) && e.typeMatches(typ, fd.TypeCondition) {
				out = append(out, e.fields(typ, fd.SelectionSet)...)
			}
		}
	}
	return out
}

func (e *execCtx) typeMatches(typ, cond string) bool {
	if cond == "" || cond == typ {
		return true
	}
	if sc := e.s.opt.Schema; sc != nil {
		for _, d := range sc.s.PossibleTypes[cond] {
			if d.Name == typ {
				return true
			}
		}
	}
	return false
}

func (e *execCtx) included(ds ast.DirectiveList) bool {
	for _, d := range ds {
		v, _ := d.Arguments.ForName("if").Value.Value(e.vars)
		b, _ := v.(bool)
		if (d.Name == "skip" && b) || (d.Name == "include" && !b) {
			return false
		}
	}
	return true
}

// arg evaluates an argument: nil when absent or null.
func (e *execCtx) arg(f *ast.Field, name string) any {
	a := f.Arguments.ForName(name)
	if a == nil {
		return nil
	}
	v, err := a.Value.Value(e.vars)
	if err != nil {
		return nil
	}
	return v
}

// intArg reads an Int argument, given literally (int64) or as a JSON variable (float64).
func (e *execCtx) intArg(f *ast.Field, name string) (int, bool) {
	switch v := e.arg(f, name).(type) {
	case int64:
		return int(v), true
	case float64:
		return int(v), v == float64(int(v))
	case int:
		return v, true
	case json.Number:
		n, err := v.Int64()
		return int(n), err == nil
	}
	return 0, false
}

func key(f *ast.Field) string { return cmpOr(f.Alias, f.Name) }

func (e *execCtx) fail(path []any, typ, format string, args ...any) {
	e.errs = append(e.errs, gqlError{Message: fmt.Sprintf(format, args...), Type: typ, Path: slices.Clone(path)})
}

func extend(path []any, k any) []any { return append(slices.Clip(path), k) }

// object resolves a selection set on one object.
func (e *execCtx) object(typ string, set ast.SelectionSet, path []any, res func(f *ast.Field, p []any) any) map[string]any {
	fs := e.fields(typ, set)
	out := make(map[string]any, len(fs))
	for _, f := range fs {
		p := extend(path, key(f))
		if f.Name == "__typename" {
			out[key(f)] = typ
			continue
		}
		out[key(f)] = res(f, p)
	}
	return out
}

func (e *execCtx) query(set ast.SelectionSet) map[string]any {
	return e.object("Query", set, nil, func(f *ast.Field, p []any) any {
		switch f.Name {
		case "organization":
			login, _ := e.arg(f, "login").(string)
			o := e.s.org(login, false)
			if o == nil {
				e.fail(p, "NOT_FOUND", "Could not resolve to an Organization with the login of '%s'.", login)
				return nil
			}
			return e.org(o, f.SelectionSet, p)
		case "viewer":
			return e.user(e.viewer, f.SelectionSet, p)
		case "rateLimit":
			return e.object("RateLimit", f.SelectionSet, p, func(g *ast.Field, _ []any) any {
				w := e.s.windows["graphql"]
				switch g.Name {
				case "cost":
					return 1
				case "limit":
					return e.s.opt.RateLimit
				case "remaining":
					if w != nil {
						return e.s.opt.RateLimit - w.used
					}
					return e.s.opt.RateLimit
				case "used":
					if w != nil {
						return w.used
					}
					return 0
				case "resetAt":
					if w != nil {
						return w.reset.UTC().Format("2006-01-02T15:04:05Z")
					}
					return e.s.opt.Now().Add(e.s.opt.RateWindow).UTC().Format("2006-01-02T15:04:05Z")
				}
				return 0
			})
		}
		return nil
	})
}

// user resolves a User object (k is a lower-case login).
func (e *execCtx) user(k string, set ast.SelectionSet, path []any) map[string]any {
	return e.object("User", set, path, func(g *ast.Field, _ []any) any {
		switch g.Name {
		case "login":
			return e.s.login(k)
		case "name":
			return e.s.login(k)
		case "id":
			return "U_" + k
		case "databaseId":
			return userID(k)
		}
		return nil
	})
}

type connItem struct {
	user   string  // lower login, for user nodes
	team   *team   // for team nodes
	invite *invite // for invitation nodes
	role   string
}

func (e *execCtx) org(o *org, set ast.SelectionSet, path []any) map[string]any {
	return e.object("Organization", set, path, func(f *ast.Field, p []any) any {
		switch f.Name {
		case "login":
			return o.login
		case "id":
			return "O_" + o.login
		case "databaseId":
			return userID(strings.ToLower(o.login))
		case "team":
			e.teamFields++
			slug, _ := e.arg(f, "slug").(string)
			k := lowerKey(o.login, slug)
			if n := e.s.aliasErr[k]; n > 0 {
				e.s.aliasErr[k] = n - 1
				e.fail(p, "", "Something went wrong while executing your query. Please include `%s` when reporting this issue.", "FAKE:1234")
				return nil
			}
			t := o.teams[strings.ToLower(slug)]
			if t == nil {
				return nil
			}
			return e.team(o, t, f.SelectionSet, p)
		case "teams":
			var items []connItem
			for _, s := range slices.Sorted(maps.Keys(o.teams)) {
				items = append(items, connItem{team: o.teams[s]})
			}
			return e.connection(o, "TeamConnection", "TeamEdge", f, p, items)
		case "membersWithRole":
			e.orgReads = true
			var items []connItem
			for _, k := range slices.Sorted(maps.Keys(o.members)) {
				items = append(items, connItem{user: k, role: strings.ToUpper(o.members[k])})
			}
			return e.connection(o, "OrganizationMemberConnection", "OrganizationMemberEdge", f, p, items)
		case "pendingMembers":
			e.orgReads = true
			var items []connItem
			for _, k := range slices.Sorted(maps.Keys(o.pending)) {
				items = append(items, connItem{user: k})
			}
			return e.connection(o, "UserConnection", "UserEdge", f, p, items)
		}
		return nil
	})
}

func (e *execCtx) team(o *org, t *team, set ast.SelectionSet, path []any) map[string]any {
	return e.object("Team", set, path, func(f *ast.Field, p []any) any {
		switch f.Name {
		case "databaseId":
			return t.id
		case "id":
			return fmt.Sprintf("T_%d", t.id)
		case "slug":
			return t.slug
		case "combinedSlug":
			return strings.ToLower(o.login) + "/" + t.slug
		case "name":
			return t.name
		case "description":
			return t.description
		case "privacy":
			if t.privacy == "secret" {
				return "SECRET"
			}
			return "VISIBLE"
		case "parentTeam":
			if t.parent == nil {
				return nil
			}
			return e.team(o, t.parent, f.SelectionSet, p)
		case "invitations":
			var items []connItem
			for _, k := range slices.Sorted(maps.Keys(o.pending)) {
				if inv := o.pending[k]; inv.teams[t.slug] != "" {
					items = append(items, connItem{user: k, invite: inv})
				}
			}
			return e.connection(o, "OrganizationInvitationConnection", "OrganizationInvitationEdge", f, p, items)
		case "members":
			membership, _ := e.arg(f, "membership").(string)
			roleFilter, _ := e.arg(f, "role").(string)
			roles := map[string]string{}
			if membership != "IMMEDIATE" {
				e.childMembers(o, t, roles)
			}
			if membership == "CHILD_TEAM" {
				for k := range t.members {
					delete(roles, k)
				}
			} else {
				maps.Copy(roles, t.members)
			}
			var items []connItem
			for _, k := range slices.Sorted(maps.Keys(roles)) {
				r := strings.ToUpper(roles[k])
				if roleFilter == "" || roleFilter == r {
					items = append(items, connItem{user: k, role: r})
				}
			}
			return e.connection(o, "TeamMemberConnection", "TeamMemberEdge", f, p, items)
		}
		return nil
	})
}

// childMembers adds the members of every descendant team (as plain members).
func (e *execCtx) childMembers(o *org, t *team, roles map[string]string) {
	for _, c := range o.teams {
		if c.parent == t {
			for k := range c.members {
				roles[k] = "member"
			}
			e.childMembers(o, c, roles)
		}
	}
}

func cursor(i int) string {
	return base64.StdEncoding.EncodeToString([]byte("cursor:v2:" + strconv.Itoa(i)))
}

func decodeCursor(c string) (int, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(string(b), "cursor:v2:"))
	return n, err == nil && strings.HasPrefix(string(b), "cursor:v2:")
}

// connection pages items with first/after, as GitHub's connections do (at most 100).
func (e *execCtx) connection(o *org, typ, edgeType string, f *ast.Field, path []any, items []connItem) any {
	if e.arg(f, "last") != nil || e.arg(f, "before") != nil {
		e.fail(path, "", "the fake supports first/after pagination only")
		return nil
	}
	first, ok := e.intArg(f, "first")
	if !ok {
		e.fail(path, "", "You must provide a `first` or `last` value to properly paginate the `%s` connection.", f.Name)
		return nil
	}
	if first < 0 || first > 100 {
		e.fail(path, "", "Requesting %d records on the `%s` connection exceeds the `first` limit of 100 records.", first, f.Name)
		return nil
	}
	lo := 0
	if after, ok := e.arg(f, "after").(string); ok {
		i, ok := decodeCursor(after)
		if !ok {
			e.fail(path, "", "`%s` does not appear to be a valid cursor.", after)
			return nil
		}
		lo = i + 1
	}
	lo = min(lo, len(items))
	hi := min(lo+first, len(items))
	node := func(it connItem, set ast.SelectionSet, p []any) any {
		switch {
		case it.team != nil:
			return e.team(o, it.team, set, p)
		case it.invite != nil:
			return e.invitation(o, it.user, it.invite, set, p)
		}
		return e.user(it.user, set, p)
	}
	return e.object(typ, f.SelectionSet, path, func(g *ast.Field, p []any) any {
		switch g.Name {
		case "totalCount":
			return len(items)
		case "pageInfo":
			return e.object("PageInfo", g.SelectionSet, p, func(h *ast.Field, _ []any) any {
				switch h.Name {
				case "hasNextPage":
					return hi < len(items)
				case "hasPreviousPage":
					return lo > 0
				case "endCursor":
					if hi > lo {
						return cursor(hi - 1)
					}
					return nil
				case "startCursor":
					if hi > lo {
						return cursor(lo)
					}
					return nil
				}
				return nil
			})
		case "nodes":
			out := make([]any, 0, hi-lo)
			for i := lo; i < hi; i++ {
				out = append(out, node(items[i], g.SelectionSet, extend(p, i-lo)))
			}
			return out
		case "edges":
			out := make([]any, 0, hi-lo)
			for i := lo; i < hi; i++ {
				ep := extend(p, i-lo)
				out = append(out, e.object(edgeType, g.SelectionSet, ep, func(h *ast.Field, q []any) any {
					switch h.Name {
					case "cursor":
						return cursor(i)
					case "role":
						return items[i].role
					case "node":
						return node(items[i], h.SelectionSet, q)
					}
					return nil
				}))
			}
			return out
		}
		return nil
	})
}

// invitation resolves an OrganizationInvitation.
func (e *execCtx) invitation(o *org, k string, inv *invite, set ast.SelectionSet, path []any) map[string]any {
	return e.object("OrganizationInvitation", set, path, func(f *ast.Field, p []any) any {
		switch f.Name {
		case "id":
			return fmt.Sprintf("OI_%d", userID(k))
		case "invitee":
			return e.user(k, f.SelectionSet, p)
		case "role":
			if inv.role == "admin" {
				return "ADMIN"
			}
			return "DIRECT_MEMBER"
		case "invitationType":
			return "USER"
		case "email":
			return nil
		case "organization":
			return e.org(o, f.SelectionSet, p)
		}
		return nil
	})
}
