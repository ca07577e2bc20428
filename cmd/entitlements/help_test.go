package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// commandsOfUsage are the commands the top-level usage lists: a new command is held to the
// help layout as soon as it is listed.
func commandsOfUsage(t *testing.T) []string {
	t.Helper()
	var cmds []string
	in := false
	for line := range strings.Lines(usage) {
		switch {
		case strings.HasPrefix(line, "commands:"):
			in = true
		case in && strings.HasPrefix(line, "  "):
			cmds = append(cmds, strings.Fields(line)[0])
		case in:
			in = false
		}
	}
	if len(cmds) < 9 {
		t.Fatalf("found only %v in the usage", cmds)
	}
	return cmds
}

// flagLine is a flag as PrintDefaults prints it: the name, then a value name that is one
// word (a back-quoted phrase in a usage string once rendered as "-out entitlements apply
// PLANFILE").
var flagLine = regexp.MustCompile(`^  -[a-z0-9-]+( [A-Za-z0-9_.|-]+)?$`)

// Issue 22.4: every command's help has one layout (what it does, the usage line, the flags,
// an example), printed on stdout with exit 0 for -h, --help and help CMD alike.
func TestHelpLayout(t *testing.T) {
	for _, cmd := range commandsOfUsage(t) {
		t.Run(cmd, func(t *testing.T) {
			args := append(strings.Fields(cmd), "-h")
			code, out, errOut := runCLI(t, args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if !strings.HasPrefix(lines[0], cmd+": ") || len(lines[0]) < len(cmd)+12 {
				t.Errorf("the first line says what %s does? %q", cmd, lines[0])
			}
			want := []string{"", "usage: entitlements " + cmd, "", "flags:"}
			for i, w := range want {
				if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], w) || (w == "" && lines[i+1] != "") {
					t.Fatalf("line %d is not %q:\n%s", i+2, w, out)
				}
			}
			ex := slices.Index(lines, "example:")
			if ex < 0 || ex+1 >= len(lines) || !strings.HasPrefix(lines[ex+1], "  entitlements "+strings.Fields(cmd)[0]) || ex+2 != len(lines) {
				t.Errorf("no example at the end:\n%s", out)
			}
			if lines[ex-1] != "" {
				t.Errorf("no blank line before the example:\n%s", out)
			}
			for _, l := range lines[5 : ex-1] {
				if strings.HasPrefix(l, "  -") && !flagLine.MatchString(strings.SplitN(l, "\t", 2)[0]) {
					t.Errorf("flag line %q: its value name is not one word", l)
				}
			}
			for _, alias := range [][]string{append(strings.Fields(cmd), "--help"), append([]string{"help"}, strings.Fields(cmd)...)} {
				if code, o, _ := runCLI(t, alias...); code != exitOK || o != out {
					t.Errorf("%v: exit %d, output differs from -h:\n%s", alias, code, o)
				}
			}
		})
	}
	for cmd, want := range map[string]string{"apply": " PLANFILE", "plan": "  -out PLANFILE\n"} {
		if _, out, _ := runCLI(t, cmd, "-h"); !strings.Contains(out, want) {
			t.Errorf("%s -h lacks %q:\n%s", cmd, want, out)
		}
	}
}
