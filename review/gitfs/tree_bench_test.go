package gitfs

import (
	"context"
	"os"
	"testing"
)

// BenchmarkTree lists a large tree: BENCH_GIT_DIR=/path/to/repo (e.g. the repo that
// `go run ./cmd/entitlements-bench --people 50000 --dir D --diff 1` leaves in D).
func BenchmarkTree(b *testing.B) {
	dir := os.Getenv("BENCH_GIT_DIR")
	if dir == "" {
		b.Skip("BENCH_GIT_DIR not set")
	}
	ctx := context.Background()
	r, err := Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Tree(ctx, "HEAD"); err != nil {
			b.Fatal(err)
		}
	}
}
