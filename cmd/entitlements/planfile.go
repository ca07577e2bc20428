package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/providers"
	"github.com/entitlements-go/entitlements/review/gitfs"
)

// recordedFlags shape a plan: plan --out records them in the plan file, and apply PLANFILE
// runs with them, so that applying needs no other flag (given again, each must match).
var recordedFlags = []string{"config", "now", "state", "ldap-groups", "strict", "ignore-expirations",
	"allow-empty-people", "allow-symlinks-outside", "force", "max-removal-share", "max-deleted-groups",
	"max-group-removal-share", "max-total-removal-share", "max-people-loss-share"}

// pathFlags name files: they are recorded relative to the repo root (the git work tree around
// the current directory, or the current directory), so that a plan made in one checkout applies
// in another.
var pathFlags = map[string]bool{"config": true, "state": true, "ldap-groups": true}

// workRoot is the top of the git work tree around the current directory, or the current
// directory outside one.
func workRoot(ctx context.Context) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if repo, err := gitfs.Open(ctx, wd); err == nil {
		defer repo.Close()
		return repo.Top(), nil
	}
	return wd, nil
}

// recordPath is a path as a plan file records it: relative to root when inside it, else
// absolute.
func recordPath(root, p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel), nil
	}
	return abs, nil
}

// resolvePath is a recorded path as a file name of this run.
func resolvePath(root, rec string) string {
	p := filepath.FromSlash(rec)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// planSettings records the flags of a plan (plan --out), every one of them, defaults
// included: a later binary with other defaults applies the plan as it was made. Today's date
// is written as --now when none was given (see pinNow), so that the plan applies the same
// expirations on another day.
func planSettings(ctx context.Context, fs *flag.FlagSet) (map[string]string, error) {
	root, err := workRoot(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, name := range recordedFlags {
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		v := f.Value.String()
		if pathFlags[name] && v != "" {
			if v, err = recordPath(root, v); err != nil {
				return nil, fmt.Errorf("--%s: %w", name, err)
			}
		}
		out[name] = v
	}
	return out, nil
}

// pinNow sets --now to today (UTC) when it was not given, so that the date a plan file
// records is the one its plan was calculated with.
func pinNow(fs *flag.FlagSet) {
	if f := fs.Lookup("now"); f != nil && f.Value.String() == "" {
		fs.Set("now", time.Now().UTC().Format(time.DateOnly))
	}
}

// useSettings runs apply PLANFILE with the flags its plan was made with: a recorded flag that
// is not given is set; one given again must have the recorded value (a path: name the same
// file), or the run stops, saying which differs. A recorded flag that this binary does not
// know stops the run too: the plan was shaped by something this apply cannot repeat.
func useSettings(ctx context.Context, fs *flag.FlagSet, planFile string, settings map[string]string) error {
	if len(settings) == 0 {
		return nil
	}
	root, err := workRoot(ctx)
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	names := make([]string, 0, len(settings))
	for name := range settings {
		names = append(names, name)
	}
	slices.Sort(names)
	var errs []error
	for _, name := range names {
		rec := settings[name]
		f := fs.Lookup(name)
		if f == nil || !slices.Contains(recordedFlags, name) {
			errs = append(errs, fmt.Errorf("%s records --%s=%s, which this binary does not know", planFile, name, rec))
			continue
		}
		want := rec
		if pathFlags[name] && rec != "" {
			want = resolvePath(root, rec)
		}
		if !given[name] {
			if err := fs.Set(name, want); err != nil {
				errs = append(errs, fmt.Errorf("%s: --%s=%s: %w", planFile, name, rec, err))
			}
			continue
		}
		got := f.Value.String()
		same := got == want
		if pathFlags[name] {
			same = samePath(got, want)
		}
		if !same {
			errs = append(errs, fmt.Errorf("--%s %s differs from the plan file's --%s %s (%s was made with it: give the same value, or leave the flag out)",
				name, orNone(got), name, orNone(rec), planFile))
		}
	}
	return errors.Join(errs...)
}

// orNone shows an empty flag value.
func orNone(v string) string {
	if v == "" {
		return `""`
	}
	return v
}

// samePath reports whether two file names name the same file.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return a == b
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(ia, ib)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}

// planOfSaved rebuilds a plan from its saved form, for show: the changes as reviewed, each
// target's error as recorded.
func planOfSaved(s *deploy.SavedPlan) (*deploy.Plan, error) {
	kinds := map[string]providers.ChangeKind{}
	for k := providers.CreateContainer; k <= providers.UpdatePerson; k++ {
		kinds[k.String()] = k
	}
	plan := &deploy.Plan{}
	for _, st := range s.Targets {
		tp := &deploy.TargetPlan{OU: st.OU, Type: st.Type, Fingerprint: st.Fingerprint}
		if st.Error != "" {
			tp.Err = errors.New(st.Error)
		}
		if e := st.Estimate; e != nil {
			tp.Estimate = &providers.Estimate{Writes: e.Writes, Duration: time.Duration(e.Seconds) * time.Second, Notes: e.Notes}
		}
		for _, sc := range st.Changes {
			k, ok := kinds[sc.Kind]
			if !ok {
				return nil, fmt.Errorf("target %s: unknown change kind %q", st.OU, sc.Kind)
			}
			c := &providers.Change{Kind: k, OU: st.OU, DN: sc.DN, Add: sc.Add, Remove: sc.Remove,
				AttrsChanged: sc.Attrs, Person: sc.Person, Attribute: sc.Attribute, Values: sc.Values,
				Current: &providers.Group{DN: sc.DN}, Desired: &providers.Group{DN: sc.DN}}
			if sc.Description != nil {
				c.DescriptionChanged = true
				c.Current.Description, c.Desired.Description = sc.Description[0], sc.Description[1]
			}
			for _, cv := range sc.Covered {
				c.Covered = append(c.Covered, providers.Cover{Member: cv.Member, By: &providers.Change{OU: cv.OU, DN: cv.DN}})
			}
			tp.Changes = append(tp.Changes, c)
		}
		plan.Targets = append(plan.Targets, tp)
	}
	return plan, nil
}

// cmdShow prints a plan file as plan printed it (text, markdown), or the file itself (json),
// with what it was made from.
func cmdShow(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	format := fs.String("format", "text", "output format: text, json or markdown")
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	var planFile string
	if fs.NArg() > 0 {
		planFile = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return exitUsage
		}
	}
	switch {
	case planFile == "" || fs.NArg() > 0:
		fmt.Fprintln(stderr, "entitlements show: one PLANFILE is required")
		return exitUsage
	case !slices.Contains([]string{"text", "json", "markdown"}, *format):
		fmt.Fprintf(stderr, "entitlements show: unknown --format %q (text, json, markdown)\n", *format)
		return exitUsage
	}
	rf := reviewFlags{planFile: planFile}
	saved, err := rf.readSaved()
	if err != nil {
		fmt.Fprintf(stderr, "entitlements show: %s: %v\n", planFile, err)
		return exitError
	}
	if *format == "json" {
		if _, err := saved.WriteTo(stdout); err != nil {
			fmt.Fprintf(stderr, "entitlements show: %v\n", err)
			return exitError
		}
		return exitOK
	}
	plan, err := planOfSaved(saved)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements show: %s: %v\n", planFile, err)
		return exitError
	}
	if *format == "text" {
		w := termsafe.NewWriter(stdout)
		fmt.Fprintf(w, "Plan file %s (version %d)\n", planFile, saved.Version)
		from := "config digest " + short(saved.Inputs.Config) + ", people digest " + short(saved.Inputs.People)
		if saved.Inputs.Revision != "" {
			from = "revision " + saved.Inputs.Revision + ", " + from
		}
		fmt.Fprintf(w, "Made from: %s\n", from)
		if len(saved.Settings) > 0 {
			var flags []string
			for _, name := range recordedFlags {
				if v, ok := saved.Settings[name]; ok && v != "" {
					flags = append(flags, "--"+name+" "+v)
				}
			}
			fmt.Fprintf(w, "Made with: %s\n", strings.Join(flags, " "))
		}
	}
	if err := writePlan(stdout, *format, plan, false); err != nil {
		fmt.Fprintf(stderr, "entitlements show: %v\n", err)
		return exitError
	}
	if *format == "text" {
		writeEstimates(stdout, plan)
	}
	return exitOK
}

// short abbreviates a digest for a message.
func short(s string) string { return s[:min(len(s), 12)] }
