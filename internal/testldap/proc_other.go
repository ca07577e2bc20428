//go:build !linux

package testldap

import "syscall"

// sysProcAttr has no parent-death signal outside Linux; t.Cleanup is then the
// only thing that stops slapd.
func sysProcAttr() *syscall.SysProcAttr { return nil }
