package testldap

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SambaOptions configures StartSamba. The zero value is the domain EXAMPLE.NET
// (DC=example,DC=net).
type SambaOptions struct {
	// Realm is the DNS name of the domain; default "example.net". The NetBIOS domain is its
	// first label, upper-cased.
	Realm string
	// LDIF holds extra entries added after OU=People and OU=Groups (content records only).
	LDIF string
}

const (
	// sambaProvisionTimeout bounds samba-tool domain provision: about 30 s on a 2-core machine.
	sambaProvisionTimeout = 5 * time.Minute
	sambaReadyTimeout     = 90 * time.Second
	// sambaAdminPassword meets AD's complexity rules (three of upper, lower, digit, symbol).
	sambaAdminPassword = "Entitlements-Test-1"
)

// StartSamba provisions a Samba Active Directory domain controller in the test's temp dir
// and starts it for the test; t.Cleanup stops it. The server runs only its LDAP service
// (`server services = ldap`, `samba -i -M single`), with AD's rules: simple binds in clear
// text are refused ("Strong(er) authentication required"), so it has TLS on TLSURL (and
// StartTLS on URL) with a certificate from a throwaway CA (CAFile), not Samba's own
// self-signed one, which Go refuses (negative serial number, no IP address). BindDN is the
// domain's Administrator; the helpers (Dial, Add, Search, Entry) bind over TLSURL.
//
// Samba's LDAP ports cannot be changed (389, 636, 3268 and 3269), so each server listens on
// an address of its own in 127.0.0.0/8 (Linux routes all of it to the loopback interface).
// Provisioning takes about 30 s and needs root (it sets owners and ACLs on its sysvol);
// without root, or without the packages samba, samba-ad-provision, samba-dsdb-modules and
// samba-vfs-modules, the test is skipped (failed under CI=true), like Start.
func StartSamba(t testing.TB, opt SambaOptions) *Server {
	t.Helper()
	install := "apt-get install --no-install-recommends samba samba-ad-provision samba-dsdb-modules samba-vfs-modules"
	samba, tool, err := findSamba()
	if err != nil {
		notInstalled(t, err, install)
	}
	if os.Geteuid() != 0 {
		notInstalled(t, errors.New("provisioning a Samba AD DC needs root (it sets owners and ACLs on its sysvol)"), "run as root")
	}
	realm := strings.ToLower(opt.Realm)
	if realm == "" {
		realm = "example.net"
	}
	labels := strings.Split(realm, ".")
	if len(labels) < 2 {
		t.Fatalf("testldap: realm %q needs at least two labels", opt.Realm)
	}
	dcs := make([]string, len(labels))
	for i, l := range labels {
		dcs[i] = "DC=" + l
	}

	dir := t.TempDir()
	ad := filepath.Join(dir, "ad")
	s := &Server{
		BindDN:   "CN=Administrator,CN=Users," + strings.Join(dcs, ","),
		Password: sambaAdminPassword,
		Suffix:   strings.Join(dcs, ","),
		Dir:      dir,
		logPath:  filepath.Join(dir, "samba.log"),
	}
	p := sambaParams{dir: ad, realm: strings.ToUpper(realm), domain: strings.ToUpper(labels[0])}
	t0 := time.Now()
	if err := provisionSamba(tool, p, filepath.Join(dir, "provision.log")); err != nil {
		t.Fatalf("testldap: %v", err)
	}
	t.Logf("testldap: samba-tool domain provision took %s", time.Since(t0).Round(time.Millisecond))

	confPath := filepath.Join(ad, "etc", "smb.conf")
	s.proc = process{
		name: "samba", path: samba, outPath: s.logPath, ready: sambaReadyTimeout, adminTLS: true,
		// -i: foreground, log to stdout; -M single: one process (the prefork default runs a
		// master and four workers per service).
		args: func() []string { return []string{"-i", "-M", "single", "-s", confPath, "-d", "1"} },
	}
	s.cleanupOnFailure(t)
	err = s.launch(func() error {
		ip, err := freeLoopbackAddr()
		if err != nil {
			return err
		}
		s.host = ip.String()
		s.URL, s.TLSURL = "ldap://"+s.host, "ldaps://"+s.host
		files, err := writeTLSFiles(dir, ip)
		if err != nil {
			return err
		}
		s.CAFile = files.caCert
		s.caPool = x509.NewCertPool()
		s.caPool.AppendCertsFromPEM(files.caPEM)
		p.ip, p.tls = s.host, files
		return os.WriteFile(confPath, []byte(sambaConf(p)), 0o600)
	})
	if err == nil {
		err = s.addBaseTree("", opt.LDIF)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// findSamba finds samba and samba-tool, and checks the files of the packages an AD DC needs
// besides them, whose absence samba-tool reports only halfway through a provision.
func findSamba() (samba, tool string, err error) {
	samba, err = findProgram("samba", []string{"/usr/sbin/samba", "/usr/local/samba/sbin/samba"})
	if err != nil {
		return "", "", err
	}
	tool, err = findProgram("samba-tool", []string{"/usr/bin/samba-tool", "/usr/local/samba/bin/samba-tool"})
	if err != nil {
		return "", "", err
	}
	out, err := exec.Command(samba, "-b").Output()
	if err != nil {
		return "", "", fmt.Errorf("%s -b: %w", samba, err)
	}
	paths := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ": "); ok {
			paths[k] = strings.TrimSpace(v)
		}
	}
	for _, f := range []struct{ path, pkg string }{
		{filepath.Join(paths["SETUPDIR"], "ad-schema"), "samba-ad-provision"},
		{filepath.Join(paths["MODULESDIR"], "ldb", "samba_dsdb.so"), "samba-dsdb-modules"},
		{filepath.Join(paths["MODULESDIR"], "vfs", "acl_xattr.so"), "samba-vfs-modules"},
	} {
		if _, err := os.Stat(f.path); err != nil {
			return "", "", fmt.Errorf("Samba AD DC: %s is missing (package %s)", f.path, f.pkg)
		}
	}
	return samba, tool, nil
}

func findProgram(name string, candidates []string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, p := range candidates {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH nor in %s", name, strings.Join(candidates, ", "))
}

type sambaParams struct {
	dir           string // the provision's target dir
	realm, domain string
	ip            string
	tls           *tlsFiles
}

// provisionSamba provisions the domain into p.dir, without DNS (the tests bind by address),
// with the RFC 2307 attributes, as the users run it.
func provisionSamba(tool string, p sambaParams, logPath string) error {
	ctx, cancel := context.WithTimeout(context.Background(), sambaProvisionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "domain", "provision",
		"--targetdir="+p.dir, "--realm="+p.realm, "--domain="+p.domain,
		"--server-role=dc", "--dns-backend=NONE", "--use-rfc2307",
		"--adminpass="+sambaAdminPassword, "--host-name=dc1",
		// The provision runs parts of the server; keep them out of the system's /run/samba.
		"--option=pid directory="+filepath.Join(p.dir, "run"),
		"--option=ncalrpc dir="+filepath.Join(p.dir, "run", "ncalrpc"),
	)
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(logPath, out, 0o644)
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) > 30 {
			lines = lines[len(lines)-30:]
		}
		return fmt.Errorf("samba-tool domain provision: %v\n%s", err, strings.Join(lines, "\n"))
	}
	return nil
}

// sambaConf is the server's whole smb.conf (replacing the provision's): the names and
// directories of the provision, every runtime directory inside it so that servers of
// several tests do not meet in /run/samba, only the LDAP service, on one address, with our
// certificate.
func sambaConf(p sambaParams) string {
	d := func(sub string) string { return filepath.Join(p.dir, sub) }
	var b strings.Builder
	for _, kv := range [][2]string{
		{"netbios name", "DC1"},
		{"realm", p.realm},
		{"workgroup", p.domain},
		{"server role", "active directory domain controller"},
		{"server services", "ldap"},
		{"interfaces", p.ip + "/8"},
		{"bind interfaces only", "yes"},
		{"idmap_ldb:use rfc2307", "yes"},
		{"private dir", d("private")},
		{"lock directory", p.dir},
		{"state directory", d("state")},
		{"cache directory", d("cache")},
		{"binddns dir", d("bind-dns")},
		{"pid directory", d("run")},
		{"ncalrpc dir", d("run/ncalrpc")},
		{"winbindd socket directory", d("run/winbindd")},
		{"ntp signd socket directory", d("run/ntp_signd")},
		{"log file", d("log.%m")},
		{"tls enabled", "yes"},
		{"tls keyfile", p.tls.serverKey},
		{"tls certfile", p.tls.serverCert},
		{"tls cafile", p.tls.caCert},
	} {
		fmt.Fprintf(&b, "\t%s = %s\n", kv[0], kv[1])
	}
	return "# generated by internal/testldap; throwaway test server\n[global]\n" + b.String()
}

// freeLoopbackAddr picks a random address in 127.0.0.0/8 (never 127.0.0.1) whose ports 389
// and 636 are free. Binding them needs root, which provisioning needs anyway.
func freeLoopbackAddr() (net.IP, error) {
	var last error
	for range 20 {
		ip := net.IPv4(127, byte(1+rand.IntN(254)), byte(rand.IntN(256)), byte(2+rand.IntN(253)))
		var ls []net.Listener
		ok := true
		for _, port := range []string{"389", "636", "3268", "3269"} {
			l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), port))
			if err != nil {
				last, ok = err, false
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return ip, nil
		}
	}
	return nil, fmt.Errorf("no free loopback address for Samba's fixed ports: %w", last)
}
