package calc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/people"
)

func TestCustomMethodNamesThatWouldBeHijacked(t *testing.T) {
	noop := func(context.Context, string, *people.Directory) ([]string, error) { return nil, nil }
	for _, name := range []string{"contractor", "metadata_x", "filter_y", "modifier_z", "username", "contractors", "bad name"} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{
				"config.yaml":                     conf{Filters: contractorsFilter}.String(),
				"ldap-config/a/x.txt":             "username = alice\ncontractors = all\n",
				"ldap-config/lib/contractors.txt": "username = bob\n",
			}
			errs := mustFail(t, files, Options{Methods: map[string]Method{name: noop}})
			if !strings.Contains(errs.Error(), "custom rule method") {
				t.Errorf("errors: %v", errs)
			}
		})
	}
	t.Run("builtin filter class", func(t *testing.T) {
		errs := mustFail(t, map[string]string{"ldap-config/a/x.txt": "username = alice\n"},
			Options{FilterClasses: map[string]FilterClass{"MemberOfGroup": nil}})
		if !strings.Contains(errs.Error(), "would replace a built-in filter class") {
			t.Errorf("errors: %v", errs)
		}
	})
}

func TestNonFiniteMetadataStillWritesJSON(t *testing.T) {
	res := mustRun(t, map[string]string{
		"ldap-config/a/x.yaml": "metadata:\n  ratio: .nan\n  big: [.inf, -.inf]\nrules:\n  username: alice\n",
	}, Options{})
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Groups map[string]struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	md := out.Groups["a/x"].Metadata
	if md["ratio"] != ".nan" || md["big"].([]any)[1] != "-.inf" {
		t.Errorf("metadata %v", md)
	}
}
