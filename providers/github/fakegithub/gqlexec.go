package fakegithub

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// fieldDef describes one field of the schema subset: its object type ("" for a scalar or
// enum leaf) and its arguments (name → type as written in SDL).
type fieldDef struct {
	typ  string
	args map[string]string
}

var connArgs = map[string]string{"first": "Int", "after": "String", "last": "Int", "before": "String"}

func withArgs(extra map[string]string) map[string]string {
	m := maps.Clone(connArgs)
	maps.Copy(m, extra)
	return m
}

// gqlSchema is the subset of GitHub's schema the fake serves.
var gqlSchema = map[string]map[string]fieldDef{
	"Query": {
		"organization": {typ: "Organization", args: map[string]string{"login": "String!"}},
		"rateLimit":    {typ: "RateLimit", args: map[string]string{"dryRun": "Boolean"}},
	},
	"RateLimit": {"cost": {}, "remaining": {}, "resetAt": {}, "limit": {}, "used": {}, "nodeCount": {}},
	"Organization": {
		"login": {}, "id": {}, "databaseId": {},
		"team":            {typ: "Team", args: map[string]string{"slug": "String!"}},
		"teams":           {typ: "TeamConnection", args: withArgs(nil)},
		"membersWithRole": {typ: "OrganizationMemberConnection", args: withArgs(nil)},
		"pendingMembers":  {typ: "UserConnection", args: withArgs(nil)},
	},
	"Team": {
		"databaseId": {}, "id": {}, "slug": {}, "name": {}, "privacy": {}, "description": {},
		"parentTeam": {typ: "Team"},
		"members": {typ: "TeamMemberConnection", args: withArgs(map[string]string{
			"membership": "TeamMembershipType", "role": "TeamMemberRole", "query": "String"})},
	},
	"TeamConnection":               {"nodes": {typ: "Team"}, "edges": {typ: "TeamEdge"}, "pageInfo": {typ: "PageInfo"}, "totalCount": {}},
	"TeamEdge":                     {"node": {typ: "Team"}, "cursor": {}},
	"TeamMemberConnection":         {"nodes": {typ: "User"}, "edges": {typ: "TeamMemberEdge"}, "pageInfo": {typ: "PageInfo"}, "totalCount": {}},
	"TeamMemberEdge":               {"node": {typ: "User"}, "cursor": {}, "role": {}},
	"OrganizationMemberConnection": {"nodes": {typ: "User"}, "edges": {typ: "OrganizationMemberEdge"}, "pageInfo": {typ: "PageInfo"}, "totalCount": {}},
	"OrganizationMemberEdge":       {"node": {typ: "User"}, "cursor": {}, "role": {}},
	"UserConnection":               {"nodes": {typ: "User"}, "edges": {typ: "UserEdge"}, "pageInfo": {typ: "PageInfo"}, "totalCount": {}},
	"UserEdge":                     {"node": {typ: "User"}, "cursor": {}},
	"User":                         {"login": {}, "id": {}, "databaseId": {}, "name": {}},
	"PageInfo":                     {"hasNextPage": {}, "hasPreviousPage": {}, "endCursor": {}, "startCursor": {}},
}

var gqlEnums = map[string][]string{
	"TeamMembershipType": {"IMMEDIATE", "CHILD_TEAM", "ALL"},
	"TeamMemberRole":     {"MAINTAINER", "MEMBER"},
}

type gqlError struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Path    []any  `json:"path,omitempty"`
}

// validateDoc checks fields, arguments, leaf/object shapes and variables against the schema
// subset, as GitHub's validation step does before executing anything.
func validateDoc(doc *gqlDoc, vars map[string]any) []gqlError {
	var errs []gqlError
	add := func(format string, args ...any) { errs = append(errs, gqlError{Message: fmt.Sprintf(format, args...)}) }
	declared := map[string]gqlVarDef{}
	for _, d := range doc.VarDefs {
		declared[d.Name] = d
	}
	var walk func(typ string, sel []*gqlField)
	walk = func(typ string, sel []*gqlField) {
		keys := map[string]*gqlField{}
		for _, f := range sel {
			if prev := keys[f.Key()]; prev != nil && prev.Name != f.Name {
				add("Field '%s' conflicts: %s and %s are different fields", f.Key(), prev.Name, f.Name)
			}
			keys[f.Key()] = f
			if f.Name == "__typename" {
				if len(f.Sel) > 0 || len(f.Args) > 0 {
					add("Field '__typename' takes no arguments or selections")
				}
				continue
			}
			def, ok := gqlSchema[typ][f.Name]
			if !ok {
				add("Field '%s' doesn't exist on type '%s'", f.Name, typ)
				continue
			}
			given := map[string]bool{}
			for _, a := range f.Args {
				at, ok := def.args[a.Name]
				if !ok {
					add("Field '%s' doesn't accept argument '%s'", f.Name, a.Name)
					continue
				}
				given[a.Name] = true
				if a.Value.Kind == gvVar {
					d, ok := declared[a.Value.Str]
					if !ok {
						add("Variable $%s is used by %s but not declared", a.Value.Str, f.Name)
					} else if strings.TrimSuffix(d.Type, "!") != strings.TrimSuffix(at, "!") {
						add("Type mismatch on variable $%s and argument %s (%s / %s)", a.Value.Str, a.Name, d.Type, at)
					}
				}
			}
			for an, at := range def.args {
				if strings.HasSuffix(at, "!") && !given[an] {
					add("Field '%s' is missing required arguments: %s", f.Name, an)
				}
			}
			switch {
			case def.typ == "" && len(f.Sel) > 0:
				add("Selections can't be made on scalars (field '%s' returns a scalar)", f.Name)
			case def.typ != "" && len(f.Sel) == 0:
				add("Field must have selections (field '%s' returns %s but has no selections)", f.Name, def.typ)
			case def.typ != "":
				walk(def.typ, f.Sel)
			}
		}
	}
	walk("Query", doc.Sel)
	used := map[string]bool{}
	usedVars(doc.Sel, used)
	for _, d := range doc.VarDefs {
		if !used[d.Name] {
			add("Variable $%s is declared by %s but not used", d.Name, cmp.Or(doc.Name, "anonymous query"))
		}
		v, present := vars[d.Name]
		if (!present || v == nil) && d.NonNull && d.Default == nil {
			add("Variable $%s of type %s was provided invalid value", d.Name, d.Type)
			continue
		}
		if present && v != nil && !valueFits(d.Type, v) {
			add("Variable $%s of type %s was provided invalid value", d.Name, d.Type)
		}
	}
	return errs
}

func valueFits(typ string, v any) bool {
	typ = strings.TrimSuffix(typ, "!")
	if strings.HasPrefix(typ, "[") {
		l, ok := v.([]any)
		if !ok {
			return valueFits(strings.TrimSuffix(strings.TrimPrefix(typ, "["), "]"), v)
		}
		for _, e := range l {
			if e != nil && !valueFits(strings.TrimSuffix(strings.TrimPrefix(typ, "["), "]"), e) {
				return false
			}
		}
		return true
	}
	switch typ {
	case "String", "ID":
		_, ok := v.(string)
		return ok
	case "Int":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "Boolean":
		_, ok := v.(bool)
		return ok
	}
	if vals, ok := gqlEnums[typ]; ok {
		s, ok := v.(string)
		return ok && slices.Contains(vals, s)
	}
	return true
}

// execCtx executes one document. The server lock is held throughout.
type execCtx struct {
	s          *Server
	doc        *gqlDoc
	vars       map[string]any
	errs       []gqlError
	teamFields int
	orgReads   bool
}

// arg evaluates an argument: nil when absent or null.
func (e *execCtx) arg(f *gqlField, name string) any {
	for _, a := range f.Args {
		if a.Name == name {
			return e.value(a.Value)
		}
	}
	return nil
}

func (e *execCtx) value(v gqlValue) any {
	switch v.Kind {
	case gvVar:
		if x, ok := e.vars[v.Str]; ok {
			return x
		}
		for _, d := range e.doc.VarDefs {
			if d.Name == v.Str && d.Default != nil {
				return e.value(*d.Default)
			}
		}
		return nil
	case gvString, gvEnum:
		return v.Str
	case gvInt, gvFloat:
		f, _ := strconv.ParseFloat(v.Str, 64)
		return f
	case gvBool:
		return v.Bool
	case gvList:
		out := make([]any, len(v.List))
		for i, x := range v.List {
			out[i] = e.value(x)
		}
		return out
	case gvObject:
		out := map[string]any{}
		for _, a := range v.Obj {
			out[a.Name] = e.value(a.Value)
		}
		return out
	}
	return nil
}

func (e *execCtx) fail(path []any, typ, format string, args ...any) {
	e.errs = append(e.errs, gqlError{Message: fmt.Sprintf(format, args...), Type: typ, Path: slices.Clone(path)})
}

func extend(path []any, k any) []any { return append(slices.Clip(path), k) }

// object resolves a selection set on one object.
func (e *execCtx) object(typ string, sel []*gqlField, path []any, res func(f *gqlField, p []any) any) map[string]any {
	out := make(map[string]any, len(sel))
	for _, f := range sel {
		p := extend(path, f.Key())
		if f.Name == "__typename" {
			out[f.Key()] = typ
			continue
		}
		out[f.Key()] = res(f, p)
	}
	return out
}

func (e *execCtx) query(sel []*gqlField) map[string]any {
	return e.object("Query", sel, nil, func(f *gqlField, p []any) any {
		switch f.Name {
		case "organization":
			login, _ := e.arg(f, "login").(string)
			o := e.s.org(login, false)
			if o == nil {
				e.fail(p, "NOT_FOUND", "Could not resolve to an Organization with the login of '%s'.", login)
				return nil
			}
			return e.org(o, f.Sel, p)
		case "rateLimit":
			return e.object("RateLimit", f.Sel, p, func(g *gqlField, _ []any) any {
				switch g.Name {
				case "cost":
					return 1
				case "limit":
					return e.s.opt.RateLimit
				case "remaining":
					if w := e.s.windows["graphql"]; w != nil {
						return e.s.opt.RateLimit - w.used
					}
					return e.s.opt.RateLimit
				case "used":
					if w := e.s.windows["graphql"]; w != nil {
						return w.used
					}
					return 0
				case "resetAt":
					if w := e.s.windows["graphql"]; w != nil {
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

type connItem struct {
	user string // lower login, for user nodes
	team *team  // for team nodes
	role string
}

func (e *execCtx) org(o *org, sel []*gqlField, path []any) map[string]any {
	return e.object("Organization", sel, path, func(f *gqlField, p []any) any {
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
			return e.team(t, f.Sel, p)
		case "teams":
			var items []connItem
			for _, s := range slices.Sorted(maps.Keys(o.teams)) {
				items = append(items, connItem{team: o.teams[s]})
			}
			return e.connection("TeamConnection", "TeamEdge", f, p, items)
		case "membersWithRole":
			e.orgReads = true
			var items []connItem
			for _, k := range slices.Sorted(maps.Keys(o.members)) {
				items = append(items, connItem{user: k, role: strings.ToUpper(o.members[k])})
			}
			return e.connection("OrganizationMemberConnection", "OrganizationMemberEdge", f, p, items)
		case "pendingMembers":
			e.orgReads = true
			var items []connItem
			for _, k := range slices.Sorted(maps.Keys(o.pending)) {
				items = append(items, connItem{user: k})
			}
			return e.connection("UserConnection", "UserEdge", f, p, items)
		}
		return nil
	})
}

func (e *execCtx) team(t *team, sel []*gqlField, path []any) map[string]any {
	return e.object("Team", sel, path, func(f *gqlField, p []any) any {
		switch f.Name {
		case "databaseId":
			return t.id
		case "id":
			return fmt.Sprintf("T_%d", t.id)
		case "slug":
			return t.slug
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
			return e.team(t.parent, f.Sel, p)
		case "members":
			membership, _ := e.arg(f, "membership").(string)
			roleFilter, _ := e.arg(f, "role").(string)
			roles := map[string]string{}
			if membership != "IMMEDIATE" {
				e.childMembers(t, roles)
			}
			if membership == "CHILD_TEAM" {
				for k := range t.members {
					delete(roles, k)
				}
			} else {
				for k, r := range t.members {
					roles[k] = r
				}
			}
			var items []connItem
			for _, k := range slices.Sorted(maps.Keys(roles)) {
				r := strings.ToUpper(roles[k])
				if roleFilter == "" || roleFilter == r {
					items = append(items, connItem{user: k, role: r})
				}
			}
			return e.connection("TeamMemberConnection", "TeamMemberEdge", f, p, items)
		}
		return nil
	})
}

// childMembers adds the members of every descendant team (as plain members).
func (e *execCtx) childMembers(t *team, roles map[string]string) {
	for _, o := range e.s.orgs {
		for _, c := range o.teams {
			if c.parent == t {
				for k := range c.members {
					roles[k] = "member"
				}
				e.childMembers(c, roles)
			}
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
func (e *execCtx) connection(typ, edgeType string, f *gqlField, path []any, items []connItem) any {
	if e.arg(f, "last") != nil || e.arg(f, "before") != nil {
		e.fail(path, "", "the fake supports first/after pagination only")
		return nil
	}
	first, ok := e.arg(f, "first").(float64)
	if !ok {
		e.fail(path, "", "You must provide a `first` or `last` value to properly paginate the `%s` connection.", f.Name)
		return nil
	}
	if first < 0 || first > 100 {
		e.fail(path, "", "Requesting %d records on the `%s` connection exceeds the `first` limit of 100 records.", int(first), f.Name)
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
	hi := min(lo+int(first), len(items))
	node := func(it connItem, sel []*gqlField, p []any) any {
		if it.team != nil {
			return e.team(it.team, sel, p)
		}
		return e.object("User", sel, p, func(g *gqlField, _ []any) any {
			switch g.Name {
			case "login", "name":
				return e.s.users[it.user]
			case "id":
				return "U_" + it.user
			case "databaseId":
				return userID(it.user)
			}
			return nil
		})
	}
	return e.object(typ, f.Sel, path, func(g *gqlField, p []any) any {
		switch g.Name {
		case "totalCount":
			return len(items)
		case "pageInfo":
			return e.object("PageInfo", g.Sel, p, func(h *gqlField, _ []any) any {
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
				out = append(out, node(items[i], g.Sel, extend(p, i-lo)))
			}
			return out
		case "edges":
			out := make([]any, 0, hi-lo)
			for i := lo; i < hi; i++ {
				ep := extend(p, i-lo)
				out = append(out, e.object(edgeType, g.Sel, ep, func(h *gqlField, q []any) any {
					switch h.Name {
					case "cursor":
						return cursor(i)
					case "role":
						return items[i].role
					case "node":
						return node(items[i], h.Sel, q)
					}
					return nil
				}))
			}
			return out
		}
		return nil
	})
}

func (s *Server) serveGraphQL(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	doc, err := parseGraphQL(req.Query)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"errors": []gqlError{{Message: "Parse error: " + err.Error()}}})
		return
	}
	if doc.Op != "query" {
		writeJSON(w, http.StatusOK, map[string]any{"errors": []gqlError{{Message: "the fake serves queries only"}}})
		return
	}
	if errs := validateDoc(doc, req.Variables); len(errs) > 0 {
		writeJSON(w, http.StatusOK, map[string]any{"errors": errs})
		return
	}
	if s.primaryExhausted(w, "graphql") {
		return
	}
	s.mu.Lock()
	e := &execCtx{s: s, doc: doc, vars: req.Variables}
	data := e.query(doc.Sel)
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
