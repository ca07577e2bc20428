package testldap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Launch is the entry point of programs (the e2e benchmark): every failure is an error, never a
// panic or a test stop, and a server that could not be set up is not left running.
func TestLaunchErrors(t *testing.T) {
	if _, _, err := findSlapdFiles(); err != nil {
		notInstalled(t, err, "apt-get install slapd ldap-utils")
	}
	for _, tc := range []struct {
		name string
		opt  Options
		want string
	}{
		{"bad suffix", Options{Suffix: "cn=x"}, "first RDN must be dc=, o= or ou="},
		// slapd exits at startup: the error carries its config test's verdict.
		{"bad schema", Options{ExtraSchema: "attributetype ( 1.2.3 NAME 'broken'"}, "config test"},
		// slapd runs, the base tree goes in, the caller's entry does not: slapd is stopped.
		{"bad LDIF", Options{LDIF: "dn: cn=x,ou=Nowhere,dc=example,dc=net\nobjectClass: device\ncn: x\n"}, "add cn=x,ou=Nowhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Launch(dir, tc.opt)
			if err == nil || s != nil {
				if s != nil {
					s.Stop()
				}
				t.Fatalf("Launch = %v, %v; want an error", s, err)
			}
			if !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNotInstalled) {
				t.Errorf("error %q: want %q, not ErrNotInstalled", err, tc.want)
			}
			if pids := processesIn(t, dir); len(pids) > 0 {
				t.Errorf("processes %v still run with files in %s", pids, dir)
			}
		})
	}
}

// processesIn lists the processes whose command line names dir (Linux: /proc).
func processesIn(t *testing.T, dir string) []string {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	if cmdlines == nil {
		t.Log("no /proc: not checking for leftover processes")
	}
	var pids []string
	for _, p := range cmdlines {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), dir) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// A missing slapd is ErrNotInstalled, which says what is missing and how to install it.
func TestLaunchNotInstalled(t *testing.T) {
	saved := slapdCandidates
	t.Cleanup(func() { slapdCandidates = saved })
	slapdCandidates = nil
	t.Setenv("PATH", t.TempDir())
	s, err := Launch(t.TempDir(), Options{})
	if s != nil || !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install") {
		t.Fatalf("Launch = %v, %v; want ErrNotInstalled with the install command", s, err)
	}
}

// A launched server answers until Stop, and its files stay in the caller's directory.
func TestLaunchStop(t *testing.T) {
	if _, _, err := findSlapdFiles(); err != nil {
		notInstalled(t, err, "apt-get install slapd ldap-utils")
	}
	dir := t.TempDir()
	s, err := Launch(dir, Options{LDIF: "dn: ou=Apps,ou=Groups,dc=example,dc=net\nobjectClass: organizationalUnit\nou: Apps\n"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir != dir || s.Entry(t, "ou=Apps,ou=Groups,dc=example,dc=net") == nil {
		s.Stop()
		t.Fatalf("Dir %q (want %q), or the LDIF entry is missing", s.Dir, dir)
	}
	s.Stop()
	if _, err := s.dialBind(s.URL, false, pingTimeout); err == nil {
		t.Fatal("slapd still answers after Stop")
	}
	if _, err := os.Stat(s.logPath); err != nil {
		t.Fatalf("the log is not in the caller's directory: %v", err)
	}
}
