package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/synth"
)

// cmdBench generates a production-shaped repo and reports the time and allocations of each
// phase, so that speed claims come with a command anyone can rerun.
func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "--e2e" || a == "-e2e" || a == "--e2e=true" || a == "-e2e=true" {
			return cmdBenchE2E(ctx, args, stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	n := fs.Int("people", 5000, "number of people in the generated repo")
	dir := fs.String("dir", "", "write the repo here and keep it (default: a temporary directory, removed after)")
	seed := fs.Int64("seed", 1, "generator seed")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	out := *dir
	if out == "" {
		tmp, err := os.MkdirTemp("", "entitlements-bench-")
		if err != nil {
			fmt.Fprintf(stderr, "entitlements bench: %v\n", err)
			return exitError
		}
		defer os.RemoveAll(tmp)
		out = tmp
	}
	t0 := time.Now()
	st, err := synth.Write(out, synth.Options{People: *n, Seed: *seed})
	if err != nil {
		fmt.Fprintf(stderr, "entitlements bench: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "generated %d people, %d files in %s (%s)\n", st.People, st.Files, time.Since(t0).Round(time.Millisecond), out)
	// The people file name is relative to the working directory, as in the reference.
	wd, _ := os.Getwd()
	if err := os.Chdir(out); err != nil {
		fmt.Fprintf(stderr, "entitlements bench: %v\n", err)
		return exitError
	}
	defer os.Chdir(wd)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	t1 := time.Now()
	repo, err := calc.Load(ctx, "config.yaml", calc.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Getenv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		printErr(stderr, err)
		return exitError
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		printErr(stderr, err)
		return exitError
	}
	total := time.Since(t1)
	runtime.ReadMemStats(&m1)
	t := res.Timings
	fmt.Fprintf(stdout, "groups: %d\nload: %s\nvalidate: %s\ncalculate: %s\ntotal: %s\nallocs: %d (%d MiB)\nheap in use: %d MiB\n",
		len(res.Groups), t.Load.Round(time.Millisecond), t.Validate.Round(time.Millisecond),
		t.Calculate.Round(time.Millisecond), total.Round(time.Millisecond),
		m1.Mallocs-m0.Mallocs, (m1.TotalAlloc-m0.TotalAlloc)>>20, m1.HeapInuse>>20)
	return exitOK
}
