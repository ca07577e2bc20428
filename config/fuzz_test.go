package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/backends"
	. "github.com/entitlements-go/entitlements/config"

	"github.com/entitlements-go/entitlements/internal/corpus"
	"github.com/entitlements-go/entitlements/validate"
)

// FuzzConfigParse: Parse never panics; it returns either a config or a list of config errors
// of the file; a config it returns is internally consistent.
//
//	go test -run='^$' -fuzz=FuzzConfigParse -fuzztime=45s ./config
func FuzzConfigParse(f *testing.F) {
	f.Add([]byte(cfgText(okGroups)))
	f.Add([]byte(cfgText(okGroups+ldapOU("m", "    mirror: a\n")+"  lib:\n    type: dummy\n    dir: ../ldap-config/common/internal\n",
		"filters:\n  contractors:\n"+groupFilter+"      excluded_paths: [x]\n",
		"extras:\n  orgchart:\n    manager_map_file: ./manager-map.yaml\n  ldap_group: {}\n",
		"backends:\n  l:\n    type: ldap\n", "max_parallelism: 4\nignore_expirations: no\n")))
	f.Add([]byte("<%- require 'x' -%>\nconfiguration_path: <%= ENV[\"BASE\"] %>\n"))
	if root, err := corpus.Find(); err == nil {
		matches, _ := filepath.Glob(filepath.Join(root, "*", "config.yaml"))
		for _, m := range matches {
			if b, err := os.ReadFile(m); err == nil {
				f.Add(b)
			}
		}
	}
	root := tempRepo(f)
	opt := testOptions(root)
	opt.FilterClasses = []string{"Mine"}
	path := filepath.Join(root, "config.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, warns, err := Parse(path, data, opt)
		for _, w := range warns {
			if w.Path != "config.yaml" || w.Line < 0 {
				t.Fatalf("warning %+v", w)
			}
		}
		if err != nil {
			var l validate.List
			if cfg != nil || !errors.As(err, &l) || len(l) == 0 {
				t.Fatalf("error %v (%T) with config %v", err, err, cfg != nil)
			}
			for _, e := range l {
				if e.Kind != validate.KindConfig || e.Path != "config.yaml" || e.Msg == "" || e.Line < 0 {
					t.Fatalf("malformed error %+v", e)
				}
			}
			return
		}
		checkConfig(t, cfg)
	})
}

func checkConfig(t *testing.T, cfg *Config) {
	t.Helper()
	if cfg == nil || !filepath.IsAbs(cfg.ConfigurationPath) || cfg.MaxParallelism < 1 {
		t.Fatalf("config %+v", cfg)
	}
	if cfg.People[cfg.PeopleDataSource] == nil {
		t.Fatalf("people_data_source %q is not a people source", cfg.PeopleDataSource)
	}
	for name, p := range cfg.People {
		if p.Name != name || !slices.Contains([]string{"yaml", "ldap", "combined", "dummy"}, p.Type) {
			t.Fatalf("people source %q: %+v", name, p)
		}
	}
	keys := map[string]bool{}
	for i, ou := range cfg.OUs {
		if ou.Key == "" || keys[ou.Key] || cfg.OU(ou.Key) != ou || ou.Order != i || ou.Type != ou.Spec.Name ||
			!filepath.IsAbs(ou.Dir) || !ou.Settings.IsMap() || ou.Settings.Get("type").Exists() || ou.Settings.Get("backend").Exists() {
			t.Fatalf("OU %d: %+v", i, ou)
		}
		keys[ou.Key] = true
		if ou.Mirror != "" {
			src := cfg.OU(ou.Mirror)
			if src == nil || src.Mirror != "" {
				t.Fatalf("OU %s mirrors %q", ou.Key, ou.Mirror)
			}
		}
		if ou.Spec.Enumerates && ou.Mirror == "" {
			if st, err := os.Stat(ou.Dir); err != nil || !st.IsDir() {
				t.Fatalf("enumerated OU %s without a directory %s", ou.Key, ou.Dir)
			}
		}
	}
	sorted := cfg.SortedOUs()
	if len(sorted) != len(cfg.OUs) {
		t.Fatalf("SortedOUs has %d OUs, want %d", len(sorted), len(cfg.OUs))
	}
	for i := 1; i < len(sorted); i++ {
		a, b := sorted[i-1], sorted[i]
		if a.Spec.Priority > b.Spec.Priority ||
			(a.Spec.Priority == b.Spec.Priority && a.Mirror != "" && b.Mirror == "") {
			t.Fatalf("SortedOUs out of order at %d: %s, %s", i, a.Key, b.Key)
		}
	}
	names := map[string]bool{}
	for _, f := range cfg.Filters {
		if f.Name == "" || names[f.Name] || slices.Contains(ReservedFilterNames, f.Name) || !f.Config.IsMap() {
			t.Fatalf("filter %+v", f)
		}
		names[f.Name] = true
		switch f.Class {
		case FilterMemberOfGroup:
			if !strings.Contains(f.Group, "/") {
				t.Fatalf("filter %s group %q", f.Name, f.Group)
			}
		case FilterMemberOfLDAPGroup:
			if !cfg.LDAPGroup.Exists() {
				t.Fatalf("filter %s without the ldap_group extra", f.Name)
			}
		case "Mine":
		default:
			t.Fatalf("filter %s class %q", f.Name, f.Class)
		}
	}
	if cfg.Orgchart != nil && cfg.Orgchart.Err == "" {
		if _, err := os.Stat(cfg.Orgchart.ManagerMapFile); err != nil {
			t.Fatalf("manager map %s: %v", cfg.Orgchart.ManagerMapFile, err)
		}
	}
}

// TestCorpusConfigs: every corpus config satisfies the fuzz properties (those that load with
// their own directories are checked in calc's conformance test; here only Parse's contract).
func TestCorpusConfigs(t *testing.T) {
	root := corpus.Dir(t)
	matches, _ := filepath.Glob(filepath.Join(root, "*", "config.yaml"))
	if len(matches) == 0 {
		t.Fatal("no corpus configs")
	}
	loaded := 0
	for _, m := range matches {
		cfg, _, err := Load(m, Options{Types: backends.Types(), BaseDir: filepath.Dir(m), Getenv: func(string) (string, bool) { return "", false }})
		if err != nil {
			var l validate.List
			if !errors.As(err, &l) {
				t.Errorf("%s: %v", m, err)
			}
			continue
		}
		loaded++
		checkConfig(t, cfg)
	}
	if loaded < len(matches)/2 {
		t.Errorf("only %d of %d corpus configs load", loaded, len(matches))
	}
}
