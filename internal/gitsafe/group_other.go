//go:build !unix

package gitsafe

import "os/exec"

// ownGroup keeps exec.CommandContext's default (the process is killed).
func ownGroup(*exec.Cmd) {}
