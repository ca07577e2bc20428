package testldap

import (
	"crypto/rand"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/internal/dn"
)

// DSOptions configures StartDS. The zero value is a server for dc=example,dc=net with 389's
// default limits.
type DSOptions struct {
	// Suffix is the naming context; default "dc=example,dc=net". Its first RDN must be dc=,
	// o= or ou=.
	Suffix string
	// LDIF holds extra entries added after the base tree (the suffix entry, ou=People and
	// ou=Groups).
	LDIF string
	// SizeLimit is nsslapd-sizelimit: the most entries one search returns, or one page of a
	// paged search (a page size above it fails with "Size limit exceeded"). 0 keeps 389's
	// default of 2000. Like every limit of 389, it does not apply to the root DN (BindDN):
	// bind as an ordinary entry to meet it.
	SizeLimit int
}

// ds389Candidates are where Debian, Fedora and source builds put the server and the
// template of its configuration (the one dscreate fills in).
var (
	ds389Candidates       = []string{"/usr/sbin/ns-slapd", "/usr/local/sbin/ns-slapd"}
	dseTmplCandidates     = []string{"/usr/share/dirsrv/data/template-dse.ldif", "/usr/local/share/dirsrv/data/template-dse.ldif"}
	dsCollationCandidates = []string{"/etc/dirsrv/config/slapd-collations.conf", "/usr/local/etc/dirsrv/config/slapd-collations.conf"}
)

// ds389ReadyTimeout: 389 needs a few seconds to start (it calibrates its password hashing and
// sizes its caches), more on a loaded machine.
const ds389ReadyTimeout = 60 * time.Second

// StartDS starts a 389 Directory Server for the test and registers t.Cleanup to stop it.
// BindDN is the root DN "cn=Directory Manager".
//
// dscreate, 389's installer, insists on an instance under /etc/dirsrv and starts and stops
// the server several times (about 20 s); instead the configuration is rendered from the
// template dscreate uses (template-dse.ldif, shipped with the server) into the test's temp
// dir, with the backend of the suffix included, and ns-slapd runs in the foreground as the
// current user, listening on 127.0.0.1 only. No TLS: the TLS paths are covered
// against slapd and Samba. Without ns-slapd it skips (fails under CI=true), like Start.
func StartDS(t testing.TB, opt DSOptions) *Server {
	t.Helper()
	nsSlapd, tmpl, err := findDS()
	if err != nil {
		notInstalled(t, err, "apt-get install --no-install-recommends 389-ds-base")
	}
	suffix := opt.Suffix
	if suffix == "" {
		suffix = defaultSuffix
	}
	suffixEntry, err := suffixLDIF(suffix)
	if err != nil {
		t.Fatalf("testldap: %v", err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("testldap: %v", err)
	}
	template, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatalf("testldap: %v", err)
	}

	dir := t.TempDir()
	for _, d := range []string{"config/schema", "db", "log", "run", "lock", "tmp", "ldif", "bak", "cert"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatalf("testldap: %v", err)
		}
	}
	// 389 reads the instance's own schema directory after the system one and fails
	// confusingly when it is empty; 99user.ldif is where it keeps schema added over LDAP.
	if err := os.WriteFile(filepath.Join(dir, "config/schema/99user.ldif"),
		[]byte("dn: cn=schema\nobjectclass: top\nobjectclass: ldapSubentry\nobjectclass: subschema\ncn: schema\n"), 0o600); err != nil {
		t.Fatalf("testldap: %v", err)
	}
	// The collation plugin's config, which the template names; the plugin fails without it.
	for _, c := range dsCollationCandidates {
		if data, err := os.ReadFile(c); err == nil {
			if err := os.WriteFile(filepath.Join(dir, "config/slapd-collations.conf"), data, 0o600); err != nil {
				t.Fatalf("testldap: %v", err)
			}
			break
		}
	}

	s := &Server{
		BindDN:   "cn=Directory Manager",
		Password: "secret-dm-password",
		Suffix:   suffix,
		Dir:      dir,
		logPath:  filepath.Join(dir, "log", "errors"),
	}
	s.proc = process{
		name: "ns-slapd", path: nsSlapd, outPath: filepath.Join(dir, "ns-slapd.out"), ready: ds389ReadyTimeout,
		args: func() []string {
			return []string{"-D", filepath.Join(dir, "config"), "-i", filepath.Join(dir, "run", "ns-slapd.pid")}
		},
		// ns-slapd daemonizes unless a debug level is given, and a debug level of 0 silences
		// even its error log. Started by systemd (NOTIFY_SOCKET set) it stays in the
		// foreground and logs normally; nothing listens on the socket, and its notification
		// is lost, which it ignores.
		env: []string{"NOTIFY_SOCKET=" + filepath.Join(dir, "run", "notify")},
	}
	s.cleanupOnFailure(t)
	err = s.launch(func() error {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		s.URL = "ldap://127.0.0.1:" + strconv.Itoa(ports[0])
		// The server rewrites dse.ldif as it runs; a new attempt starts from a fresh one.
		conf, err := dseLDIF(string(template), dsParams{
			dir: dir, port: ports[0], user: u.Username, suffix: suffix,
			rootDN: s.BindDN, rootPW: s.Password, sizeLimit: opt.SizeLimit,
		})
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "config", "dse.ldif"), []byte(conf), 0o600)
	})
	if err == nil {
		err = s.addBaseTree(suffixEntry, opt.LDIF)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func findDS() (nsSlapd, tmpl string, err error) {
	if p, err := exec.LookPath("ns-slapd"); err == nil {
		nsSlapd = p
	}
	for _, p := range ds389Candidates {
		if nsSlapd != "" {
			break
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			nsSlapd = p
		}
	}
	if nsSlapd == "" {
		return "", "", errors.New("ns-slapd (389 Directory Server) not found on PATH nor in " + strings.Join(ds389Candidates, ", "))
	}
	for _, p := range dseTmplCandidates {
		if _, err := os.Stat(p); err == nil {
			return nsSlapd, p, nil
		}
	}
	return "", "", errors.New("389 Directory Server's template-dse.ldif not found in " + strings.Join(dseTmplCandidates, ", "))
}

type dsParams struct {
	dir            string
	port           int
	user, suffix   string
	rootDN, rootPW string
	sizeLimit      int
	salt           []byte // for tests; random when nil
}

var placeholder = regexp.MustCompile(`%[a-z_]+%`)

// dseLDIF fills in 389's configuration template (the %name% placeholders dscreate fills in),
// adds the settings a throwaway server wants and appends the backend of the suffix.
func dseLDIF(tmpl string, p dsParams) (string, error) {
	rootPW, err := ssha512(p.rootPW, p.salt)
	if err != nil {
		return "", err
	}
	d := func(sub string) string { return filepath.Join(p.dir, sub) }
	values := map[string]string{
		"schema_dir": d("config/schema"), "lock_dir": d("lock"), "tmp_dir": d("tmp"), "cert_dir": d("cert"),
		"ldif_dir": d("ldif"), "bak_dir": d("bak"), "run_dir": d("run"), "inst_dir": p.dir, "log_dir": d("log"),
		"config_dir": d("config"), "db_dir": d("db"), "db_home_dir": d("db"), "db_lib": "bdb",
		"fqdn": "localhost", "ds_port": strconv.Itoa(p.port), "ds_user": p.user, "rootdn": p.rootDN,
		"ds_passwd": rootPW, "ds_suffix": p.suffix,
		// No LDAPI socket: the tests bind over TCP like the tool does.
		"ldapi_enabled": "off", "ldapi": d("run/ldapi"), "ldapi_autobind": "off",
	}
	var unknown []string
	out := placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		if v, ok := values[strings.Trim(m, "%")]; ok {
			return v
		}
		unknown = append(unknown, m)
		return m
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("389's template-dse.ldif has placeholders testldap does not know: %v", unknown)
	}
	config := []string{
		"nsslapd-listenhost: 127.0.0.1",
		// The root password is stored salted (SSHA512, which needs no calibration, unlike
		// the default PBKDF2); 389 refuses a clear-text rootpw.
		"nsslapd-rootpwstoragescheme: SSHA512",
		// The default follows the process's descriptor limit (20,000 slots here), which
		// costs startup time and memory for nothing.
		"nsslapd-maxdescriptors: 1024",
	}
	if p.sizeLimit > 0 {
		config = append(config, "nsslapd-sizelimit: "+strconv.Itoa(p.sizeLimit))
	}
	out, err = insertAfter(out, "dn: cn=config\n", config)
	if err != nil {
		return "", err
	}
	// Caches sized for a test, not a quarter of the machine's memory (389's autosizing), and
	// no fsync per transaction: a killed test server loses nothing the kernel holds.
	out, err = insertAfter(out, "dn: cn=config,cn=ldbm database,cn=plugins,cn=config\n", []string{
		"nsslapd-cache-autosize: 0",
		"nsslapd-dbcachesize: 16777216",
		"nsslapd-db-durable-transaction: off",
	})
	if err != nil {
		return "", err
	}
	out = strings.TrimRight(out, "\n") + "\n\n"
	out += "dn: cn=userRoot,cn=ldbm database,cn=plugins,cn=config\n" +
		"objectClass: top\nobjectClass: extensibleObject\nobjectClass: nsBackendInstance\n" +
		"cn: userRoot\nnsslapd-suffix: " + p.suffix + "\nnsslapd-cachememsize: 16777216\n\n" +
		"dn: cn=" + dn.EscapeValue(p.suffix) + ",cn=mapping tree,cn=config\n" +
		"objectClass: top\nobjectClass: extensibleObject\nobjectClass: nsMappingTree\n" +
		"cn: " + p.suffix + "\nnsslapd-state: backend\nnsslapd-backend: userRoot\n"
	return out, nil
}

// insertAfter inserts lines after the line entry (a "dn: ...\n" line), which must occur
// exactly once at the start of a line.
func insertAfter(text, entry string, lines []string) (string, error) {
	at := -1
	for i := 0; ; {
		j := strings.Index(text[i:], entry)
		if j < 0 {
			break
		}
		if k := i + j; k == 0 || text[k-1] == '\n' {
			if at >= 0 {
				return "", fmt.Errorf("389's template-dse.ldif has %q twice", strings.TrimSpace(entry))
			}
			at = k + len(entry)
		}
		i += j + len(entry)
	}
	if at < 0 {
		return "", fmt.Errorf("389's template-dse.ldif has no %q", strings.TrimSpace(entry))
	}
	return text[:at] + strings.Join(lines, "\n") + "\n" + text[at:], nil
}

// ssha512 is 389's {SSHA512}: base64(SHA-512(password + salt) + salt).
func ssha512(pw string, salt []byte) (string, error) {
	if salt == nil {
		salt = make([]byte, 8)
		if _, err := rand.Read(salt); err != nil {
			return "", err
		}
	}
	h := sha512.Sum512(append([]byte(pw), salt...))
	return "{SSHA512}" + base64.StdEncoding.EncodeToString(append(h[:], salt...)), nil
}
