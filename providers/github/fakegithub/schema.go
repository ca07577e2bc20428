package fakegithub

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// Schema is GitHub's published GraphQL schema, loaded once and shared (read-only) by every
// Server given it.
type Schema struct {
	s    *ast.Schema
	path string
}

// Path is the file the schema was loaded from.
func (s *Schema) Path() string { return s.path }

// SchemaFile is where the published schema lives, relative to the directory that holds the
// repository (the module root's parent): ../shared/api/github-schema.graphql seen from the
// repository.
const SchemaFile = "shared/api/github-schema.graphql"

// ErrNoSchema: the published schema file was not found.
var ErrNoSchema = errors.New("GitHub's published GraphQL schema was not found")

// LoadSchema loads GitHub's published schema (SDL). The published file defines two fields of
// EnterpriseOwnerInfo twice, which a strict loader refuses: the later definition of any
// field defined twice in one type is dropped before the schema is validated.
func LoadSchema(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading the GitHub schema: %w", err)
	}
	sd, err := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: path, Input: string(b)})
	if err != nil {
		return nil, fmt.Errorf("parsing the GitHub schema %s: %w", path, err)
	}
	dropDuplicateFields(sd.Definitions)
	dropDuplicateFields(sd.Extensions)
	s, err := validator.ValidateSchemaDocument(sd)
	if err != nil {
		return nil, fmt.Errorf("validating the GitHub schema %s: %w", path, err)
	}
	return &Schema{s: s, path: path}, nil
}

func dropDuplicateFields(defs ast.DefinitionList) {
	for _, d := range defs {
		seen := map[string]bool{}
		kept := d.Fields[:0]
		for _, f := range d.Fields {
			if !seen[f.Name] {
				seen[f.Name] = true
				kept = append(kept, f)
			}
		}
		d.Fields = kept
	}
}

// FindSchemaFile looks for SchemaFile next to the repository that holds dir (or any of its
// parents): the nearest directory with a go.mod is the module root, and the schema is in
// ../shared from there.
func FindSchemaFile(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(filepath.Dir(d), filepath.FromSlash(SchemaFile))
			if _, err := os.Stat(p); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return "", fmt.Errorf("%w at %s", ErrNoSchema, p)
				}
				return "", err
			}
			return p, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w: no go.mod above %s", ErrNoSchema, dir)
		}
		d = parent
	}
}

// schemaCache keeps the schema once found: loading it takes a noticeable fraction of a
// second, and every test server of a process uses the same one. A failed search is not
// kept (a test that changed directory first must not turn validation off for the others).
var schemaCache struct {
	mu sync.Mutex
	s  *Schema
}

// DefaultSchema returns the published schema, found from the working directory or, failing
// that, from this package's source directory (see FindSchemaFile), loaded once per process.
func DefaultSchema() (*Schema, error) {
	schemaCache.mu.Lock()
	defer schemaCache.mu.Unlock()
	if schemaCache.s != nil {
		return schemaCache.s, nil
	}
	p, err := FindSchemaFile(".")
	if err != nil {
		_, src, _, ok := runtime.Caller(0)
		if !ok || !filepath.IsAbs(src) {
			return nil, err
		}
		if p, err = FindSchemaFile(filepath.Dir(src)); err != nil {
			return nil, err
		}
	}
	s, err := LoadSchema(p)
	if err != nil {
		return nil, err
	}
	schemaCache.s = s
	return s, nil
}

// TestSchema returns the published schema for a test. When it is absent (a checkout without
// ../shared) the test logs that GraphQL documents are not checked against it and gets nil
// (no validation); under CI=true absence fails the test, so CI always validates.
func TestSchema(tb testing.TB) *Schema {
	tb.Helper()
	return schemaForTest(tb, DefaultSchema, os.Getenv("CI") == "true")
}

func schemaForTest(tb testing.TB, load func() (*Schema, error), ci bool) *Schema {
	tb.Helper()
	s, err := load()
	switch {
	case err == nil:
		return s
	case errors.Is(err, ErrNoSchema) && !ci:
		tb.Logf("fakegithub: skipping the check of GraphQL documents against GitHub's schema: %v", err)
		return nil
	default:
		tb.Fatalf("fakegithub: %v", err)
		return nil
	}
}
