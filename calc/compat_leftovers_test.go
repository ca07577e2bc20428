package calc

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// Issue 10, compatibility leftovers found by differential testing against the reference.
func TestCompatibilityLeftovers(t *testing.T) {
	t.Run("_filename metadata never appears", func(t *testing.T) {
		res := mustRun(t, map[string]string{
			"ldap-config/a/x.txt":  "metadata__filename = /etc/passwd\nmetadata_k = v\nusername = bob\n",
			"ldap-config/a/y.yaml": "metadata:\n  _filename: nope\n  k: v\nrules:\n  username: bob\n",
		}, Options{})
		for _, key := range []string{"a/x", "a/y"} {
			md := res.Group(key).Metadata
			if _, ok := md["_filename"]; ok || md["k"] != "v" {
				t.Errorf("%s metadata %v", key, md)
			}
		}
	})
	t.Run("YAML integers beyond 64 bits stay exact", func(t *testing.T) {
		res := mustRun(t, map[string]string{
			"ldap-config/a/y.yaml": "metadata:\n  big: 123456789012345678901234567890\n  neg: -99999999999999999999\n  list: [18446744073709551616]\nrules:\n  username: bob\n",
		}, Options{})
		var b bytes.Buffer
		if err := res.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"big": 123456789012345678901234567890`, `"neg": -99999999999999999999`, "18446744073709551616"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("output lacks %s:\n%s", want, b.String())
			}
		}
	})
	t.Run("left-out empty dummy group is logged", func(t *testing.T) {
		var log bytes.Buffer
		repo, _, err := loadRepo(t, map[string]string{
			"ldap-config/a/x.txt":   "username = bob\n",
			"ldap-config/lib/e.txt": "metadata_no_members_ok = false\nusername = nobody\n",
		}, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		res, err := repo.Calculate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Group("lib/e") != nil {
			t.Error("lib/e is in the result")
		}
		if !strings.Contains(log.String(), "group left out of the result") || !strings.Contains(log.String(), "lib/e") {
			t.Errorf("warning not logged:\n%s", log.String())
		}
	})
}
