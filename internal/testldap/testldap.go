// Package testldap starts real, throwaway directory servers for integration
// tests: OpenLDAP (Start), 389 Directory Server (StartDS) and a Samba Active
// Directory domain controller (StartSamba).
//
// Real servers, rather than in-process fakes, are used so that tests
// exercise the exact protocol behaviour the entitlements tool meets in
// production: schema checking, paged results, size limits, TLS and
// StartTLS, AD's bind rules, and a server that disappears mid-run.
//
// Each server lives in its own temp dir (config, database, certs, log),
// listens only on loopback (slapd and 389 on 127.0.0.1 on free ports, Samba,
// whose ports are fixed, on an address of its own in 127.0.0.0/8), runs in
// the foreground as a child of the test binary, and is stopped by t.Cleanup
// (and, on Linux, killed by the kernel if the test binary dies first). A
// server whose package is not installed skips the test, or fails it when
// CI=true. A program that needs slapd (the e2e benchmark) calls Launch, which
// returns errors instead and leaves the directory and the Stop to the caller.
//
// Notes from Debian's slapd 2.5 (GnuTLS build): it loads an ECDSA P-256 key
// written as PKCS#8 ("BEGIN PRIVATE KEY"), so no RSA fallback is needed. It
// runs fine as root without -u/-g (it only drops privileges when asked) and
// as an ordinary user, since the ports are unprivileged and all files are in
// the test's temp dir. Samba 4.17 loads the same key.
package testldap

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/internal/skipnote"
	"github.com/go-ldap/ldap/v3"
)

const (
	defaultSuffix = "dc=example,dc=net"
	// readyTimeout bounds how long Start/Restart wait for slapd to accept
	// a bind; it normally takes well under a second.
	readyTimeout = 10 * time.Second
	// stopTimeout bounds the graceful shutdown before escalating to SIGKILL.
	stopTimeout = 10 * time.Second
	// opTimeout bounds each LDAP request made by the helpers so a wedged
	// server fails the test instead of hanging it.
	opTimeout = 30 * time.Second
	// pingTimeout bounds one readiness probe: while slapd is starting, a
	// probe must not block long, or an early exit would go unnoticed.
	pingTimeout = 2 * time.Second
	// startAttempts: a port picked by listening on :0 and closing can be
	// taken by someone else before slapd binds it; pick fresh ports and retry.
	startAttempts = 4
)

// Options configures Start. The zero value is a plain-LDAP server for
// dc=example,dc=net.
type Options struct {
	// Suffix is the naming context; default "dc=example,dc=net". Its first
	// RDN must be dc=, o= or ou= so that the suffix entry can be created.
	Suffix string
	// TLS also listens on ldaps:// with a freshly generated CA and server
	// certificate for 127.0.0.1/localhost, and enables StartTLS on the plain
	// port.
	TLS bool
	// LDIF holds extra entries (content records, RFC 2849) added after the
	// base tree: the suffix entry, ou=People and ou=Groups always exist.
	LDIF string
	// ExtraSchema is additional schema in slapd.conf syntax (attributetype,
	// objectclass, objectidentifier lines), loaded after core, cosine, nis,
	// inetorgperson and the built-in entitlements schema (the multi-valued
	// DN attribute shellentitlements and the AUXILIARY objectclass
	// entitlementsPerson that MAYs it).
	ExtraSchema string
	// MaxSize is the MDB database's size limit in bytes. Default 64 MiB (tens of thousands
	// of small entries); benchmarks with large groups need more.
	MaxSize int64
	// Access holds the database's access directives in slapd.conf syntax ("access to *
	// by dn.exact=... write by * read"). Default none: everyone reads, only the rootdn
	// (BindDN) writes. Tests of changes made by another identity than the tool's give
	// that identity write access here.
	Access string
}

// Server is a running (or stopped) directory server: slapd (Start), 389
// Directory Server (StartDS) or a Samba AD DC (StartSamba). The exported
// fields are fixed for the server's lifetime, including across Restart.
type Server struct {
	URL      string // ldap://127.0.0.1:PORT
	TLSURL   string // ldaps://127.0.0.1:PORT2 when Options.TLS, else ""
	CAFile   string // PEM of the CA that signed the server cert (when TLS)
	BindDN   string // rootdn, e.g. cn=admin,dc=example,dc=net
	Password string // rootpw (plain text)
	Suffix   string
	Dir      string // temp dir with the server's config, database, certs and logs

	proc    process
	host    string // the address it listens on when not 127.0.0.1 (Samba)
	logPath string // the log whose tail explains a failure
	caPool  *x509.CertPool

	mu    sync.Mutex
	cmd   *exec.Cmd
	done  chan struct{} // closed when cmd has exited
	exit  error         // cmd.Wait result, valid after done is closed
	runs  int
	logAt int64 // offset in slapd.log where the current run's output starts
	// logShown records that a failure message already carried the log
	// tail, so the cleanup does not print it twice.
	logShown bool
}

// process is what differs between the server programs a Server runs.
type process struct {
	name    string          // "slapd", "ns-slapd", "samba": for messages
	path    string          // the executable
	args    func() []string // its arguments for one run (ports may change between attempts)
	env     []string        // added to the test's environment
	outPath string          // where its stdout and stderr go
	// ready bounds the wait for a bind after each start.
	ready time.Duration
	// adminTLS makes the helpers (Dial, Add, Search, Entry) bind over TLSURL: Samba refuses
	// simple binds in clear text.
	adminTLS bool
	// check explains an exit during startup (slapd's config test), or is nil.
	check func() string
}

// adminURL is the URL the helpers bind to.
func (s *Server) adminURL() string {
	if s.proc.adminTLS {
		return s.TLSURL
	}
	return s.URL
}

// Start starts slapd for the test and registers t.Cleanup to stop it.
//
// Without slapd it calls t.Skip, unless the environment has CI=true: CI
// installs slapd precisely so these tests run, and a silent skip there would
// hide a broken install step.
func Start(t testing.TB, opt Options) *Server {
	t.Helper()
	if _, _, err := findSlapdFiles(); err != nil {
		notInstalled(t, err, "apt-get install slapd ldap-utils")
	}
	// TempDir is registered before our cleanup, so cleanups (LIFO) stop
	// slapd before its directory is removed.
	s, err := Launch(t.TempDir(), opt)
	if err != nil {
		t.Fatal(err)
	}
	s.cleanupOnFailure(t)
	return s
}

// ErrNotInstalled is wrapped by the error of Launch when slapd or its schema
// files are missing: a program may then go on without LDAP, where a broken
// install is a failure.
var ErrNotInstalled = errors.New("testldap: not installed")

// notInstalledError is a missing program or file; it is ErrNotInstalled and
// says what is missing.
type notInstalledError struct{ err error }

func (e notInstalledError) Error() string        { return "testldap: " + e.err.Error() }
func (e notInstalledError) Unwrap() error        { return e.err }
func (e notInstalledError) Is(target error) bool { return target == ErrNotInstalled }

// findSlapdFiles finds slapd and the OpenLDAP schema directory.
func findSlapdFiles() (slapd, schemaDir string, err error) {
	slapd, err = findSlapd()
	if err != nil {
		return "", "", err
	}
	schemaDir, err = findSchemaDir()
	return slapd, schemaDir, err
}

// Launch starts slapd with its config, database, certificates and log in dir
// (an existing directory, which the caller removes after Stop) and returns it
// once the administrator can bind and the base tree is in. The caller stops it
// with Stop. On error nothing is left running; a missing slapd is an error
// that wraps ErrNotInstalled. Start is Launch for tests; programs (the e2e
// benchmark) call Launch and decide what a missing slapd means.
func Launch(dir string, opt Options) (*Server, error) {
	slapd, schemaDir, err := findSlapdFiles()
	if err != nil {
		return nil, notInstalledError{err}
	}
	suffix := opt.Suffix
	if suffix == "" {
		suffix = defaultSuffix
	}
	suffixEntry, err := suffixLDIF(suffix)
	if err != nil {
		return nil, fmt.Errorf("testldap: %w", err)
	}

	s := &Server{
		BindDN:   "cn=admin," + suffix,
		Password: "secret",
		Suffix:   suffix,
		Dir:      dir,
		logPath:  filepath.Join(dir, "slapd.log"),
	}
	confPath := filepath.Join(dir, "slapd.conf")
	s.proc = process{
		name: "slapd", path: slapd, outPath: s.logPath, ready: readyTimeout,
		args: func() []string {
			urls := s.URL + "/"
			if s.TLSURL != "" {
				urls += " " + s.TLSURL + "/"
			}
			// -d keeps slapd in the foreground (a child we can signal and wait for) and logs
			// to stderr; 256 is "stats": one line per connection and operation, enough to
			// debug a failing test without flooding.
			return []string{"-f", confPath, "-h", urls, "-d", "256"}
		},
		// slapd at the "stats" log level exits on a bad config (e.g. a typo in ExtraSchema)
		// without saying why, while "config" level would log every schema line: its config
		// test mode (slaptest) says it.
		check: func() string {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, slapd, "-Tt", "-u", "-f", confPath).CombinedOutput()
			if err == nil {
				return ""
			}
			return "; config test (slapd -Tt -u -f " + confPath + "): " + strings.TrimSpace(string(out))
		},
	}

	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o700); err != nil {
		return nil, fmt.Errorf("testldap: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "entitlements.schema"), []byte(entitlementsSchema), 0o644); err != nil {
		return nil, fmt.Errorf("testldap: %w", err)
	}
	if opt.ExtraSchema != "" {
		if err := os.WriteFile(filepath.Join(dir, "extra.schema"), []byte(opt.ExtraSchema+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("testldap: %w", err)
		}
	}
	params := confParams{
		dir: dir, schemaDir: schemaDir, moduleDir: findModuleDir(),
		suffix: suffix, rootDN: s.BindDN, rootPW: s.Password,
		extraSchema: opt.ExtraSchema != "", maxSize: opt.MaxSize, access: opt.Access,
	}
	if opt.TLS {
		files, err := writeTLSFiles(dir)
		if err != nil {
			return nil, fmt.Errorf("testldap: generating TLS certificates: %w", err)
		}
		params.tls = files
		s.CAFile = files.caCert
		s.caPool = x509.NewCertPool()
		s.caPool.AppendCertsFromPEM(files.caPEM)
	}
	if err := os.WriteFile(confPath, []byte(slapdConf(params)), 0o600); err != nil {
		return nil, fmt.Errorf("testldap: %w", err)
	}

	err = s.launch(func() error {
		ports, err := freePorts(1 + btoi(opt.TLS))
		if err != nil {
			return err
		}
		s.URL = "ldap://127.0.0.1:" + strconv.Itoa(ports[0])
		s.TLSURL = ""
		if opt.TLS {
			s.TLSURL = "ldaps://127.0.0.1:" + strconv.Itoa(ports[1])
		}
		return nil
	})
	if err == nil {
		err = s.addBaseTree(suffixEntry, opt.LDIF)
	}
	if err != nil {
		return nil, s.stopAfter(err)
	}
	return s, nil
}

// stopAfter stops a server that could not be set up and returns err with the end of its log
// (unless err carries it already).
func (s *Server) stopAfter(err error) error {
	s.Stop()
	s.mu.Lock()
	shown := s.logShown
	s.mu.Unlock()
	if shown {
		return err
	}
	return fmt.Errorf("%w\n%s log tail (%s):\n%s", err, s.proc.name, s.logPath, s.currentLogTail())
}

// cleanupOnFailure registers the cleanup that stops the server, showing its log tail when
// the test failed. The caller's t.TempDir is registered before it, so cleanups (LIFO) stop
// the server before its directory is removed.
func (s *Server) cleanupOnFailure(t testing.TB) {
	t.Cleanup(func() {
		s.mu.Lock()
		shown := s.logShown
		s.mu.Unlock()
		if t.Failed() && !shown {
			t.Logf("testldap: %s log tail (%s):\n%s", s.proc.name, s.logPath, s.logTail(0, 60))
		}
		s.Stop()
	})
}

// launch starts the server and waits until it is ready. pick chooses the addresses of one
// attempt: a port picked by listening on :0 and closing can be taken by someone else
// before the server binds it, so a lost race picks again.
func (s *Server) launch(pick func() error) error {
	var lastErr error
	for attempt := 0; attempt < startAttempts; attempt++ {
		if err := pick(); err != nil {
			return fmt.Errorf("testldap: picking free ports: %w", err)
		}
		lastErr = s.startAndWait()
		if lastErr == nil || !s.lostPortRace() {
			break
		}
	}
	if lastErr != nil {
		return fmt.Errorf("testldap: starting %s: %w\n%s log tail (%s):\n%s", s.proc.name, lastErr, s.proc.name, s.logPath, s.currentLogTail())
	}
	return nil
}

// addBaseTree adds the suffix entry (unless it is ""), ou=People and ou=Groups, then the
// caller's LDIF.
func (s *Server) addBaseTree(suffixEntry, ldif string) error {
	base := "dn: ou=People," + s.Suffix + "\nobjectClass: organizationalUnit\nou: People\n\n" +
		"dn: ou=Groups," + s.Suffix + "\nobjectClass: organizationalUnit\nou: Groups\n"
	if suffixEntry != "" {
		base = suffixEntry + "\n" + base
	}
	if err := s.add(base); err != nil {
		return err
	}
	if strings.TrimSpace(ldif) != "" {
		return s.add(ldif)
	}
	return nil
}

// notInstalled skips the test, or fails it when the environment has CI=true: CI installs the
// servers precisely so these tests run, and a silent skip there would hide a broken install
// step.
func notInstalled(t testing.TB, err error, install string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("testldap: %v; CI=true so this is fatal", err)
	}
	skipnote.Skip(t, "testldap: %v; skipping LDAP integration test (%s)", err, install)
}

// Stop shuts the server down gracefully (SIGTERM, so its database is closed
// cleanly) and waits for it, escalating to SIGKILL after a bound. It is a
// no-op if the server is not running.
func (s *Server) Stop() {
	cmd, done := s.running()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Kill sends SIGKILL, simulating the server dying mid-run (no chance to
// flush or close connections gracefully). It returns once the process is gone.
func (s *Server) Kill() {
	cmd, done := s.running()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart starts the server again on the same ports with the same database,
// after Kill or Stop; a still-running server is stopped first. Clients can
// therefore keep their URLs and test reconnect logic.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	// The ports were ours a moment ago; the servers set SO_REUSEADDR, so
	// TIME_WAIT connections do not block them. Only a stranger grabbing the
	// port in between does, and then retrying briefly is all we can do.
	deadline := time.Now().Add(s.proc.ready)
	for {
		err := s.startAndWait()
		if err == nil {
			return
		}
		if !s.lostPortRace() || time.Now().After(deadline) {
			t.Fatalf("testldap: restarting %s: %v\n%s log tail (%s):\n%s", s.proc.name, err, s.proc.name, s.logPath, s.currentLogTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Dial returns a connection bound as the administrator (BindDN), closed by
// t.Cleanup: on the plain port, except for Samba, which refuses simple binds
// in clear text and is dialled on TLSURL.
func (s *Server) Dial(t testing.TB) *ldap.Conn {
	t.Helper()
	c, err := s.dialBind(s.adminURL(), true, opTimeout)
	if err != nil {
		t.Fatalf("testldap: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TLSConfig returns a client config that trusts only the server's throwaway
// CA (nil without TLS). ServerName is set to the server's address (127.0.0.1
// but for Samba) so it also works for StartTLS, where the client library
// cannot infer it; the certificate of slapd is valid for localhost as well.
func (s *Server) TLSConfig() *tls.Config {
	if s.caPool == nil {
		return nil
	}
	name := s.host
	if name == "" {
		name = "127.0.0.1"
	}
	return &tls.Config{RootCAs: s.caPool, ServerName: name, MinVersion: tls.VersionTLS12}
}

// Add adds the entries of an LDIF text (content records; see parseLDIF for
// the supported subset) as the rootdn, in order, failing the test on the
// first error.
func (s *Server) Add(t testing.TB, ldif string) {
	t.Helper()
	if err := s.add(ldif); err != nil {
		t.Fatal(err)
	}
}

// add is Add, returning the first error.
func (s *Server) add(ldif string) error {
	reqs, err := parseLDIF(ldif)
	if err != nil {
		return fmt.Errorf("testldap: %w", err)
	}
	if len(reqs) == 0 {
		return nil
	}
	c, err := s.dialBind(s.adminURL(), true, opTimeout)
	if err != nil {
		return fmt.Errorf("testldap: %w", err)
	}
	defer c.Close()
	for _, r := range reqs {
		if err := c.Add(r); err != nil {
			return fmt.Errorf("testldap: add %s: %w", r.DN, err)
		}
	}
	return nil
}

// Search returns the entries under base (subtree) matching filter, as the
// rootdn. It uses the paged-results control so it works whatever the size
// limits are. With no attrs, all user attributes are returned.
func (s *Server) Search(t testing.TB, base, filter string, attrs ...string) []*ldap.Entry {
	t.Helper()
	c, err := s.dialBind(s.adminURL(), true, opTimeout)
	if err != nil {
		t.Fatalf("testldap: %v", err)
	}
	defer c.Close()
	req := ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false, filter, attrs, nil)
	res, err := c.SearchWithPaging(req, 500)
	if err != nil {
		t.Fatalf("testldap: search base=%q filter=%q: %v", base, filter, err)
	}
	return res.Entries
}

// Entry reads one entry (base-object search, all user attributes), or
// returns nil if it does not exist.
func (s *Server) Entry(t testing.TB, dn string) *ldap.Entry {
	t.Helper()
	c, err := s.dialBind(s.adminURL(), true, opTimeout)
	if err != nil {
		t.Fatalf("testldap: %v", err)
	}
	defer c.Close()
	req := ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false, "(objectClass=*)", nil, nil)
	res, err := c.Search(req)
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return nil
	}
	if err != nil {
		t.Fatalf("testldap: read %s: %v", dn, err)
	}
	if len(res.Entries) == 0 {
		return nil
	}
	return res.Entries[0]
}

// dialBind connects to url (ldap:// or ldaps://) and, if bind,
// authenticates as the rootdn; timeout bounds the dial and each request.
func (s *Server) dialBind(url string, bind bool, timeout time.Duration) (*ldap.Conn, error) {
	opts := []ldap.DialOpt{ldap.DialWithDialer(&net.Dialer{Timeout: min(timeout, 5*time.Second)})}
	if strings.HasPrefix(url, "ldaps:") {
		opts = append(opts, ldap.DialWithTLSConfig(s.TLSConfig()))
	}
	c, err := ldap.DialURL(url, opts...)
	if err != nil {
		return nil, err
	}
	c.SetTimeout(timeout)
	if bind {
		if err := c.Bind(s.BindDN, s.Password); err != nil {
			c.Close()
			return nil, fmt.Errorf("bind %s at %s: %w", s.BindDN, url, err)
		}
	}
	return c, nil
}

// running returns the live process, if any.
func (s *Server) running() (*exec.Cmd, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil, nil
	}
	select {
	case <-s.done:
		return nil, nil
	default:
		return s.cmd, s.done
	}
}

// startAndWait launches the server on s.URL/s.TLSURL and waits until the
// administrator can bind (and, with TLS, an ldaps handshake verifies against
// the CA).
func (s *Server) startAndWait() error {
	if cmd, _ := s.running(); cmd != nil {
		return fmt.Errorf("%s is already running", s.proc.name)
	}
	outf, err := os.OpenFile(s.proc.outPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer outf.Close() // the child keeps its own descriptor
	var logAt int64
	if st, err := os.Stat(s.logPath); err == nil {
		logAt = st.Size()
	}
	args := s.proc.args()

	s.mu.Lock()
	s.runs++
	s.logAt = logAt
	fmt.Fprintf(outf, "=== testldap run %d: %s %q at %s ===\n", s.runs, s.proc.name, args, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(s.proc.path, args...)
	cmd.Dir = s.Dir
	if len(s.proc.env) > 0 {
		cmd.Env = append(os.Environ(), s.proc.env...)
	}
	cmd.Stdout = outf
	cmd.Stderr = outf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("exec %s: %w", s.proc.path, err)
	}
	done := make(chan struct{})
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.exit = err
		s.mu.Unlock()
		close(done)
	}()

	deadline := time.Now().Add(s.proc.ready)
	var lastErr error
	for {
		select {
		case <-done:
			s.mu.Lock()
			err := s.exit
			s.mu.Unlock()
			if s.lostPortRace() {
				return fmt.Errorf("%s exited during startup (%v): port in use", s.proc.name, err)
			}
			why := ""
			if s.proc.check != nil {
				why = s.proc.check()
			}
			return fmt.Errorf("%s exited during startup (%v)%s", s.proc.name, err, why)
		default:
		}
		lastErr = s.ping()
		if lastErr == nil {
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("%s not ready after %s: %w", s.proc.name, s.proc.ready, lastErr)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (s *Server) ping() error {
	c, err := s.dialBind(s.adminURL(), true, pingTimeout)
	if err != nil {
		return err
	}
	c.Close()
	if s.TLSURL != "" && !s.proc.adminTLS {
		c, err := s.dialBind(s.TLSURL, false, pingTimeout)
		if err != nil {
			return fmt.Errorf("ldaps: %w", err)
		}
		c.Close()
	}
	return nil
}

// lostPortRace reports whether the last run failed because a port was taken.
func (s *Server) lostPortRace() bool {
	s.mu.Lock()
	at := s.logAt
	s.mu.Unlock()
	tail := s.logTail(at, 40)
	for _, m := range []string{
		"Address already in use", "errno=98", // slapd
		"address is in use",                    // ns-slapd (NSPR)
		"NT_STATUS_ADDRESS_ALREADY_ASSOCIATED", // samba
	} {
		if strings.Contains(tail, m) {
			return true
		}
	}
	return false
}

// currentLogTail returns the end of the current run's log for a failure
// message.
func (s *Server) currentLogTail() string {
	s.mu.Lock()
	at := s.logAt
	s.logShown = true
	s.mu.Unlock()
	return s.logTail(at, 40)
}

// logTail returns the last n lines of the server's log from offset on.
func (s *Server) logTail(offset int64, n int) string {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	if offset > 0 && offset <= int64(len(data)) {
		data = data[offset:]
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePorts reserves n distinct loopback ports by listening on :0, then
// releases them for slapd. All listeners are held until every port is
// known so the kernel cannot hand out the same port twice.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// suffixLDIF builds the suffix entry; its structural class depends on the
// naming attribute of the first RDN.
func suffixLDIF(suffix string) (string, error) {
	dn, err := ldap.ParseDN(suffix)
	if err != nil || len(dn.RDNs) == 0 || len(dn.RDNs[0].Attributes) != 1 {
		return "", fmt.Errorf("invalid suffix %q: %v", suffix, err)
	}
	a := dn.RDNs[0].Attributes[0]
	switch strings.ToLower(a.Type) {
	case "dc":
		return fmt.Sprintf("dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: %s\no: %s\n", suffix, a.Value, a.Value), nil
	case "o":
		return fmt.Sprintf("dn: %s\nobjectClass: organization\no: %s\n", suffix, a.Value), nil
	case "ou":
		return fmt.Sprintf("dn: %s\nobjectClass: organizationalUnit\nou: %s\n", suffix, a.Value), nil
	}
	return "", fmt.Errorf("suffix %q: first RDN must be dc=, o= or ou=", suffix)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
