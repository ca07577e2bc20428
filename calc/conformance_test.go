package calc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/corpus"
	"github.com/entitlements-go/entitlements/validate"
)

type caseInfo struct {
	Now        string `json:"now"`
	LDAPGroups string `json:"ldap_groups"`
}

// TestConformance runs every case of the corpus: the same groups as expected.json, or a failure
// (of the expected category) where expected_error.txt exists.
func TestConformance(t *testing.T) { runCases(t, corpus.Dir(t)) }

// TestCompatCases runs the project's own cases, laid out like the corpus's: inputs where the
// reference and entitlements-go once differed (issue 23 and later), each with what we do now.
// case.json's "reference" says whether the reference does the same or how it differs (every
// difference is listed in COMPATIBILITY.md).
func TestCompatCases(t *testing.T) {
	root := filepath.Join("testdata", "compat")
	runCases(t, root)
	cases, err := filepath.Glob(filepath.Join(root, "*", "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cases {
		var ci struct{ Reference, Notes string }
		if raw, err := os.ReadFile(p); err != nil || json.Unmarshal(raw, &ci) != nil || ci.Reference == "" || ci.Notes == "" {
			t.Errorf("%s: want \"reference\" (what the reference does) and \"notes\"", p)
		}
	}
}

// runCases runs every case folder (one holding case.json) under root.
func runCases(t *testing.T, root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "case.json")); err != nil {
			continue
		}
		ran++
		t.Run(e.Name(), func(t *testing.T) { runCase(t, dir) })
	}
	if ran == 0 {
		t.Fatalf("no cases found in %s", root)
	}
}

func runCase(t *testing.T, dir string) {
	dir, err := filepath.Abs(dir) // t.Chdir below
	if err != nil {
		t.Fatal(err)
	}
	var ci caseInfo
	raw, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ci); err != nil {
		t.Fatal(err)
	}
	now, err := time.Parse(time.DateOnly, ci.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	opt := calc.Options{Now: now, Getenv: func(string) (string, bool) { return "", false }}
	if ci.LDAPGroups != "" {
		snap, err := calc.LoadLDAPSnapshot(ci.LDAPGroups)
		if err != nil {
			t.Fatal(err)
		}
		opt.LDAPGroups = snap
	}
	var got bytes.Buffer
	opt.Types = backends.Types()
	repo, err := calc.Load(context.Background(), "config.yaml", opt)
	if err == nil {
		var res *calc.Result
		res, err = repo.Calculate(context.Background())
		if err == nil {
			err = res.WriteJSON(&got)
		}
	}
	if want, rerr := os.ReadFile(filepath.Join(dir, "expected_error.txt")); rerr == nil {
		lines := strings.SplitN(string(want), "\n", 2)
		if err == nil {
			t.Fatalf("calculation succeeded; want failure %q", strings.TrimSpace(string(want)))
		}
		kind := validate.Kind(strings.TrimSpace(lines[0]))
		if !validate.HasKind(err, kind) {
			var l validate.List
			errors.As(err, &l)
			t.Errorf("error kinds %v; want %q\n got: %v\nwant: %s", l.Kinds(), kind, err, want)
		}
		return
	}
	if err != nil {
		t.Fatalf("calculation failed: %v", err)
	}
	wantRaw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want, have struct {
		Groups map[string]any `json:"groups"`
	}
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.Bytes(), &have); err != nil {
		t.Fatalf("our output is not JSON: %v\n%s", err, got.String())
	}
	for k, w := range want.Groups {
		h, ok := have.Groups[k]
		if !ok {
			t.Errorf("missing group %s", k)
			continue
		}
		if !reflect.DeepEqual(w, h) {
			wj, _ := json.Marshal(w)
			hj, _ := json.Marshal(h)
			t.Errorf("group %s:\n got: %s\nwant: %s", k, hj, wj)
		}
	}
	for k := range have.Groups {
		if _, ok := want.Groups[k]; !ok {
			t.Errorf("unexpected group %s", k)
		}
	}
	// The canonical form must be byte-identical to the corpus's.
	if !t.Failed() && !bytes.Equal(bytes.TrimSpace(got.Bytes()), bytes.TrimSpace(wantRaw)) {
		t.Errorf("output is not byte-identical to expected.json (same content, different layout)")
	}
}
