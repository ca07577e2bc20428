package apicheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type listedPackage struct {
	ImportPath string
	Dir        string
	Name       string
	Export     string
	Standard   bool
	GoFiles    []string
	// Test files, for the Examples (TestGoDoc).
	TestGoFiles  []string
	XTestGoFiles []string
	Module       *struct{ Path string }
}

// isInternal reports whether an import path has an internal element: such a package can
// only be imported from inside its parent tree, so its types are useless in a public API.
func isInternal(path string) bool {
	for _, el := range strings.Split(path, "/") {
		if el == "internal" {
			return true
		}
	}
	return false
}

// goList lists the module's packages (and, with deps, everything they import).
func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// public reports whether a listed package of this module is part of its library API (a
// directory of tests only, such as docs, has none).
func public(p listedPackage, module string) bool {
	return p.Module != nil && p.Module.Path == module && p.Name != "main" && len(p.GoFiles) > 0 && !isInternal(p.ImportPath)
}

// TestPublicAPIHasNoInternalTypes type-checks every public package from its export data and
// walks everything a consumer can reach from its exported identifiers. providers/aad is left
// out (compiling the Azure SDK takes minutes); TestPublicAPISyntax covers it.
func TestPublicAPIHasNoInternalTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the export data of the module (-short)")
	}
	roots := goList(t, "-find", "./...")
	module := "github.com/entitlements-go/entitlements"
	var targets []string
	for _, p := range roots {
		if public(p, module) && !strings.HasPrefix(p.ImportPath, module+"/providers/aad") {
			targets = append(targets, p.ImportPath)
		}
	}
	if len(targets) < 10 {
		t.Fatalf("found only %d public packages: %v", len(targets), targets)
	}
	exports := map[string]string{}
	for _, p := range goList(t, append([]string{"-export", "-deps"}, targets...)...) {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var leaks []string
	for _, path := range targets {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		leaks = append(leaks, apiLeaks(pkg)...)
	}
	for _, l := range leaks {
		t.Errorf("exported API mentions an internal type: %s", l)
	}
}

// apiLeaks walks the exported API of pkg: package-level exported objects, the exported
// fields and methods of its types (promoted ones included), recursively through types
// of pkg that are not exported (a consumer still reaches their exported parts).
func apiLeaks(pkg *types.Package) []string {
	w := &walker{pkg: pkg, seen: map[types.Type]bool{}}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Name() + "." + name
		switch o := obj.(type) {
		case *types.TypeName:
			if o.IsAlias() {
				w.typ(where, o.Type())
				continue
			}
			w.named(where, o.Type())
		default:
			w.typ(where, obj.Type())
		}
	}
	return w.leaks
}

type walker struct {
	pkg   *types.Package
	seen  map[types.Type]bool
	leaks []string
}

// named walks a named type of the package: its structure and its exported methods.
func (w *walker) named(where string, t types.Type) {
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	n, ok := t.(*types.Named)
	if !ok {
		w.typ(where, t)
		return
	}
	if tp := n.TypeParams(); tp != nil {
		for i := range tp.Len() {
			w.typ(where+"["+tp.At(i).Obj().Name()+"]", tp.At(i).Constraint())
		}
	}
	w.structure(where, n.Underlying())
	ms := types.NewMethodSet(types.NewPointer(n))
	for i := range ms.Len() {
		m := ms.At(i).Obj()
		if m.Exported() {
			w.typ(where+"."+m.Name(), m.Type())
		}
	}
}

// structure walks the parts of an underlying type a consumer can reach.
func (w *walker) structure(where string, u types.Type) {
	switch u := u.(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i)
			if f.Exported() || f.Embedded() {
				w.typ(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for i := range u.NumMethods() {
			if m := u.Method(i); m.Exported() {
				w.typ(where+"."+m.Name(), m.Type())
			}
		}
		for i := range u.NumEmbeddeds() {
			w.typ(where, u.EmbeddedType(i))
		}
	default:
		w.typ(where, u)
	}
}

func (w *walker) typ(where string, t types.Type) {
	switch t := t.(type) {
	case nil, *types.Basic, *types.TypeParam:
	case *types.Alias:
		w.typ(where, types.Unalias(t))
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			w.leaks = append(w.leaks, fmt.Sprintf("%s: %s.%s", where, obj.Pkg().Path(), obj.Name()))
			return
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				w.typ(where, args.At(i))
			}
		}
		// Other packages' types are checked with their own package; an unexported type of
		// this one is reachable only through here.
		if obj.Pkg() == w.pkg && !obj.Exported() {
			w.named(where, t.Origin())
		}
	case *types.Pointer:
		w.typ(where, t.Elem())
	case *types.Slice:
		w.typ(where, t.Elem())
	case *types.Array:
		w.typ(where, t.Elem())
	case *types.Chan:
		w.typ(where, t.Elem())
	case *types.Map:
		w.typ(where, t.Key())
		w.typ(where, t.Elem())
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				w.typ(where, tup.At(i).Type())
			}
		}
	case *types.Struct, *types.Interface:
		if w.seen[t] {
			return
		}
		w.seen[t] = true
		w.structure(where, t)
	case *types.Union:
		for i := range t.Len() {
			w.typ(where, t.Term(i).Type())
		}
	default:
		panic(fmt.Sprintf("unhandled type %T", t))
	}
}

// TestPublicAPISyntax is a syntactic version of the check for every public package,
// providers/aad included: no exported declaration's signature, exported struct field or
// exported interface method names a type from an internal import. It cannot see inferred
// types (var X = internal.New()); the type-checked test does.
func TestPublicAPISyntax(t *testing.T) {
	module := "github.com/entitlements-go/entitlements"
	var leaks []string
	checked := 0
	for _, p := range goList(t, "-find", "./...") {
		if !public(p, module) {
			continue
		}
		checked++
		fset := token.NewFileSet()
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			leaks = append(leaks, syntaxLeaks(fset, f)...)
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d packages", checked)
	}
	for _, l := range leaks {
		t.Errorf("exported API mentions an internal type: %s", l)
	}
}

func syntaxLeaks(fset *token.FileSet, f *ast.File) []string {
	internal := map[string]string{} // local name → path
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		if !isInternal(path) {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		internal[name] = path
	}
	if len(internal) == 0 {
		return nil
	}
	var leaks []string
	mention := func(what string, n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.StructType:
				// Only exported (and embedded) fields of nested structs are reachable.
				for _, fl := range n.Fields.List {
					if fl.Names == nil || slices.ContainsFunc(fl.Names, func(id *ast.Ident) bool { return id.IsExported() }) {
						ast.Inspect(fl.Type, func(m ast.Node) bool { return check(m, internal, what, fset, &leaks) })
					}
				}
				return false
			}
			return check(n, internal, what, fset, &leaks)
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil {
				if !exportedRecv(d.Recv.List[0].Type) {
					continue
				}
				mention(d.Name.Name, d.Recv)
			}
			mention(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						if s.TypeParams != nil {
							mention(s.Name.Name, s.TypeParams)
						}
						mention(s.Name.Name, s.Type)
					}
				case *ast.ValueSpec:
					if s.Type != nil && slices.ContainsFunc(s.Names, func(id *ast.Ident) bool { return id.IsExported() }) {
						mention(s.Names[0].Name, s.Type)
					}
				}
			}
		}
	}
	return leaks
}

func check(n ast.Node, internal map[string]string, what string, fset *token.FileSet, leaks *[]string) bool {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return true
	}
	if id, ok := sel.X.(*ast.Ident); ok {
		if path, ok := internal[id.Name]; ok {
			*leaks = append(*leaks, fmt.Sprintf("%s: %s: %s.%s", fset.Position(sel.Pos()), what, path, sel.Sel.Name))
		}
	}
	return false
}

func exportedRecv(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
