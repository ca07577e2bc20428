package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/validate"
)

// commandDoc is the help of one subcommand: what it does in one line, how it is called
// (positional arguments included), and an example that works on the bundled example repo.
// Every command prints the same layout (usageFor); TestHelpLayout holds each to it.
type commandDoc struct {
	summary, synopsis, example string
}

var commandDocs = map[string]commandDoc{
	"calc": {"calculate every group and print the canonical JSON on stdout",
		"entitlements calc --config PATH [--now YYYY-MM-DD] [--ldap-groups FILE] [--format json]",
		"entitlements calc --config examples/config/entitlements.yaml --now 2026-01-01"},
	"validate": {"load and validate a config repo; print every error found, each as path:line: message",
		"entitlements validate --config PATH [--strict] [--warnings-as-errors]",
		"entitlements validate --config examples/config/entitlements.yaml --strict"},
	"explain": {"explain why a person is (or is not) in a group",
		"entitlements explain --config PATH --group OU/CN --person UID [--format text|json]",
		"entitlements explain --config examples/config/entitlements.yaml --group apps/prod-ssh --person dave"},
	"plan": {"show the changes that would bring every target in step (writes nothing but --out)",
		"entitlements plan --config PATH [--state FILE] [--format text|json|markdown] [--out PLANFILE] [--detailed-exitcode] [--force] [--max-apply-duration D]",
		"entitlements plan --config examples/config/entitlements.yaml --state examples/state.json --out plan.json"},
	"apply": {"make the planned changes, or exactly those of PLANFILE (a plan saved by plan --out, which records the flags it was made with: none is needed again); each target's plan passes the removal guard first; apply PLANFILE keeps a journal, and --resume continues a stopped one. Exit status: 0 done, 1 failed, 2 usage error, 3 stopped (resumable with --resume)",
		"entitlements apply --config PATH [--state FILE] [--yes] [--force] | PLANFILE [--allow-partial] [--journal FILE] [--resume] [--max-apply-duration D]",
		"entitlements apply plan.json"},
	"show": {"print a saved plan file (plan --out) as plan printed it, with the inputs and flags it was made with",
		"entitlements show PLANFILE [--format text|json|markdown]",
		"entitlements show plan.json --format markdown"},
	"diff": {"who gains or loses which access between two git revisions of the config repo, and why",
		"entitlements diff --config PATH --base REV|A...B [--head REV] [--merge-base] [--format text|json|markdown] [--out-full FILE] [--detailed-exitcode]",
		"entitlements diff --config examples/config/entitlements.yaml --base origin/main...HEAD --format markdown"},
	"doctor": {"check, writing nothing, that every target's credential, permissions, rate limits and clock (and the audit log's remote) are ready for plan and apply",
		"entitlements doctor --config PATH [--format text|json]",
		"entitlements doctor --config entitlements.yaml"},
	"drift": {"report what was changed on the targets outside the tool since the last apply (members added or removed, groups created or deleted; by whom and when where the service says, as LDAP does), read from the services and compared with the last applied state of " + predictiveEnv + ", apart from the changes the definitions would make; writes nothing. Exit status: 0 no drift, 1 error or a target whose drift is unknown, 2 drift with --detailed-exitcode (usage errors: 2)",
		"entitlements drift --config PATH [--state-dir DIR] [--format text|json|markdown] [--detailed-exitcode]",
		"entitlements drift --config entitlements.yaml --format markdown --detailed-exitcode"},
	"graph": {"print the dependency graph of groups (or the part around one group)",
		"entitlements graph --config PATH [--group OU/CN] [--format dot|mermaid]",
		"entitlements graph --config examples/config/entitlements.yaml --group apps/prod-ssh | dot -Tsvg > g.svg"},
	"version": {"print the module version and VCS revision of this binary (also --version)",
		"entitlements version",
		"entitlements version"},
}

// usageFor is a FlagSet's -h output, the same layout for every command: what it does, the
// usage line, the flags and an example.
func usageFor(fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		d, ok := commandDocs[fs.Name()]
		if !ok {
			// A command without a doc is a bug that TestHelpLayout catches; still say something.
			d = commandDoc{summary: "(undocumented)", synopsis: "entitlements " + fs.Name() + " [flags]"}
		}
		fmt.Fprintf(w, "%s: %s\n\nusage: %s\n\nflags:\n", fs.Name(), d.summary, d.synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintln(w, "  none")
		}
		fs.PrintDefaults()
		if d.example != "" {
			fmt.Fprintf(w, "\nexample:\n  %s\n", d.example)
		}
	}
}

// wantsHelp reports whether a command's arguments ask for its help (-h, -help, --help
// before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// helpMode marks the context of a command run for its help (see helpFor).
type helpMode struct{}

// helpFor runs a command in help mode: the flag package prints its usage on what the command
// believes is stderr, and help that was asked for goes to stdout with exit status 0. An
// unknown command stays a usage error.
func helpFor(stdout, stderr io.Writer, run func(stdout, stderr io.Writer) int) int {
	var buf bytes.Buffer
	code := run(&buf, &buf)
	if code == exitUsage && strings.Contains(buf.String(), "unknown command") {
		stderr.Write(buf.Bytes())
		return exitUsage
	}
	stdout.Write(buf.Bytes())
	return exitOK
}

// versionString is the module version and VCS state recorded in the binary's build info:
// "(devel)" for a build from a checkout, the tag for `go install ...@vX.Y.Z`.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "entitlements (no build information)"
	}
	return versionFrom(bi)
}

func versionFrom(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	out := fmt.Sprintf("entitlements %s %s", bi.Main.Path, v)
	if rev != "" {
		out += fmt.Sprintf(" (revision %s, %s%s)", rev, when, dirty)
	}
	return out + " " + bi.GoVersion
}

// warningPrinter prints warnings the way compilers do (path:line: warning: message) and
// counts them for --warnings-as-errors. Paths and messages name files of the repository:
// each is escaped on its own (termsafe), one warning is one line.
type warningPrinter struct {
	w     io.Writer
	count int
}

func (p *warningPrinter) print(w validate.Warning) {
	p.count++
	switch {
	case w.Path != "" && w.Line > 0:
		termsafe.Fprintf(p.w, "%s:%d: warning: %s\n", w.Path, w.Line, w.Msg)
	case w.Path != "":
		termsafe.Fprintf(p.w, "%s: warning: %s\n", w.Path, w.Msg)
	default:
		termsafe.Fprintf(p.w, "warning: %s\n", w.Msg)
	}
}
