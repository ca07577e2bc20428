package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/entitlements-go/entitlements/audit"
	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/termsafe"
	"github.com/entitlements-go/entitlements/providers"
)

// doctorTarget is what doctor found about one target (or one auditor).
type doctorTarget struct {
	Target   string              `json:"target"`
	Type     string              `json:"type"`
	OK       bool                `json:"ok"`
	Findings []providers.Finding `json:"findings"`
}

// cmdDoctor checks every target of the config, reading only: it builds each target's
// provider as plan would (so the credential is the one plan would use) and asks it to check
// itself (providers.Doctor); then it asks the audit log's remote whether it answers. Exit 0
// when nothing needs fixing, 1 otherwise.
func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	var c common
	c.register(fs)
	format := fs.String("format", "text", "output format: text (one line per target) or json")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "entitlements doctor: unknown --format %q (text, json)\n", *format)
		return exitUsage
	}
	s := newSession(&c)
	defer s.close()
	repo, code := load(ctx, s, stderr)
	if repo == nil {
		return code
	}
	// load opened the backends (s.options): the providers doctor asks are plan's own.
	reg := s.backends.Registry
	cfg := repo.Config()
	var out []doctorTarget
	for _, ou := range cfg.OUs {
		if ou.Spec.CalculateOnly {
			continue
		}
		d := doctorTarget{Target: ou.Key, Type: ou.Type}
		b, ok := reg.Lookup(ou.Type)
		switch p, err := newProvider(b, ok, ou); {
		case err != nil:
			d.Findings = []providers.Finding{{Check: "credential", Fix: err.Error()}}
		default:
			if doc, ok := p.(providers.Doctor); ok {
				d.Findings = doc.Doctor(ctx, &providers.Target{OU: ou})
			} else {
				d.Findings = []providers.Finding{{Check: "checks", OK: true, Skipped: true, Detail: "this type has no checks"}}
			}
		}
		out = append(out, d)
	}
	auditors, err := audit.New(cfg.Auditors, audit.Options{Logger: s.logger})
	if err != nil {
		out = append(out, doctorTarget{Target: "auditors", Type: "audit", Findings: []providers.Finding{{Check: "settings", Fix: err.Error()}}})
	}
	for _, a := range auditors {
		f := providers.Finding{Check: "remote", OK: true, Detail: "reachable"}
		if r, ok := a.(interface{ Reachable(context.Context) error }); ok {
			if err := r.Reachable(ctx); err != nil {
				f = providers.Finding{Check: "remote", Fix: fmt.Sprintf("%v: check the URL, the SSH key, and that the server's host key is in known_hosts", err)}
			}
		} else {
			f.Skipped, f.Detail = true, "this auditor has no check"
		}
		out = append(out, doctorTarget{Target: a.Description(), Type: "audit", Findings: []providers.Finding{f}})
	}
	allOK := true
	for i := range out {
		out[i].OK = true
		for _, f := range out[i].Findings {
			out[i].OK = out[i].OK && f.OK
		}
		allOK = allOK && out[i].OK
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(map[string]any{"format_version": jsonFormatVersion, "ok": allOK, "targets": out}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		for _, d := range out {
			termsafe.Fprintf(stdout, "%s\n", doctorLine(d))
		}
	}
	if !allOK {
		return exitError
	}
	return exitOK
}

// newProvider builds a target's provider as plan does, saying in words when this binary
// cannot.
func newProvider(b backend.Backend, ok bool, ou *config.OU) (providers.Provider, error) {
	if !ok || b.New == nil {
		hint := ""
		if ou.Type == "aad" {
			hint = ": build the CLI with -tags aad"
		}
		return nil, fmt.Errorf("this binary has no provider for type %q%s", ou.Type, hint)
	}
	return b.New(ou)
}

// doctorLine is one target on one line: OK or FAIL, the target, what was found, and for a
// problem the fix.
func doctorLine(d doctorTarget) string {
	status := "OK  "
	if !d.OK {
		status = "FAIL"
	}
	var found, fixes []string
	for _, f := range d.Findings {
		switch {
		case !f.OK:
			fixes = append(fixes, f.Check+": "+f.Fix)
		case f.Detail != "":
			found = append(found, f.Check+": "+f.Detail)
		}
	}
	line := fmt.Sprintf("%s %s (%s)", status, d.Target, d.Type)
	if len(fixes) > 0 {
		return line + ": " + strings.Join(fixes, "; ")
	}
	return line + ": " + strings.Join(found, "; ")
}
