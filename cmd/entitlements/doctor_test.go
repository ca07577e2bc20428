package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/providers/github/fakegithub"
)

// doctorRepo writes a config repo with one github_org OU (credential keys as given) and,
// when auditor is set, a GitRepo auditor with that repo_url; it returns the config path.
func doctorRepo(t *testing.T, addr, keys, auditor string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := `configuration_path: ./defs
groups:
  org:
    type: github_org
    org: acme
    base: ou=org,ou=GitHub,dc=example,dc=net
    addr: ` + addr + "\n" + keys + `people:
  y:
    type: yaml
    config: {filename: people.yaml}
people_data_source: y
`
	if auditor != "" {
		cfg += "auditors:\n  - auditor_class: GitRepo\n    checkout_directory: " + filepath.Join(dir, "checkout") +
			"\n    commit_message: audit\n    git_name: e\n    git_email: e@example.net\n    repo_url: " + auditor + "\n"
	}
	files := map[string]string{"config.yaml": cfg, "people.yaml": "alice: {}\n",
		"defs/org/admin.txt": "username = alice\n", "defs/org/member.txt": "metadata_no_conditions_ok = true\n"}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "config.yaml")
}

// Issue 24 item 3: doctor checks each target without writing: a good target exits 0 with
// one OK line; each problem it names exits 1 with the fix in words.
func TestDoctor(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_APP_KEY", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})))
	bare := filepath.Join(t.TempDir(), "log.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", bare).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	const token = "    token: tok-doctor\n"
	const app = "    app_id: 4242\n    private_key: <%= ENV[\"TEST_APP_KEY\"] %>\n"
	for _, tc := range []struct {
		name    string
		opt     fakegithub.Options
		setup   func(f *fakegithub.Server)
		keys    string
		auditor string
		code    int
		want    []string
	}{
		{name: "good token", opt: fakegithub.Options{Token: "tok-doctor", TokenUser: "root"}, keys: token, auditor: bare, code: exitOK,
			want: []string{"OK   org (github_org): credential: token of user root; permissions: role admin in acme; rate limit: ", "; clock: skew ",
				"OK   GitRepo " + bare + " (audit): remote: reachable"}},
		{name: "good app", opt: fakegithub.Options{}, keys: app, code: exitOK,
			want: []string{"OK   org (github_org): credential: GitHub App 4242, installation on acme; permissions: Members: write"}},
		{name: "token refused", opt: fakegithub.Options{Token: "other", TokenUser: "root"}, keys: token, code: exitError,
			want: []string{"FAIL org (github_org): credential: GitHub refused the token:", "give a valid token"}},
		{name: "not an owner", opt: fakegithub.Options{Token: "tok-doctor", TokenUser: "bob"}, keys: token, code: exitError,
			want: []string{"FAIL org (github_org): permissions: bob is a member of acme, not an owner: make the token's user an owner"}},
		{name: "app lacks Members write", opt: fakegithub.Options{}, keys: app, code: exitError,
			setup: func(f *fakegithub.Server) { f.Install(4242, "acme", map[string]string{"members": "read"}) },
			want:  []string{"FAIL org (github_org): permissions:", "Members to Read and write"}},
		{name: "rate limit used up", opt: fakegithub.Options{Token: "tok-doctor", TokenUser: "root", RateLimit: 2}, keys: token, code: exitError,
			want: []string{"FAIL org (github_org): rate limit: less than a tenth of the rate limit is left", "give the OU a GitHub App"}},
		{name: "clock skew", opt: fakegithub.Options{Token: "tok-doctor", TokenUser: "root", Now: func() time.Time { return time.Now().Add(10 * time.Minute) }},
			keys: token, code: exitError,
			want: []string{"FAIL org (github_org): clock: this machine's clock is off by 10m0s from GitHub's: synchronise it (NTP)"}},
		{name: "audit remote unreachable", opt: fakegithub.Options{Token: "tok-doctor", TokenUser: "root"}, keys: token,
			auditor: filepath.Join(t.TempDir(), "nothing.git"), code: exitError,
			want: []string{"OK   org (github_org)", "(audit): remote: git ls-remote:", "check the URL, the SSH key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakegithub.New(tc.opt)
			defer f.Close()
			f.AddOrg("acme")
			f.AddUsers("root", "bob", "alice")
			f.SetMember("acme", "root", "admin")
			f.SetMember("acme", "bob", "member")
			f.AddApp(4242, "entitlements-sync", &key.PublicKey)
			if tc.setup != nil {
				tc.setup(f)
			} else {
				f.Install(4242, "acme", map[string]string{"members": "write"})
			}
			cfg := doctorRepo(t, f.APIURL(), tc.keys, tc.auditor)
			before := f.Stats()
			code, out, errOut := runCLI(t, "doctor", "--config", cfg)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if code != tc.code || t.Failed() {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
			if after := f.Stats(); after.Writes != before.Writes {
				t.Errorf("doctor wrote: %+v", after)
			}
			if strings.Contains(out+errOut, "tok-doctor") || strings.Contains(out+errOut, "PRIVATE KEY") {
				t.Errorf("a credential leaked:\n%s\n%s", out, errOut)
			}
			if tc.name == "good token" {
				_, js, _ := runCLI(t, "doctor", "--config", cfg, "--format", "json")
				var doc struct {
					OK      bool
					Targets []struct {
						Target   string
						OK       bool
						Findings []struct{ Check string }
					}
				}
				if err := json.Unmarshal([]byte(js), &doc); err != nil || !doc.OK || len(doc.Targets) != 2 || len(doc.Targets[0].Findings) != 4 {
					t.Errorf("json: %v\n%s", err, js)
				}
			}
		})
	}
}
