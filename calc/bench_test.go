package calc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/internal/synth"
)

// The benchmarks run on a generated production-shaped repo (internal/synth). Each phase is
// measured on its own so that load (I/O + parsing), validate (linking, cycle checks) and
// calculate (set algebra) regressions show up separately:
//
//	go test -run '^$' -bench . -benchmem ./calc
//	BENCH_PEOPLE=50000 go test -run '^$' -bench . -benchmem -benchtime 3x ./calc

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

func benchRepo(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		n := 5000
		if v := os.Getenv("BENCH_PEOPLE"); v != "" {
			if _, err := fmtSscan(v, &n); err != nil {
				benchErr = err
				return
			}
		}
		benchDir, benchErr = os.MkdirTemp("", "entitlements-bench-")
		if benchErr != nil {
			return
		}
		benchDir = filepath.Join(benchDir, "repo")
		_, benchErr = synth.Write(benchDir, synth.Options{People: n, Seed: 1})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	b.Chdir(benchDir)
	return benchDir
}

func benchOptions() Options {
	return Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Types: backends.Types()}
}

func BenchmarkLoad(b *testing.B) {
	benchRepo(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := load(ctx, "config.yaml", benchOptions()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	benchRepo(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r, c, err := load(ctx, "config.yaml", benchOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := r.validate(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCalculate(b *testing.B) {
	benchRepo(b)
	ctx := context.Background()
	b.ReportAllocs()
	var groups int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r, err := Load(ctx, "config.yaml", benchOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := r.Calculate(ctx)
		if err != nil {
			b.Fatal(err)
		}
		groups = len(res.Groups)
	}
	b.ReportMetric(float64(groups), "groups")
}

func fmtSscan(s string, n *int) (int, error) { return fmt.Sscan(s, n) }

// BenchmarkWriteJSON is the output phase alone: the canonical JSON of a calculated result.
func BenchmarkWriteJSON(b *testing.B) {
	benchRepo(b)
	ctx := context.Background()
	r, err := Load(ctx, "config.yaml", benchOptions())
	if err != nil {
		b.Fatal(err)
	}
	res, err := r.Calculate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var n countingDiscard
	b.ReportAllocs()
	for b.Loop() {
		n = 0
		if err := res.WriteJSON(&n); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n))
}

type countingDiscard int64

func (c *countingDiscard) Write(p []byte) (int, error) {
	*c += countingDiscard(len(p))
	return len(p), nil
}
