package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/internal/termsafe"
)

func cmdExplain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	var c common
	c.register(fs)
	group := fs.String("group", "", "group key, <OU key>/<name> (e.g. pizza_teams/sre)")
	person := fs.String("person", "", "uid of the person (any letter case)")
	format := fs.String("format", "text", "output format: text or json")
	if !parseFlags(fs, args, stderr) {
		return exitUsage
	}
	if *group == "" || *person == "" {
		fmt.Fprintln(stderr, "entitlements explain: --group and --person are required")
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "entitlements explain: unknown --format %q (text, json)\n", *format)
		return exitUsage
	}
	s := newSession(&c)
	defer s.close()
	_, res, code := calculate(ctx, s, stderr)
	if res == nil {
		return code
	}
	ex, err := res.Explain(*group, *person)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements explain: %v\n", err)
		return exitError
	}
	// An unknown person is a mistake in the question, not an answer: exit 1 (the
	// explanation still goes to stdout for JSON consumers).
	code = exitOK
	if !ex.Known {
		hint := ""
		if ex.DidYouMean != "" {
			hint = fmt.Sprintf("; did you mean %q?", ex.DidYouMean)
		}
		fmt.Fprintf(stderr, "entitlements explain: %q is not in the people data%s\n", *person, hint)
		if *format != "json" {
			return exitError
		}
		code = exitError
	}
	if *format == "json" {
		enc := json.NewEncoder(termsafe.NewJSONWriter(stdout))
		enc.SetIndent("", "  ")
		doc := struct {
			Version int `json:"version"`
			*calc.Explanation
		}{jsonFormatVersion, ex}
		if err := enc.Encode(doc); err != nil {
			fmt.Fprintf(stderr, "entitlements explain: %v\n", err)
			return exitError
		}
		return code
	}
	ex.WriteText(stdout)
	return exitOK
}
