package calc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/people"
	"github.com/entitlements-go/entitlements/validate"
)

// loadWith builds a repo, lets prepare add special files, and loads it with a deadline so that
// a read that blocks (a FIFO) fails the test instead of hanging it.
func loadWith(t *testing.T, files map[string]string, prepare func(root string), opt Options) (*Repo, error) {
	t.Helper()
	root := build(t, files)
	if prepare != nil {
		prepare(root)
	}
	type out struct {
		r   *Repo
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := Load(context.Background(), filepath.Join(root, "config.yaml"), defaults(opt, root))
		done <- out{r, err}
	}()
	select {
	case o := <-done:
		return o.r, o.err
	case <-time.After(20 * time.Second):
		t.Fatal("Load did not return: a special file was opened and blocked")
		return nil, nil
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// Issue 10 items 1 and 4: only regular files are read, and every file's size is capped.
func TestSpecialAndHugeFilesRefused(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		prepare func(t *testing.T, root string)
		opt     Options
		want    error
		path    string
	}{
		{name: "FIFO group file", prepare: func(t *testing.T, root string) {
			mkfifo(t, filepath.Join(root, "ldap-config/a/x.txt"))
		}, want: validate.ErrNotRegular, path: "ldap-config/a/x.txt"},
		{name: "group file linked to /dev/zero", prepare: func(t *testing.T, root string) {
			symlink(t, "/dev/zero", filepath.Join(root, "ldap-config/a/x.txt"))
		}, opt: Options{AllowSymlinksOutside: true}, want: validate.ErrNotRegular, path: "ldap-config/a/x.txt"},
		{name: "referenced dummy-OU file linked to /dev/urandom", files: map[string]string{
			"ldap-config/a/x.txt": "group = lib/r\n"}, prepare: func(t *testing.T, root string) {
			symlink(t, "/dev/urandom", filepath.Join(root, "ldap-config/lib/r.txt"))
		}, opt: Options{AllowSymlinksOutside: true}, want: validate.ErrNotRegular, path: "ldap-config/lib/r.txt"},
		{name: "FIFO people file", prepare: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "people.yaml"))
			mkfifo(t, filepath.Join(root, "people.yaml"))
		}, want: validate.ErrNotRegular},
		{name: "people file linked to /dev/zero", prepare: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "people.yaml"))
			symlink(t, "/dev/zero", filepath.Join(root, "people.yaml"))
		}, want: validate.ErrNotRegular},
		{name: "FIFO config file", prepare: func(t *testing.T, root string) {
			os.Remove(filepath.Join(root, "config.yaml"))
			mkfifo(t, filepath.Join(root, "config.yaml"))
		}, want: validate.ErrNotRegular, path: "config.yaml"},
		{name: "group file above the size cap", files: map[string]string{
			"ldap-config/a/x.txt": strings.Repeat("username = bob\n", 100)},
			opt: Options{MaxFileSize: 1000}, want: validate.ErrFileTooLarge, path: "ldap-config/a/x.txt"},
		{name: "people file above the size cap", files: map[string]string{"ldap-config/a/x.txt": "username = bob\n"},
			opt: Options{MaxFileSize: 300}, want: validate.ErrFileTooLarge},
		{name: "config file above the size cap", opt: Options{MaxFileSize: 100}, want: validate.ErrFileTooLarge, path: "config.yaml"},
		{name: "sparse group file above the default cap", prepare: func(t *testing.T, root string) {
			if err := os.Truncate(filepath.Join(root, "ldap-config/a/x.txt"), 65<<20); err != nil {
				t.Fatal(err)
			}
		}, files: map[string]string{"ldap-config/a/x.txt": "username = bob\n"}, want: validate.ErrFileTooLarge, path: "ldap-config/a/x.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := c.files
			if files == nil {
				files = map[string]string{"ldap-config/a/y.txt": "username = bob\n"}
			}
			_, err := loadWith(t, files, func(root string) {
				if c.prepare != nil {
					c.prepare(t, root)
				}
			}, c.opt)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if c.path != "" && !strings.Contains(err.Error(), c.path+": ") {
				t.Errorf("error does not name %s: %v", c.path, err)
			}
		})
	}
}

const credential = "https://x-access-token:ghp_AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH1234@github.com"

// Issue 10 item 2: a group file that resolves outside the config tree is refused, and no
// error quotes a whole line that failed to parse.
func TestSymlinkOutsideTreeAndExcerpts(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "git-credentials")
	if err := os.WriteFile(secret, []byte(credential+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(root string) { symlink(t, secret, filepath.Join(root, "ldap-config/a/x.txt")) }

	_, err := loadWith(t, nil, link, Options{})
	if !errors.Is(err, validate.ErrOutsideTree) {
		t.Fatalf("err = %v, want ErrOutsideTree", err)
	}
	if strings.Contains(err.Error(), "ghp_") {
		t.Errorf("error quotes the credential: %v", err)
	}

	// Allowed by the option: the file is read, and its parse error quotes only an excerpt.
	_, err = loadWith(t, nil, link, Options{AllowSymlinksOutside: true})
	if err == nil || !validate.HasKind(err, validate.KindTextFile) {
		t.Fatalf("err = %v, want an unparseable line", err)
	}
	for _, leak := range []string{"ghp_", "AAAABBBB", "x-access-token:"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error leaks %q: %v", leak, err)
		}
	}

	// Links inside the tree keep working (shared files of a repo).
	_, err = loadWith(t, map[string]string{"ldap-config/lib/shared.txt": "username = bob\n"}, func(root string) {
		symlink(t, "../lib/shared.txt", filepath.Join(root, "ldap-config/a/x.txt"))
	}, Options{})
	if err != nil {
		t.Fatalf("link inside the tree: %v", err)
	}
}

func TestErrorsQuoteOnlyExcerpts(t *testing.T) {
	long := strings.Repeat("z", 500)
	for name, body := range map[string]string{
		"unparseable line":    credential + "\n",
		"long unparseable":    long + "\n",
		"semicolon predicate": "username = bob; " + long + "\n",
		"expiration":          "username = bob; expiration = " + long + "\n",
		"group reference":     "group = " + long + "\n",
		"yaml rule":           "rules:\n  username: [" + long + "]\n",
		"yaml multiple keys":  "rules:\n  username: a\n  group: " + long + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			file := "ldap-config/a/x.txt"
			if strings.HasPrefix(name, "yaml") {
				file = "ldap-config/a/x.yaml"
			}
			_, err := loadWith(t, map[string]string{file: body}, nil, Options{})
			if err == nil {
				t.Fatal("loaded")
			}
			for _, e := range err.(validate.List) {
				if len(e.Msg) > 200 || strings.Contains(e.Msg, "ghp_") {
					t.Errorf("message too long or leaking (%d bytes): %s", len(e.Msg), e.Msg)
				}
			}
		})
	}
}

// Issue 10 item 3: control characters are refused in group files (also written as YAML
// escapes) and in people data.
func TestControlCharactersRefused(t *testing.T) {
	cases := map[string]struct {
		files map[string]string
		kind  validate.Kind
	}{
		"yaml description escape": {map[string]string{"ldap-config/a/x.yaml": "description: \"a\\u0000b\"\nrules:\n  username: bob\n"}, validate.KindRuleStructure},
		"yaml username escape":    {map[string]string{"ldap-config/a/x.yaml": "rules:\n  username: \"bob\\0\"\n"}, validate.KindRuleStructure},
		"yaml metadata raw":       {map[string]string{"ldap-config/a/x.yaml": "metadata:\n  k: \"\\x01\"\nrules:\n  username: bob\n"}, validate.KindRuleStructure},
		"txt username":            {map[string]string{"ldap-config/a/x.txt": "username = bo\x00b\n"}, validate.KindTextFile},
		"people uid":              {map[string]string{"ldap-config/a/x.txt": "username = bob\n", "people.yaml": stdPeople + "\"z\\0\": {cn: Z}\n"}, validate.KindPeople},
		"people attribute":        {map[string]string{"ldap-config/a/x.txt": "username = bob\n", "people.yaml": stdPeople + "zed: {cn: \"Z\\u0007\"}\n"}, validate.KindPeople},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := loadWith(t, c.files, nil, Options{})
			if err == nil || !validate.HasKind(err, c.kind) || !strings.Contains(err.Error(), "control character") {
				t.Fatalf("err = %v, want a %s control character error", err, c.kind)
			}
		})
	}
}

// Issue 10 item 7: a people source that yields nobody fails the load unless allowed.
func TestEmptyPeopleSourceRefused(t *testing.T) {
	for name, body := range map[string]string{"empty file": "", "comments only": "# nobody\n", "empty map": "{}\n"} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"people.yaml": body, "ldap-config/a/x.txt": "username = bob\n"}
			_, err := loadWith(t, files, nil, Options{})
			if !errors.Is(err, ErrNoPeople) || !validate.HasKind(err, validate.KindPeople) {
				t.Fatalf("err = %v, want ErrNoPeople", err)
			}
			repo, err := loadWith(t, files, nil, Options{AllowEmptyPeople: true})
			if err != nil {
				t.Fatalf("allowed: %v", err)
			}
			res, err := repo.Calculate(context.Background())
			if err != nil || len(res.Group("a/x").Members) != 0 {
				t.Fatalf("allowed: %v", err)
			}
		})
	}
	// The same through a people loader (an LDAP base that returns nobody).
	files := map[string]string{"ldap-config/a/x.txt": "username = bob\n",
		"config.yaml": strings.Replace(conf{}.String(), "type: yaml", "type: ldap", 1)}
	_, err := loadWith(t, files, nil, Options{People: func(context.Context, *config.PeopleSource) ([]people.Person, error) {
		return nil, nil
	}})
	if !errors.Is(err, ErrNoPeople) {
		t.Fatalf("ldap loader: err = %v, want ErrNoPeople", err)
	}
}

func TestLDAPSnapshotOnlyRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "groups.yaml")
	mkfifo(t, fifo)
	if _, err := LoadLDAPSnapshot(fifo); !errors.Is(err, validate.ErrNotRegular) {
		t.Fatalf("err = %v", err)
	}
}

// Issue 20 item 15: the people file, the manager map and the config file itself are confined
// like group files: a symlink resolving outside the config tree (the configuration_path, the
// config file's directory, the file's own directory) is refused unless AllowSymlinksOutside.
func TestSymlinkConfinementOfEveryInput(t *testing.T) {
	outside := t.TempDir()
	for name, content := range map[string]string{"people.yaml": stdPeople, "manager-map.yaml": stdManagerMap} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mgmt := map[string]string{"ldap-config/a/m.txt": "management = alice\n"}
	for _, c := range []struct {
		name string
		link func(root string)
	}{
		{"people file", func(root string) {
			os.Remove(filepath.Join(root, "people.yaml"))
			symlink(t, filepath.Join(outside, "people.yaml"), filepath.Join(root, "people.yaml"))
		}},
		{"manager map", func(root string) {
			os.Remove(filepath.Join(root, "manager-map.yaml"))
			symlink(t, filepath.Join(outside, "manager-map.yaml"), filepath.Join(root, "manager-map.yaml"))
		}},
		{"config file", func(root string) {
			data, err := os.ReadFile(filepath.Join(root, "config.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			// The moved config keeps naming the tree's files absolutely.
			text := strings.ReplaceAll(string(data), "./ldap-config", filepath.Join(root, "ldap-config"))
			text = strings.ReplaceAll(text, "./manager-map.yaml", filepath.Join(root, "manager-map.yaml"))
			if err := os.WriteFile(filepath.Join(outside, "config.yaml"), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(root, "config.yaml"))
			symlink(t, filepath.Join(outside, "config.yaml"), filepath.Join(root, "config.yaml"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadWith(t, mgmt, c.link, Options{})
			if err == nil || !strings.Contains(err.Error(), validate.ErrOutsideTree.Error()) {
				t.Fatalf("err = %v, want %v", err, validate.ErrOutsideTree)
			}
			if _, err := loadWith(t, mgmt, c.link, Options{AllowSymlinksOutside: true}); err != nil {
				t.Fatalf("allowed: %v", err)
			}
		})
	}
	// Links within the tree keep working.
	_, err := loadWith(t, mgmt, func(root string) {
		for _, f := range []string{"people.yaml", "manager-map.yaml"} {
			os.Rename(filepath.Join(root, f), filepath.Join(root, "ldap-config", f))
			symlink(t, filepath.Join("ldap-config", f), filepath.Join(root, f))
		}
	}, Options{})
	if err != nil {
		t.Fatalf("links inside the tree: %v", err)
	}
}
