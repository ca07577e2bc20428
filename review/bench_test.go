package review_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/synth"
	"github.com/entitlements-go/entitlements/review"
)

// The pull-request diff against one calculation, on the same generated repo, in one run:
// a commit that changes 3 group files and one person's manager.
//
//	go test -run '^$' -bench DiffVsCalc -benchmem ./review
//	BENCH_PEOPLE=50000 go test -run '^$' -bench DiffVsCalc -benchtime 3x ./review
//
// "calc" loads and calculates the head in full; "diff" loads and calculates the base in
// full, loads the head incrementally over it and compares the two with reasons. The CLI's
// diff adds reading the base from git objects (one `git cat-file --batch` stream).

var (
	benchOnce       sync.Once
	benchBase, head fstest.MapFS
	benchChanged    []string
)

func benchTrees(b *testing.B) {
	benchOnce.Do(func() {
		n := 5000
		if v := os.Getenv("BENCH_PEOPLE"); v != "" {
			n, _ = strconv.Atoi(v)
		}
		repo, err := synth.Generate(synth.Options{People: n, Seed: 1})
		if err != nil {
			panic(err)
		}
		benchBase = fstest.MapFS{}
		for p, d := range repo.Files {
			benchBase[p] = &fstest.MapFile{Data: d}
		}
		head = maps.Clone(benchBase)
		var teams, apps []string
		for p := range benchBase {
			switch {
			case strings.HasPrefix(p, "ldap-config/pizza_teams/") && strings.HasSuffix(p, ".txt"):
				teams = append(teams, p)
			case strings.HasPrefix(p, "ldap-config/entitlements/apps/") && strings.HasSuffix(p, ".txt"):
				apps = append(apps, p)
			}
		}
		slices.Sort(teams)
		slices.Sort(apps)
		for _, p := range []string{teams[0], teams[1], apps[0]} {
			head[p] = &fstest.MapFile{Data: append(bytes.Clone(head[p].Data), "\nusername = u000123\n"...)}
			benchChanged = append(benchChanged, p)
		}
		for _, p := range []string{"people.yaml", "manager-map.yaml"} {
			s := string(head[p].Data)
			i := strings.Index(s, "\nu000500:\n")
			j := strings.Index(s[i:], "manager: ") + i + len("manager: ")
			k := strings.IndexByte(s[j:], '\n') + j
			head[p] = &fstest.MapFile{Data: []byte(s[:j] + "u000002" + s[k:])}
			benchChanged = append(benchChanged, p)
		}
	})
}

func benchOpt() calc.Options {
	return calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Getenv: func(string) (string, bool) { return "x", true }}
}

func BenchmarkDiffVsCalc(b *testing.B) {
	benchTrees(b)
	ctx := context.Background()
	b.Run("calc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, err := calc.LoadFS(ctx, head, "config.yaml", benchOpt())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Calculate(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("diff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			br, err := calc.LoadFS(ctx, benchBase, "config.yaml", benchOpt())
			if err != nil {
				b.Fatal(err)
			}
			bres, err := br.Calculate(ctx)
			if err != nil {
				b.Fatal(err)
			}
			opt := benchOpt()
			opt.Incremental = &calc.Incremental{Base: br, Changed: func(p string) bool { return slices.Contains(benchChanged, p) }}
			hr, err := calc.LoadFS(ctx, head, "config.yaml", opt)
			if err != nil {
				b.Fatal(err)
			}
			hres, err := hr.Calculate(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if d := review.Compare(bres, hres, review.Options{}); d.Empty() {
				b.Fatal("no changes")
			}
		}
	})
}
