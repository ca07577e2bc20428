package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/safefile"
	"github.com/entitlements-go/entitlements/review"
	"github.com/entitlements-go/entitlements/review/gitfs"
	"golang.org/x/term"
)

// exitChanges is the --detailed-exitcode answer "there are changes" (plan, diff).
const exitChanges = 2

// reviewFlags are the flags of plan and apply that tie a review to a write: saved plans,
// detailed exit codes and the confirmation.
type reviewFlags struct {
	out          string
	detailed     bool
	yes          bool
	allowPartial bool
	journal      string // apply PLANFILE's journal (default PLANFILE.journal)
	resume       bool
	planFile     string // apply's positional PLANFILE
}

func (rf *reviewFlags) register(fs *flag.FlagSet, mode string) {
	switch mode {
	case "plan":
		fs.StringVar(&rf.out, "out", "", "also write the plan to `PLANFILE` (versioned JSON), for apply PLANFILE to write exactly what was reviewed")
		fs.BoolVar(&rf.detailed, "detailed-exitcode", false, "exit 0 when there are no changes, 2 when there are, 1 on error")
		fs.BoolVar(&rf.allowPartial, "allow-partial", false, "write --out even when a target failed or was refused (the file then applies the other targets only)")
	case "apply":
		fs.BoolVar(&rf.yes, "yes", false, "apply without asking for confirmation (for scripts and CI)")
		fs.BoolVar(&rf.yes, "auto-approve", false, "alias of --yes")
		fs.BoolVar(&rf.allowPartial, "allow-partial", false, "apply the targets of PLANFILE that still match it when others do not (default: all or nothing, every target checked before the first write)")
		fs.StringVar(&rf.journal, "journal", "", "record every write of apply PLANFILE in `FILE` (default PLANFILE.journal), so that a stopped apply can be resumed")
		fs.BoolVar(&rf.resume, "resume", false, "continue a stopped apply of PLANFILE from its journal: what is already in place is skipped")
	}
}

// parse parses flags and, for apply, one positional PLANFILE (flags may follow it).
func (rf *reviewFlags) parse(fs *flag.FlagSet, mode string, args []string, stderr io.Writer) bool {
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs)
	if err := fs.Parse(args); err != nil {
		return false
	}
	if mode == "apply" && fs.NArg() > 0 {
		rf.planFile = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return false
		}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return false
	}
	if rf.planFile == "" && (rf.journal != "" || rf.resume) {
		// A journal belongs to one plan file: a run that plans afresh has nothing to resume.
		fmt.Fprintf(stderr, "entitlements %s: --journal and --resume need a PLANFILE (plan --out PLANFILE, then apply PLANFILE)\n", mode)
		return false
	}
	return true
}

// journalPath is the journal of apply PLANFILE: --journal, or next to the plan file.
func (rf *reviewFlags) journalPath() string {
	if rf.journal != "" {
		return rf.journal
	}
	return rf.planFile + ".journal"
}

// readSaved reads apply's plan file, if any.
func (rf *reviewFlags) readSaved() (*deploy.SavedPlan, error) {
	if rf.planFile == "" {
		return nil, nil
	}
	// Read like every other input: a FIFO would block the run, a huge file exhaust memory.
	data, err := safefile.Read(rf.planFile, safefile.Options{})
	if err != nil {
		return nil, err
	}
	return deploy.ReadPlan(bytes.NewReader(data))
}

// writeSaved writes plan's saved form to --out, with the flags that shaped it.
func (rf *reviewFlags) writeSaved(ctx context.Context, plan *deploy.Plan, repo *calc.Repo, fs *flag.FlagSet) error {
	if rf.out == "" {
		return nil
	}
	settings, err := planSettings(ctx, fs)
	if err != nil {
		return err
	}
	f, err := os.Create(rf.out)
	if err != nil {
		return err
	}
	in := deploy.InputsOf(repo)
	in.Revision = configRevision(ctx, repo.Config().Dir)
	saved := plan.Save(in)
	saved.Settings = settings
	if _, err := saved.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writePlan renders the plan in the chosen format; verbose adds timings and counters to text.
func writePlan(w io.Writer, format string, plan *deploy.Plan, verbose bool) error {
	switch format {
	case "json":
		return review.WritePlanJSON(w, plan)
	case "markdown":
		return review.WritePlanMarkdown(w, plan, review.MarkdownOptions{})
	default:
		review.WritePlanText(w, plan, review.PlanTextOptions{RefusalHint: overrideFlag, Verbose: verbose})
	}
	return nil
}

// pendingChanges counts the changes Apply would write and the targets they go to (a change
// that other targets' changes make entirely writes nothing).
func pendingChanges(plan *deploy.Plan) (changes, targets int) {
	for _, t := range plan.Targets {
		n := 0
		for _, c := range t.Changes {
			if !c.OnlyCovered() {
				n++
			}
		}
		if t.Err == nil && n > 0 {
			changes += n
			targets++
		}
	}
	return changes, targets
}

// errNotConfirmed is returned when apply is not confirmed.
type notConfirmed struct{ why string }

func (e notConfirmed) Error() string { return e.why }

// confirm asks on a terminal before apply writes without a plan file. Without a terminal it
// refuses: a pipeline must say --yes (or apply a reviewed plan file).
func confirm(plan *deploy.Plan, in io.Reader, tty bool, prompt io.Writer) error {
	n, m := pendingChanges(plan)
	if n == 0 {
		return nil
	}
	if !tty {
		return notConfirmed{fmt.Sprintf("refusing to apply %d change(s) to %d target(s) without confirmation: stdin is not a terminal; "+
			"pass --yes (alias --auto-approve) or apply a saved plan (plan --out PLANFILE, then apply PLANFILE)", n, m)}
	}
	fmt.Fprintf(prompt, "Apply %d changes to %d targets? [y/N] ", n, m)
	line, _ := bufio.NewReader(in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return notConfirmed{"apply cancelled: not confirmed; nothing was written"}
}

// stdinTerminal reports whether the process's stdin is an interactive terminal.
func stdinTerminal() (io.Reader, bool) {
	return os.Stdin, term.IsTerminal(int(os.Stdin.Fd()))
}

// configRevision is the git revision of the config repo for a saved plan (informational),
// or "" when the config is not in a git work tree or git is not installed.
func configRevision(ctx context.Context, dir string) string {
	repo, err := gitfs.Open(ctx, dir)
	if err != nil {
		return ""
	}
	defer repo.Close()
	rev, err := repo.Revision(ctx)
	if err != nil {
		return ""
	}
	return rev
}
