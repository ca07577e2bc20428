package calc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/entitlements-go/entitlements/validate"
)

// TestTrustedConfig: with Options.Config, a tree is calculated with a configuration loaded
// elsewhere (the base revision of a pull request): the tree's own config file is not read,
// so it chooses no environment variable, server or credential; group files, people data and
// the manager map are the tree's. An incremental load over a base with the same configuration
// reuses the base's work even though the config file differs.
func TestTrustedConfig(t *testing.T) {
	ctx := context.Background()
	base := synthFS(t, 300)
	env := map[string]string{"SECRET_TOKEN": "s3cr3t-t0ken"}
	opt := incOptions()
	opt.Getenv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := LoadConfig("config.yaml", withFS(opt, base))
	if err != nil {
		t.Fatal(err)
	}
	opt.Config = cfg
	baseRepo, err := LoadFS(ctx, base, "config.yaml", opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := baseRepo.Calculate(ctx); err != nil {
		t.Fatal(err)
	}

	head := fstest.MapFS{}
	for p, f := range base {
		head[p] = f
	}
	team := firstFile(base, "ldap-config/pizza_teams", ".txt", 0)
	head[team] = &fstest.MapFile{Data: append([]byte("username = "+baseRepo.People().UIDs()[0]+"\n"), base[team].Data...)}
	// The head's config puts a secret from the environment in every DN, and would read the
	// people from a server of its choosing.
	text := string(base["config.yaml"].Data)
	text = strings.Replace(text, "base: ou=", `base: ou=<%= ENV["SECRET_TOKEN"] %>,ou=`, -1)
	head["config.yaml"] = &fstest.MapFile{Data: []byte(text + "\nbogus_key: [\n")}

	headOpt := opt
	headOpt.Incremental = &Incremental{Base: baseRepo, Changed: func(p string) bool { return p == team || p == "config.yaml" }}
	headRepo, err := LoadFS(ctx, head, "config.yaml", headOpt)
	if err != nil {
		t.Fatalf("the head's broken config was read: %v", err)
	}
	res, err := headRepo.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if headRepo.Config() != cfg {
		t.Error("the repo does not use the configuration it was given")
	}
	if strings.Contains(resultJSON(t, res), env["SECRET_TOKEN"]) {
		t.Error("the head's config was used: the secret is in a DN")
	}
	if res.Reuse.Files == 0 || res.Reuse.Files != len(headRepo.ld.groups)-1 {
		t.Errorf("reuse %+v: every unchanged file should come from the base (%d groups)", res.Reuse, len(headRepo.ld.groups))
	}
	// The same head loaded in full with the configuration gives the same result.
	full, err := LoadFS(ctx, head, "config.yaml", opt)
	if err != nil {
		t.Fatal(err)
	}
	fres, err := full.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if resultJSON(t, fres) != resultJSON(t, res) {
		t.Error("incremental and full loads differ")
	}

	// LoadConfig reports a config that does not load as Load does.
	opt.Config = nil
	_, err = LoadConfig("config.yaml", withFS(opt, head))
	var list validate.List
	if !errors.As(err, &list) {
		t.Errorf("LoadConfig of a broken config: %v", err)
	}
}

func withFS(opt Options, fsys fstest.MapFS) Options {
	opt.FS = fsys
	return opt
}
