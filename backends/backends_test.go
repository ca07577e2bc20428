package backends_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/providers"
)

func TestBuiltinTypes(t *testing.T) {
	var names []string
	for _, s := range backends.Types() {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	if want := []string{"aad", "dummy", "github_org", "github_team", "ldap", "member_of"}; !slices.Equal(names, want) {
		t.Errorf("built-in types %v, want %v", names, want)
	}
	if f := backends.Spec().Factories(); len(f) != 0 {
		t.Errorf("Spec has providers: %v", f)
	}
}

// An extra backend replaces the built-in one of its type (Azure AD with its provider).
func TestExtraBackendReplacesBuiltin(t *testing.T) {
	f := func(*config.OU) (providers.Provider, error) { return nil, nil }
	b, _ := backends.Spec().Lookup("aad")
	b.New = f
	r, err := backends.New(backends.Providers{}, b, backend.Backend{Spec: config.TypeSpec{Name: "mine", Enumerates: true}, New: f})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Lookup("aad"); got.New == nil {
		t.Error("the extra aad backend did not replace the built-in one")
	}
	if _, ok := r.Lookup("mine"); !ok {
		t.Error("the extra type is missing")
	}
	if len(r.Types()) != len(backends.Types())+1 {
		t.Errorf("%d types, want the built-ins and one more", len(r.Types()))
	}
}

// The loader, the calculation and deploy know no backend by name: what a type means comes
// from its description (TypeSpec, backend.Backend). The names below are backend types only
// (ldap and dummy are also people-source types, which calc reads itself).
func TestCoreNamesNoBackend(t *testing.T) {
	backendOnly := []string{"member_of", "github_org", "github_team", "aad"}
	for _, dir := range []string{"../calc", "../config", "../deploy"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if v, err := strconv.Unquote(lit.Value); err == nil && slices.Contains(backendOnly, v) {
					t.Errorf("%s names the backend type %q", f, v)
				}
				return true
			})
		}
	}
}
