package apicheck

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// godocForbidden are what the documentation of a public package must not say (issue 22.13):
// a consumer can open no internal package, has no copy of the spec to look a section or an
// open question up in, and the module has no SavePlan.
var godocForbidden = []*regexp.Regexp{
	regexp.MustCompile(`\binternal/`),
	regexp.MustCompile(`§`),
	regexp.MustCompile(`\bQ-[0-9]`),
	regexp.MustCompile(`\bSavePlan\b`),
}

// standardMethods implement interfaces of the standard library (error, fmt.Stringer,
// errors.Unwrap, errors.Is/As, json and text marshalling).
var standardMethods = map[string]bool{"Error": true, "String": true, "Unwrap": true, "Is": true, "As": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true}

// docText is one piece of documentation that `go doc -all` shows, with where it is.
type docText struct{ where, text string }

// godocTexts collects what `go doc -all` shows of a package: the package comment and the
// comment of every exported constant, variable, type, function, method, struct field and
// interface method.
func godocTexts(pkg *doc.Package) (texts []docText, undocumented []string) {
	add := func(where, text string) {
		if text != "" {
			texts = append(texts, docText{where, text})
		}
	}
	inner := func(where string, decl ast.Node) {
		ast.Inspect(decl, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				for _, cg := range []*ast.CommentGroup{n.Doc, n.Comment} {
					add(where, cg.Text())
				}
			case *ast.ValueSpec:
				for _, cg := range []*ast.CommentGroup{n.Doc, n.Comment} {
					add(where, cg.Text())
				}
			}
			return true
		})
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			add(strings.Join(v.Names, ", "), v.Doc)
			inner(strings.Join(v.Names, ", "), v.Decl)
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			add(prefix+f.Name, f.Doc)
			// The methods of the standard interfaces mean what the interface says.
			if f.Doc == "" && !(prefix != "" && standardMethods[f.Name]) {
				undocumented = append(undocumented, prefix+f.Name)
			}
		}
	}
	add("package "+pkg.Name, pkg.Doc)
	values(pkg.Consts)
	values(pkg.Vars)
	funcs("", pkg.Funcs)
	for _, typ := range pkg.Types {
		add(typ.Name, typ.Doc)
		if typ.Doc == "" {
			undocumented = append(undocumented, typ.Name)
		}
		inner(typ.Name, typ.Decl)
		values(typ.Consts)
		values(typ.Vars)
		funcs("", typ.Funcs)
		funcs(typ.Name+".", typ.Methods)
	}
	return texts, undocumented
}

// TestGoDoc holds what `go doc -all` shows of every public package to what a consumer can
// use: nothing of the forbidden patterns, a comment on every exported type, function and
// method, and Examples that handle the errors they get (a consumer copies them).
func TestGoDoc(t *testing.T) {
	module := "github.com/entitlements-go/entitlements"
	var internalNames []string
	var pkgs []listedPackage
	for _, p := range goList(t, "-find", "./...") {
		switch {
		case public(p, module):
			pkgs = append(pkgs, p)
		case isInternal(p.ImportPath) && p.Name != "":
			internalNames = append(internalNames, regexp.QuoteMeta(p.Name))
		}
	}
	if len(pkgs) < 10 || len(internalNames) < 5 {
		t.Fatalf("found only %d public and %d internal packages", len(pkgs), len(internalNames))
	}
	// An internal package named in a qualified identifier (safefile.DefaultMaxSize).
	forbidden := append(godocForbidden, regexp.MustCompile(`\b(`+strings.Join(internalNames, "|")+`)\.[A-Z]`))
	for _, p := range pkgs {
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		pkg, err := doc.NewFromFiles(fset, files, p.ImportPath)
		if err != nil {
			t.Fatalf("%s: %v", p.ImportPath, err)
		}
		texts, undocumented := godocTexts(pkg)
		for _, d := range texts {
			for _, re := range forbidden {
				if m := re.FindString(d.text); m != "" {
					t.Errorf("%s: the doc of %s says %q:\n%s", p.ImportPath, d.where, m, d.text)
				}
			}
		}
		for _, name := range undocumented {
			t.Errorf("%s: %s has no doc comment", p.ImportPath, name)
		}
		for _, name := range append(p.TestGoFiles, p.XTestGoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range droppedErrors(fset, f) {
				t.Errorf("%s: %s", p.ImportPath, l)
			}
		}
	}
}

// droppedErrors finds the calls of Example functions whose last result (by convention the
// error) is assigned to the blank identifier.
func droppedErrors(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Rhs) != 1 {
				return true
			}
			if _, call := as.Rhs[0].(*ast.CallExpr); !call {
				return true
			}
			if last, ok := as.Lhs[len(as.Lhs)-1].(*ast.Ident); ok && last.Name == "_" {
				out = append(out, fset.Position(as.Pos()).String()+": "+fn.Name.Name+" drops the error of a call")
			}
			return true
		})
	}
	return out
}
