package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/entitlements-go/entitlements/backends"
	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/synth"
)

// cmdPhases generates a production-shaped repo and reports the time and allocations of each
// phase, so that speed claims come with a command anyone can rerun.
func cmdPhases(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("entitlements-bench", flag.ContinueOnError)
	// Never set here (--e2e and --apply are dispatched by run): registered so that -h names them.
	fs.Bool("e2e", false, "run the end-to-end plan benchmark instead (its flags: entitlements-bench --e2e -h)")
	fs.Bool("apply", false, "run the large-apply benchmark instead (its flags: entitlements-bench --apply -h)")
	n := fs.Int("people", 5000, "number of people in the generated repo")
	dir := fs.String("dir", "", "write the repo to `DIR` and keep it (default: a temporary directory, removed after)")
	seed := fs.Int64("seed", 1, "generator seed")
	diffRuns := fs.Int("diff", 0, "also commit the repo to git with a typical change on top (3 group files, 1 manager) and time whole-process diff of the two commits against whole-process calc, N runs each (needs git)")
	floorRuns := fs.Int("floor", 0, "also run whole calc (JSON written to a file) and the I/O floor (read every file, write as many bytes) N times each and print both and their ratio")
	cli := fs.String("cli", "", "`PATH` of the entitlements binary whose calc and diff --diff times (default: one built from this module's source with go build, with this command's build tags)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *floorRuns < 0 || *diffRuns < 0 {
		fmt.Fprintf(stderr, "entitlements-bench: --floor and --diff take a number of runs (>= 1)\n")
		return exitUsage
	}
	// The CLI is built before anything is generated, from the working directory the command
	// was started in (the module's source): a failed build costs no generation.
	bin := *cli
	if *diffRuns > 0 && bin != "" {
		// Absolute: the runs start in the generated repo.
		p, err := exec.LookPath(bin)
		if err == nil {
			p, err = filepath.Abs(p)
		}
		if err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: --cli: %v\n", err)
			return exitUsage
		}
		bin = p
	}
	if *diffRuns > 0 && bin == "" {
		tmp, err := os.MkdirTemp("", "entitlements-bench-cli-")
		if err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
			return exitError
		}
		defer os.RemoveAll(tmp)
		if bin, err = buildCLI(ctx, tmp, stderr); err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
			return exitError
		}
	}
	out := *dir
	if out == "" {
		tmp, err := os.MkdirTemp("", "entitlements-bench-")
		if err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
			return exitError
		}
		defer os.RemoveAll(tmp)
		out = tmp
	}
	t0 := time.Now()
	st, err := synth.Write(out, synth.Options{People: *n, Seed: *seed})
	if err != nil {
		fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "generated %d people, %d files in %s (%s)\n", st.People, st.Files, time.Since(t0).Round(time.Millisecond), out)
	// The people file name is relative to the working directory, as in the reference.
	wd, _ := os.Getwd()
	if err := os.Chdir(out); err != nil {
		fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
		return exitError
	}
	defer os.Chdir(wd)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	t1 := time.Now()
	opt := calc.Options{Types: backends.Types(), Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Getenv: func(string) (string, bool) { return "x", true }}
	repo, err := calc.Load(ctx, "config.yaml", opt)
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
	if *floorRuns > 0 {
		repo, res = nil, nil
		rep, err := runFloor(ctx, out, *floorRuns, opt)
		if err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
			return exitError
		}
		printFloor(stdout, rep, *floorRuns)
	}
	if *diffRuns > 0 {
		rep, err := runDiffBench(ctx, bin, out, *diffRuns)
		if err != nil {
			fmt.Fprintf(stderr, "entitlements-bench: %v\n", err)
			return exitError
		}
		printDiffBench(stdout, rep, *diffRuns)
	}
	return exitOK
}
