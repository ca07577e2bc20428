package review_test

import (
	"context"
	"os"
	"testing/fstest"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/review"
)

// tree is a small config repo held in memory.
func tree(sreMembers string) fstest.MapFS {
	return fstest.MapFS{
		"entitlements.yaml": {Data: []byte(`configuration_path: ./groups
groups:
  teams:
    type: dummy
people:
  yaml:
    type: yaml
    config:
      filename: people.yaml
people_data_source: yaml
`)},
		"people.yaml":          {Data: []byte("alice: {}\nbob: {}\ncarol: {}\n")},
		"groups/teams/sre.txt": {Data: []byte("description = SRE\n" + sreMembers)},
	}
}

// Compare two versions of a repo without git: load both trees (here in memory; os.DirFS
// works the same) and diff the results.
func Example() {
	ctx := context.Background()
	opt := calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	calculate := func(fsys fstest.MapFS) *calc.Result {
		repo, err := calc.LoadFS(ctx, fsys, "entitlements.yaml", opt)
		if err != nil {
			panic(err)
		}
		res, err := repo.Calculate(ctx)
		if err != nil {
			panic(err)
		}
		return res
	}
	base := calculate(tree("username = alice\nusername = bob\n"))
	head := calculate(tree("username = alice\nusername = carol\n"))
	d := review.Compare(base, head, review.Options{})
	if err := d.WriteText(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// ~ CHANGE teams/sre (groups/teams/sre.txt)
	//     + carol  (username = carol (groups/teams/sre.txt:3))
	//     - bob  (no longer matched: username = bob (groups/teams/sre.txt:3))
	// Diff: 1 group(s) changed (0 created, 0 deleted); 1 people gaining, 1 losing access
}

// An incremental head: only the changed file is read and parsed again, and only the groups
// that depend on it are evaluated again.
func Example_incremental() {
	ctx := context.Background()
	opt := calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	baseRepo, err := calc.LoadFS(ctx, tree("username = alice\n"), "entitlements.yaml", opt)
	if err != nil {
		panic(err)
	}
	base, err := baseRepo.Calculate(ctx)
	if err != nil {
		panic(err)
	}
	hopt := opt
	hopt.Incremental = &calc.Incremental{Base: baseRepo, Changed: func(p string) bool { return p == "groups/teams/sre.txt" }}
	headRepo, err := calc.LoadFS(ctx, tree("username = alice\nusername = bob\n"), "entitlements.yaml", hopt)
	if err != nil {
		panic(err)
	}
	head, err := headRepo.Calculate(ctx)
	if err != nil {
		panic(err)
	}
	if err := review.Compare(base, head, review.Options{}).WriteMarkdown(os.Stdout, review.MarkdownOptions{Title: "Access changes"}); err != nil {
		panic(err)
	}
	// Output:
	// ### Access changes
	//
	// **1 group(s) changed** (0 created, 0 deleted): **1 people gaining**, **0 losing** access.
	//
	// | OU | groups changed | created | deleted | people gaining | people losing |
	// | --- | ---: | ---: | ---: | ---: | ---: |
	// | teams | 1 | 0 | 0 | 1 | 0 |
	//
	// #### `teams/sre`
	//
	// File: `groups/teams/sre.txt`
	//
	// **➕ 1 added**
	//
	// - `bob` — username = bob (groups/teams/sre.txt:3)
}
