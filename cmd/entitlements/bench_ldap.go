package main

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/entitlements-go/entitlements/internal/testldap"
)

// slapdTB lets the e2e benchmark start slapd through internal/testldap, whose API is shaped
// for tests: Fatalf and Skipf stop the start (recovered in startSlapd), Cleanup runs at Close.
// The embedded nil testing.TB only satisfies the interface's unexported method; every method
// testldap calls is defined here.
type slapdTB struct {
	testing.TB
	dir      string
	cleanups []func()
	failed   bool
}

type tbStop struct {
	msg  string
	skip bool
}

func (t *slapdTB) Helper()                   {}
func (t *slapdTB) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *slapdTB) Failed() bool              { return t.failed }
func (t *slapdTB) Logf(string, ...any)       {}
func (t *slapdTB) Log(...any)                {}
func (t *slapdTB) Errorf(f string, a ...any) { t.failed = true }
func (t *slapdTB) Fatalf(f string, a ...any) {
	t.failed = true
	panic(tbStop{msg: fmt.Sprintf(f, a...)})
}
func (t *slapdTB) Skipf(f string, a ...any) { panic(tbStop{msg: fmt.Sprintf(f, a...), skip: true}) }
func (t *slapdTB) Skip(a ...any)            { panic(tbStop{msg: fmt.Sprint(a...), skip: true}) }
func (t *slapdTB) TempDir() string {
	d, err := os.MkdirTemp(t.dir, "slapd-")
	if err != nil {
		t.Fatalf("%v", err)
	}
	return d
}

// close stops slapd and removes its files.
func (t *slapdTB) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
	t.cleanups = nil
}

// startSlapd starts a slapd with the given extra entries. skip says why LDAP cannot run (slapd
// not installed); err is a failure of an installed slapd.
func startSlapd(dir, ldif string) (srv *testldap.Server, tb *slapdTB, skip string, err error) {
	tb = &slapdTB{dir: dir}
	defer func() {
		if r := recover(); r != nil {
			st, ok := r.(tbStop)
			if !ok {
				panic(r)
			}
			tb.close()
			srv, tb = nil, nil
			if st.skip {
				skip = st.msg
			} else {
				err = fmt.Errorf("starting slapd: %s", st.msg)
			}
		}
	}()
	if !slapdInstalled() {
		return nil, nil, "slapd is not installed (apt-get install slapd)", nil
	}
	srv = testldap.Start(tb, testldap.Options{LDIF: ldif, MaxSize: 4 << 30}) // large repos: tens of MB of groups per 10,000 people
	return srv, tb, "", nil
}

// slapdInstalled looks for slapd where testldap does (PATH, then /usr/sbin), so that a missing
// slapd is a skip here and never reaches testldap's CI check.
func slapdInstalled() bool {
	if _, err := exec.LookPath("slapd"); err == nil {
		return true
	}
	_, err := os.Stat("/usr/sbin/slapd")
	return err == nil
}
