package fakegithub

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// GitHub validates documents with graphql-ruby, whose messages and error codes differ from
// graphql-js (which gqlparser follows). The rules a client is most likely to break are
// replaced by versions that answer in GitHub's words, with GitHub's `extensions.code` and a
// `path` that starts with the operation ("query", or "query Name"), as in
//
//	{"path":["query","organization","nope"],"extensions":{"code":"undefinedField",
//	 "typeName":"Organization","fieldName":"nope"},"locations":[{"line":1,"column":40}],
//	 "message":"Field 'nope' doesn't exist on type 'Organization'"}
//
// Every other rule of the GraphQL specification runs as gqlparser has it.

// docPaths maps every field of a document to its static-validation path.
type docPaths map[*ast.Field][]any

func pathsOf(doc *ast.QueryDocument) docPaths {
	out := docPaths{}
	var walk func(prefix []any, set ast.SelectionSet)
	walk = func(prefix []any, set ast.SelectionSet) {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				p := append(slices.Clip(prefix), any(cmpOr(s.Alias, s.Name)))
				out[s] = p
				walk(p, s.SelectionSet)
			case *ast.InlineFragment:
				walk(append(slices.Clip(prefix), any("... on "+s.TypeCondition)), s.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		walk([]any{opLabel(op)}, op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		walk([]any{"fragment " + f.Name}, f.SelectionSet)
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func opLabel(op *ast.OperationDefinition) string {
	if op.Name != "" {
		return string(op.Operation) + " " + op.Name
	}
	return string(op.Operation)
}

// opDescription is how graphql-ruby names an operation in variable errors.
func opDescription(op *ast.OperationDefinition) string {
	if op == nil || op.Name == "" {
		return "anonymous " + string(cmpOrOp(op))
	}
	return op.Name
}

func cmpOrOp(op *ast.OperationDefinition) ast.Operation {
	if op == nil || op.Operation == "" {
		return ast.Query
	}
	return op.Operation
}

func ghError(msg string, pos *ast.Position, path []any, ext map[string]any) core.ErrorOption {
	return func(e *gqlerror.Error) {
		e.Message = msg
		if pos != nil {
			e.Locations = append(e.Locations, gqlerror.Location{Line: pos.Line, Column: pos.Column})
		}
		for _, p := range path {
			switch p := p.(type) {
			case string:
				e.Path = append(e.Path, ast.PathName(p))
			case int:
				e.Path = append(e.Path, ast.PathIndex(p))
			}
		}
		e.Extensions = ext
	}
}

// githubRules is gqlparser's rule set with GitHub's wording for the common mistakes.
func githubRules(paths docPaths) *rules.Rules {
	r := rules.NewDefaultRules()
	r.ReplaceRule(rules.FieldsOnCorrectTypeRule.Name, func(ev *core.Events, add core.AddErrFunc) {
		ev.OnField(func(_ *core.Walker, f *ast.Field) {
			if f.ObjectDefinition == nil || f.Definition != nil {
				return
			}
			add(ghError(fmt.Sprintf("Field '%s' doesn't exist on type '%s'", f.Name, f.ObjectDefinition.Name),
				f.Position, paths[f], map[string]any{"code": "undefinedField", "typeName": f.ObjectDefinition.Name, "fieldName": f.Name}))
		})
	})
	r.ReplaceRule(rules.KnownArgumentNamesRule.Name, func(ev *core.Events, add core.AddErrFunc) {
		ev.OnField(func(_ *core.Walker, f *ast.Field) {
			if f.Definition == nil {
				return
			}
			for _, a := range f.Arguments {
				if f.Definition.Arguments.ForName(a.Name) == nil {
					add(ghError(fmt.Sprintf("Field '%s' doesn't accept argument '%s'", f.Name, a.Name), a.Position,
						append(slices.Clip(paths[f]), any(a.Name)),
						map[string]any{"code": "argumentNotAccepted", "name": f.Name, "typeName": "Field", "argumentName": a.Name}))
				}
			}
		})
		// Directive arguments keep gqlparser's check.
		ev.OnDirective(func(_ *core.Walker, d *ast.Directive) {
			if d.Definition == nil {
				return
			}
			for _, a := range d.Arguments {
				if d.Definition.Arguments.ForName(a.Name) == nil {
					add(ghError(fmt.Sprintf("Directive '%s' doesn't accept argument '%s'", d.Name, a.Name), a.Position, nil,
						map[string]any{"code": "argumentNotAccepted", "name": d.Name, "typeName": "Directive", "argumentName": a.Name}))
				}
			}
		})
	})
	r.ReplaceRule(rules.ProvidedRequiredArgumentsRule.Name, func(ev *core.Events, add core.AddErrFunc) {
		ev.OnField(func(_ *core.Walker, f *ast.Field) {
			if f.Definition == nil {
				return
			}
			var missing []string
			for _, ad := range f.Definition.Arguments {
				if ad.Type.NonNull && ad.DefaultValue == nil && f.Arguments.ForName(ad.Name) == nil {
					missing = append(missing, ad.Name)
				}
			}
			if len(missing) > 0 {
				list := strings.Join(missing, ", ")
				add(ghError(fmt.Sprintf("Field '%s' is missing required arguments: %s", f.Name, list), f.Position, paths[f],
					map[string]any{"code": "missingRequiredArguments", "className": "Field", "name": f.Name, "arguments": list}))
			}
		})
	})
	r.ReplaceRule(rules.NoUndefinedVariablesRule.Name, func(ev *core.Events, add core.AddErrFunc) {
		ev.OnValue(func(w *core.Walker, v *ast.Value) {
			if w.CurrentOperation == nil || v.Kind != ast.Variable || v.VariableDefinition != nil {
				return
			}
			add(ghError(fmt.Sprintf("Variable $%s is used by %s but not declared", v.Raw, opDescription(w.CurrentOperation)),
				v.Position, []any{opLabel(w.CurrentOperation)}, map[string]any{"code": "variableNotDefined", "variableName": v.Raw}))
		})
	})
	r.ReplaceRule(rules.NoUnusedVariablesRule.Name, func(ev *core.Events, add core.AddErrFunc) {
		ev.OnOperation(func(_ *core.Walker, op *ast.OperationDefinition) {
			for _, vd := range op.VariableDefinitions {
				if !vd.Used {
					add(ghError(fmt.Sprintf("Variable $%s is declared by %s but not used", vd.Variable, opDescription(op)),
						vd.Position, []any{opLabel(op)}, map[string]any{"code": "variableNotUsed", "variableName": vd.Variable}))
				}
			}
		})
	})
	r.ReplaceRule(rules.ScalarLeafsRule.Name, func(ev *core.Events, add core.AddErrFunc) {
		ev.OnField(func(w *core.Walker, f *ast.Field) {
			if f.Definition == nil {
				return
			}
			t := w.Schema.Types[f.Definition.Type.Name()]
			if t == nil {
				return
			}
			ext := map[string]any{"code": "selectionMismatch", "nodeName": "field '" + f.Name + "'", "typeName": f.Definition.Type.String()}
			switch {
			case t.IsLeafType() && len(f.SelectionSet) > 0:
				add(ghError(fmt.Sprintf("Selections can't be made on scalars (field '%s' returns %s but has selections [%s])",
					f.Name, f.Definition.Type.String(), strings.Join(selNames(f.SelectionSet), ", ")), f.Position, paths[f], ext))
			case !t.IsLeafType() && len(f.SelectionSet) == 0:
				add(ghError(fmt.Sprintf("Field must have selections (field '%s' returns %s but has no selections. Did you mean '%s { ... }'?)",
					f.Name, f.Definition.Type.String(), f.Name), f.Position, paths[f], ext))
			}
		})
	})
	return r
}

func selNames(set ast.SelectionSet) []string {
	var out []string
	for _, s := range set {
		if f, ok := s.(*ast.Field); ok {
			out = append(out, f.Name)
		}
	}
	return out
}
