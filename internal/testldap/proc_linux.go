//go:build linux

package testldap

import "syscall"

// sysProcAttr asks the kernel to SIGKILL slapd when the test binary dies.
// t.Cleanup does not run when `go test -timeout` panics or the binary is
// killed, and an orphaned slapd would keep its ports and temp dir busy.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
