package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/termsafe"
)

// progress draws what a long command is doing on a terminal's stderr: the phase and its
// elapsed time, each target being read with the groups read so far (as its provider reports
// them) and its own elapsed time, and one line per target read. It is nil (and every method a
// no-op) when stderr is not a terminal, so logs and pipes get nothing, and it never writes to
// stdout.
type progress struct {
	w     io.Writer // the terminal, for the progress line and its own escape sequences
	out   io.Writer // stderr as the rest of the CLI writes it (escaping data); w when nil
	now   func() time.Time
	width int // of the terminal; 0 when unknown (lines are not shortened)

	mu     sync.Mutex
	phase  string
	start  time.Time
	active map[string]*reading
	drawn  bool
	stop   chan struct{}
	done   chan struct{}
}

// reading is a target whose read is running: the latest report and when the read started.
type reading struct {
	ev    deploy.Progress
	start time.Time
}

// isTerminal reports whether w is a character device (a terminal, not a file or a pipe).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgress(stderr io.Writer) *progress {
	tty := stderr
	if u, ok := stderr.(interface{ Unwrap() io.Writer }); ok {
		tty = u.Unwrap()
	}
	if !isTerminal(tty) {
		return nil
	}
	width, _, _ := term.GetSize(int(tty.(*os.File).Fd()))
	return &progress{w: tty, out: stderr, now: time.Now, width: width, active: map[string]*reading{}}
}

// begin shows a phase with its elapsed time until end is called.
func (p *progress) begin(phase string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.phase, p.start = phase, p.now()
	p.mu.Unlock()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
}

// end stops the phase and clears its line.
func (p *progress) end() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.stop = nil
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}

// target is the deploy.Options.Progress hook.
func (p *progress) target(ev deploy.Progress) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ev.Done {
		r := p.active[ev.OU]
		if r == nil {
			r = &reading{start: p.now()}
			p.active[ev.OU] = r
		}
		r.ev = ev
		p.draw()
		return
	}
	delete(p.active, ev.OU)
	p.clear()
	status := fmt.Sprintf("%d groups read, %d calculated", ev.Read, ev.Desired)
	if ev.Err != nil {
		status = "FAILED (see below)"
	}
	fmt.Fprint(p.w, termsafe.Escape(fmt.Sprintf("read %s (%s): %s in %s", ev.OU, ev.Type, status, ev.Elapsed.Round(time.Millisecond)))+"\n")
	p.draw()
}

func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

func (p *progress) draw() {
	if p.phase == "" {
		return
	}
	now := p.now()
	line := fmt.Sprintf("%s %s", p.phase, now.Sub(p.start).Round(100*time.Millisecond))
	if len(p.active) > 0 {
		var parts []string
		for ou, r := range p.active {
			parts = append(parts, fmt.Sprintf("%s %s, %s", ou, counts(r.ev), now.Sub(r.start).Round(100*time.Millisecond)))
		}
		slices.Sort(parts)
		line += ": reading " + strings.Join(parts, "; ")
	}
	fmt.Fprint(p.w, "\r\x1b[K"+fit(termsafe.Escape(line), p.width))
	p.drawn = true
}

// counts says how far a running read has come: out of the provider's total when it knows
// one, else next to the number of groups calculated for the target.
func counts(ev deploy.Progress) string {
	if ev.Total > 0 {
		return fmt.Sprintf("%d/%d groups read", ev.Read, ev.Total)
	}
	return fmt.Sprintf("%d groups read (%d calculated)", ev.Read, ev.Desired)
}

// fit shortens a line to the terminal's width: a line that wraps cannot be redrawn in place.
func fit(line string, width int) string {
	if width <= 1 || utf8.RuneCountInString(line) < width {
		return line
	}
	r := []rune(line)
	return string(r[:width-2]) + "…"
}

// wrap returns a writer for other stderr output (warnings, logs) that clears the progress
// line first, so the two never share a line; w itself when there is no progress.
func (p *progress) wrap(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return progressWriter{p}
}

type progressWriter struct{ p *progress }

func (pw progressWriter) Write(b []byte) (int, error) {
	pw.p.mu.Lock()
	defer pw.p.mu.Unlock()
	pw.p.clear()
	if pw.p.out != nil {
		return pw.p.out.Write(b)
	}
	return pw.p.w.Write(b)
}
