package people

import (
	"os"
	"path/filepath"
	"testing"
)

// The largest inputs of a run: the people file and the manager map of the synthetic
// 50,000-person repo (`go run ./cmd/entitlements-bench --people 50000 --dir DIR`), given by
// BENCH_PEOPLE_DIR:
//
//	BENCH_PEOPLE_DIR=/tmp/p50k go test -run '^$' -bench Parse -benchmem ./people
func benchFile(b *testing.B, name string) []byte {
	dir := os.Getenv("BENCH_PEOPLE_DIR")
	if dir == "" {
		b.Skip("BENCH_PEOPLE_DIR not set")
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	return data
}

func BenchmarkParseYAML(b *testing.B) {
	data := benchFile(b, "people.yaml")
	for b.Loop() {
		if _, err := ParseYAML(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseManagerMap(b *testing.B) {
	data := benchFile(b, "manager-map.yaml")
	for b.Loop() {
		if _, err := ParseManagerMap("manager-map.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
