// Package gitsafe runs the git binary on repositories whose content, and possibly whose own
// configuration, others wrote: the audit log checkout (reused between runs, perhaps restored
// from a CI cache) and the config repo that `diff` reads. git reads settings from the
// repository's .git/config, from the user's and the system's config files and from GIT_*
// environment variables, and several settings name a program that git then runs
// (core.fsmonitor on every index refresh, remote.<name>.uploadpack for a local remote, a
// credential helper, a hook, an ext:: URL reached through url.<base>.insteadOf, ...).
//
// A git command is made safe in three layers:
//
//   - Args: `-c` overrides, placed before the subcommand, switch off every such setting
//     whose name is fixed (command-line settings win over every config file);
//   - Env: the environment without any GIT_* variable of the caller (no GIT_DIR, GIT_SSH,
//     GIT_CONFIG_PARAMETERS, GIT_EXEC_PATH leaking in), with the system and user config
//     files ignored and prompts off;
//   - CheckConfig: the settings that cannot be overridden by name (a filter or diff driver has
//     a name of the repository's choosing, includes pull in other files, url rewrites and
//     core.worktree redirect git elsewhere) are refused when the repository's own config
//     sets them.
//
// Command puts the first two together and runs git in its own process group, which is
// ended with git (and its ssh) when the context is.
//
// Callers that produce patches also pass --no-ext-diff and --no-textconv to git diff.
package gitsafe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// overrides are the command-line settings of Args, as key=value.
var overrides = []string{
	// Programs git would run itself.
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"core.sshCommand=ssh", // GIT_SSH_COMMAND, set by a caller that needs its own, wins
	"core.askPass=",       // empty: no askpass program (and GIT_TERMINAL_PROMPT=0: no prompt)
	"core.editor=false",
	"sequence.editor=false",
	"core.pager=cat",
	"credential.helper=", // empty clears every helper, URL-specific ones included
	"diff.external=",     // empty: a patch fails loudly rather than run a program
	// Signing runs gpg (or gpg.program).
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"push.gpgSign=false",
	"log.showSignature=false",
	// Transports: ext:: runs any command and git:// may go through core.gitProxy.
	"protocol.allow=never",
	"protocol.file.allow=always",
	"protocol.ssh.allow=always",
	"protocol.https.allow=always",
	"protocol.http.allow=always",
	// No submodule is fetched or checked out (each has a config of its own).
	"submodule.recurse=false",
	"fetch.recurseSubmodules=false",
	"push.recurseSubmodules=no",
	// No background gc or maintenance outliving the command.
	"gc.auto=0",
	"maintenance.auto=false",
}

// Args returns the `-c key=value` options (and --no-pager) to put between the git binary and
// the subcommand. The slice is new on every call.
func Args() []string {
	out := make([]string, 0, 2*len(overrides)+1)
	out = append(out, "--no-pager")
	for _, o := range overrides {
		out = append(out, "-c", o)
	}
	return out
}

// neutralEnv are the variables Env adds.
var neutralEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_ATTR_NOSYSTEM=1",
	"GIT_TERMINAL_PROMPT=0",
	"GIT_NO_REPLACE_OBJECTS=1",
	"GIT_PROTOCOL_FROM_USER=0",
	"LC_ALL=C",
}

// Env returns environ (os.Environ() when nil) without its GIT_* variables and LC_ALL, plus
// the neutral settings: no system or user (global) config file, no system attributes file,
// no terminal prompt, replace refs ignored, messages in English. A caller that needs a
// variable of its own (GIT_SSH_COMMAND, GIT_DIR) appends it to the result.
func Env(environ []string) []string {
	if environ == nil {
		environ = os.Environ()
	}
	out := make([]string, 0, len(environ)+len(neutralEnv))
	for _, kv := range environ {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, neutralEnv...)
}

// WaitDelay is how long Command's git gets to exit after the context ended and its process
// group was sent SIGTERM, before it is killed.
const WaitDelay = 5 * time.Second

// Command returns the command running git (the binary, "git" when empty) with args in dir,
// with Args before args and Env as its environment. It runs in a process group of its own:
// when ctx ends the whole group (git, and the ssh or helper it started) gets SIGTERM, then
// git is killed after WaitDelay. Without that, a cancelled run would leave ssh running.
func Command(ctx context.Context, git, dir string, args ...string) *exec.Cmd {
	if git == "" {
		git = "git"
	}
	cmd := exec.CommandContext(ctx, git, append(Args(), args...)...)
	cmd.Dir = dir
	cmd.Env = Env(nil)
	ownGroup(cmd)
	cmd.WaitDelay = WaitDelay
	return cmd
}

// UnsafeConfigError is a repository config setting that CheckConfig refuses.
type UnsafeConfigError struct {
	File string // the config file
	Key  string // as git prints it: section and name lower-cased, subsection as written
}

func (e *UnsafeConfigError) Error() string {
	return fmt.Sprintf("%s sets %s, which makes git run a program or read or write outside the repository; remove the setting (or the checkout)", e.File, e.Key)
}

// Unsafe reports whether a config key (as `git config --list` prints it) is one that Args
// cannot switch off: a setting under a name of the repository's choosing that runs a
// program (filter, diff and merge drivers, a remote helper), or one that makes git read its
// config, objects or work tree elsewhere or talk to another URL (includes, url rewrites,
// push URLs, core.worktree, worktree config), or a program setting where the first value
// git reads wins (core.gitProxy, remote.<name>.uploadpack and receivepack).
func Unsafe(key string) bool {
	section, rest, ok := strings.Cut(key, ".")
	if !ok {
		return false
	}
	section = strings.ToLower(section)
	name := strings.ToLower(rest)
	sub := ""
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, name = rest[:i], strings.ToLower(rest[i+1:])
	}
	switch section {
	case "include", "includeif":
		return true
	case "core":
		return sub == "" && slices.Contains([]string{"worktree", "gitproxy", "alternaterefscommand"}, name)
	case "extensions":
		return name == "worktreeconfig"
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "diff":
		return sub != "" && (name == "command" || name == "textconv")
	case "merge":
		return sub != "" && name == "driver"
	case "url":
		return name == "insteadof" || name == "pushinsteadof"
	case "remote":
		switch name {
		// uploadpack and receivepack name the program run for a local (or ssh) remote;
		// the first one git reads wins, so a command-line setting cannot override them.
		case "vcs", "pushurl", "uploadpack", "receivepack":
			return true
		}
	case "submodule":
		return name == "update"
	}
	return false
}

// CheckConfig refuses a repository whose own configuration sets what Args cannot switch off
// (see Unsafe), naming the first such key, and one whose git directory takes its config
// from elsewhere (a commondir file). gitDir is the repository's git directory (`.git` of a
// checkout). It reads the file with `git config --file`, which runs nothing.
func CheckConfig(ctx context.Context, git, gitDir string) error {
	if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); err == nil {
		return fmt.Errorf("%s has a commondir file (its config and objects are elsewhere): remove the checkout", gitDir)
	}
	file := filepath.Join(gitDir, "config")
	if _, err := os.Lstat(file); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	cmd := Command(ctx, git, gitDir, "config", "--file", file, "--null", "--name-only", "--list")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("reading %s: %w: %s", file, err, strings.TrimSpace(errb.String()))
	}
	for key := range strings.SplitSeq(out.String(), "\x00") {
		if Unsafe(key) {
			return &UnsafeConfigError{File: file, Key: key}
		}
	}
	return nil
}
