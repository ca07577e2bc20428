package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
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
	defer c.stop()
	_, res, code := calculate(ctx, &c, stderr)
	if res == nil {
		return code
	}
	ex, err := res.Explain(*group, *person)
	if err != nil {
		fmt.Fprintf(stderr, "entitlements explain: %v\n", err)
		return exitError
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ex); err != nil {
			fmt.Fprintf(stderr, "entitlements explain: %v\n", err)
			return exitError
		}
		return exitOK
	}
	ex.WriteText(stdout)
	return exitOK
}
