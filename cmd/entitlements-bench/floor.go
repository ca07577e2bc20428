package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/entitlements-go/entitlements/calc"
)

// floorReport compares a whole calc run (load, validate, calculate, JSON written to a file)
// with the floor the hardware allows for the same work: walk the same tree, read every file,
// write as many bytes as calc writes. Both write to the same kind of sink (a file), so the
// ratio says how far the engine is from pure I/O on this machine, whatever its speed or load.
type floorReport struct {
	Calc, Floor    time.Duration // fastest of the runs
	OutBytes       int64         // calc's JSON output
	ReadBytes      int64         // bytes the floor read
	Files          int           // files the floor read
	CalcAllocs     uint64        // mallocs of the fastest calc run
	CalcAllocBytes uint64
	PeakHeap       uint64 // largest HeapInuse seen right after a calc run (before its GC)
}

// Ratio is calc time over floor time.
func (f floorReport) Ratio() float64 {
	if f.Floor <= 0 {
		return 0
	}
	return float64(f.Calc) / float64(f.Floor)
}

// runFloor runs calc and the floor alternately runs times each on the repo in dir (the
// working directory must be dir) and keeps the fastest of each: the minimum is the figure
// least disturbed by other processes.
func runFloor(ctx context.Context, dir string, runs int, opt calc.Options) (floorReport, error) {
	var rep floorReport
	sink, err := os.CreateTemp("", "entitlements-bench-out-")
	if err != nil {
		return rep, err
	}
	defer os.Remove(sink.Name())
	defer sink.Close()
	for i := 0; i < runs; i++ {
		if err := resetSink(sink); err != nil {
			return rep, err
		}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		t := time.Now()
		n, err := wholeCalc(ctx, opt, sink)
		d := time.Since(t)
		runtime.ReadMemStats(&m1)
		if err != nil {
			return rep, err
		}
		rep.PeakHeap = max(rep.PeakHeap, m1.HeapInuse)
		if rep.Calc == 0 || d < rep.Calc {
			rep.Calc, rep.OutBytes = d, n
			rep.CalcAllocs, rep.CalcAllocBytes = m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc
		}

		if err := resetSink(sink); err != nil {
			return rep, err
		}
		runtime.GC()
		t = time.Now()
		files, read, err := floor(ctx, dir, sink, rep.OutBytes)
		d = time.Since(t)
		if err != nil {
			return rep, err
		}
		rep.Files, rep.ReadBytes = files, read
		if rep.Floor == 0 || d < rep.Floor {
			rep.Floor = d
		}
	}
	return rep, nil
}

func resetSink(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}

// wholeCalc is what `entitlements calc --format json` does after flag parsing.
func wholeCalc(ctx context.Context, opt calc.Options, w io.Writer) (int64, error) {
	repo, err := calc.Load(ctx, "config.yaml", opt)
	if err != nil {
		return 0, err
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	if err := res.WriteJSON(cw); err != nil {
		return 0, err
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// floor walks dir and reads every regular file whole on one goroutine per core (calc reads
// on every core too: a serial floor would flatter the ratio), then writes out bytes to w in
// 64 KiB writes.
func floor(ctx context.Context, dir string, w io.Writer, out int64) (files int, read int64, err error) {
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	g, gctx := errgroup.WithContext(ctx)
	workers := runtime.GOMAXPROCS(0)
	sizes := make([]int64, workers)
	for k := range workers {
		g.Go(func() error {
			for i := k; i < len(paths); i += workers {
				if err := gctx.Err(); err != nil {
					return err
				}
				b, err := os.ReadFile(paths[i])
				if err != nil {
					return err
				}
				sizes[k] += int64(len(b))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	for _, n := range sizes {
		read += n
	}
	files = len(paths)
	buf := make([]byte, 1<<16)
	for out > 0 {
		n := min(out, int64(len(buf)))
		if _, err := w.Write(buf[:n]); err != nil {
			return files, read, err
		}
		out -= n
	}
	return files, read, nil
}

func printFloor(w io.Writer, rep floorReport, runs int) {
	fmt.Fprintf(w, "floor (walk + read %d files, %d MiB; write %d MiB): %s\n", rep.Files, rep.ReadBytes>>20,
		rep.OutBytes>>20, rep.Floor.Round(time.Millisecond))
	fmt.Fprintf(w, "calc (load + validate + calculate + write JSON, %d MiB): %s, %d allocs (%d MiB), heap after run %d MiB\n",
		rep.OutBytes>>20, rep.Calc.Round(time.Millisecond), rep.CalcAllocs, rep.CalcAllocBytes>>20, rep.PeakHeap>>20)
	fmt.Fprintf(w, "ratio calc/floor: %.2f (fastest of %d runs each; goal <= 2)\n", rep.Ratio(), runs)
}
