package calc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/validate"
)

// Behaviours pinned after a review against the reference implementation.

func TestWildcardAllInProgress(t *testing.T) {
	// Both files match a/* and reference each other through it: each skips the other while it
	// is being computed, and nothing fails (spec 8.3 step 7: the error is for a single match).
	res := mustRun(t, map[string]string{
		"ldap-config/a/a.txt": "username = alice\ngroup = a/*\n",
		"ldap-config/a/b.txt": "username = bob\ngroup = a/*\n",
	}, Options{})
	wantMembers(t, res, "a/a", "alice", "bob")
	wantMembers(t, res, "a/b", "bob")
}

func TestFileNameOrder(t *testing.T) {
	// "foo-bar.txt" is processed before "foo.txt" (file-name order, '-' < '.'), so foo's
	// wildcard skips both in-progress files instead of closing a cycle.
	res := mustRun(t, map[string]string{
		"ldap-config/a/foo.txt":     "username = alice\ngroup = a/foo*\n",
		"ldap-config/a/foo-bar.txt": "username = bob\ngroup = a/foo\n",
	}, Options{})
	wantMembers(t, res, "a/foo", "alice")
	wantMembers(t, res, "a/foo-bar", "alice", "bob")
}

func TestLDAPGroupClassPriority(t *testing.T) {
	cfg := conf{Extras: "  ldap_group: {}\n"}.String()
	g := &LDAPGroup{DN: "cn=rfc2307bis,ou=Groups", Attrs: map[string][]string{
		"objectclass": {"top", "posixGroup", "groupOfNames"},
		"member":      {"uid=alice,ou=People"}, "memberuid": {"bob"}}}
	res := mustRun(t, map[string]string{"config.yaml": cfg,
		"ldap-config/a/x.txt": "ldap_group = cn=rfc2307bis,ou=Groups\n"}, Options{LDAPGroups: NewLDAPSnapshot(g)})
	wantMembers(t, res, "a/x", "alice")
}

func TestYAMLRuleValuesAreStrings(t *testing.T) {
	errs := mustFail(t, map[string]string{"ldap-config/a/x.yaml": "rules:\n  username: 0123\n"}, Options{})
	wantOneErr(t, errs, validate.KindRuleStructure, "ldap-config/a/x.yaml", 2)
}

func TestDescriptionErrorsOnlyForOutputs(t *testing.T) {
	files := map[string]string{
		"ldap-config/lib/dup.txt": "description = one\ndescription = two\nusername = bob\n",
		"ldap-config/a/x.txt":     "group = lib/dup\n",
	}
	// Only referenced: the reference never reads its description.
	res, _ := run(t, files, Options{})
	if res == nil {
		t.Fatal("a referenced file's description error failed the run")
	}
	wantMembers(t, res, "a/x", "bob")
	if res.Group("lib/dup") != nil {
		t.Error("a dummy group with an invalid description is in the output")
	}
	// Enumerated: the group is built, and the run fails.
	files["ldap-config/a/dup.txt"] = files["ldap-config/lib/dup.txt"]
	errs := mustFail(t, files, Options{})
	if !strings.Contains(errs.Error(), "description key is duplicated") {
		t.Errorf("errors: %v", errs)
	}
}

func TestOrgchartProblemsOnlyFailManagementRules(t *testing.T) {
	cfg := conf{NoOrgchart: true, Extras: "  orgchart:\n    manager_map_file: ./nope.yaml\n"}.String()
	// No management rule: the missing map does not matter.
	res := mustRun(t, map[string]string{"config.yaml": cfg, "ldap-config/a/x.txt": "username = bob\n"}, Options{})
	wantMembers(t, res, "a/x", "bob")
	// A management rule fails at its line.
	errs := mustFail(t, map[string]string{"config.yaml": cfg, "ldap-config/a/x.txt": "management = alice\n"}, Options{})
	if !strings.Contains(errs.Error(), "x.txt:1") || !strings.Contains(errs.Error(), "does not exist") {
		t.Errorf("errors: %v", errs)
	}
}

func TestDummyOUMalformedRestrictionsAreLazy(t *testing.T) {
	groups := stdGroups + "    allowed_methods:\n"
	cfg := conf{Groups: groups}.String()
	res := mustRun(t, map[string]string{"config.yaml": cfg, "ldap-config/lib/l.txt": "username = bob\n",
		"ldap-config/a/x.txt": "username = alice\n"}, Options{})
	wantMembers(t, res, "a/x", "alice")
	errs := mustFail(t, map[string]string{"config.yaml": cfg, "ldap-config/lib/l.txt": "username = bob\n",
		"ldap-config/a/x.txt": "group = lib/l\n"}, Options{})
	if !strings.Contains(errs.Error(), "allowed_methods must be an Array") {
		t.Errorf("errors: %v", errs)
	}
}

func TestDanglingLinkInManagedOU(t *testing.T) {
	root := build(t, map[string]string{"ldap-config/a/x.txt": "username = alice\n"})
	if err := os.Symlink(filepath.Join(root, "nowhere.txt"), filepath.Join(root, "ldap-config/a/y.txt")); err != nil {
		t.Skip(err)
	}
	_, err := Load(t.Context(), filepath.Join(root, "config.yaml"), defaults(Options{}, root))
	if err == nil || !strings.Contains(err.Error(), "y.txt") {
		t.Fatalf("err = %v", err)
	}
}

func TestNoMembersOKFalse(t *testing.T) {
	for _, body := range []string{
		"username = nobody\nmetadata_no_members_ok = false\n",
		"metadata:\n  no_members_ok: false\nrules:\n  username: nobody\n",
	} {
		ext := "txt"
		if strings.HasPrefix(body, "metadata:") {
			ext = "yaml"
		}
		errs := mustFail(t, map[string]string{"ldap-config/a/x." + ext: body}, Options{})
		wantOneErr(t, errs, validate.KindNoMembers, "ldap-config/a/x."+ext, 0)
	}
	// An expired group is allowed to be empty (the modifier sets no_members_ok: true).
	res := mustRun(t, map[string]string{"ldap-config/a/x.txt": "username = bob\nmetadata_no_members_ok = false\nexpiration = 2020-01-01\n"}, Options{})
	wantMembers(t, res, "a/x")
}

func TestRubyParsingDetails(t *testing.T) {
	t.Run("empty maps in rule lists are dropped", func(t *testing.T) {
		res := mustRun(t, map[string]string{"ldap-config/a/x.yaml": "rules:\n  or:\n    - username: bob\n    - {}\n"}, Options{})
		wantMembers(t, res, "a/x", "bob")
	})
	t.Run("null whole-file expiration is invalid", func(t *testing.T) {
		errs := mustFail(t, map[string]string{"ldap-config/a/x.yaml": "expiration:\nrules:\n  username: bob\n"}, Options{})
		wantOneErr(t, errs, validate.KindExpirationDate, "ldap-config/a/x.yaml", 1)
	})
	t.Run("a value of only ';' is no value", func(t *testing.T) {
		errs := mustFail(t, map[string]string{"ldap-config/a/x.txt": "username = ;\n"}, Options{})
		wantOneErr(t, errs, validate.KindTextFile, "ldap-config/a/x.txt", 1)
	})
	t.Run("the last of repeated expirations counts", func(t *testing.T) {
		res := mustRun(t, map[string]string{"ldap-config/a/x.txt": "username = bob; expiration = garbage; expiration = 2099-01-01\n"}, Options{})
		wantMembers(t, res, "a/x", "bob")
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		errs := mustFail(t, map[string]string{"ldap-config/a/x.txt": "description = caf\xe9\nusername = bob\n"}, Options{})
		wantOneErr(t, errs, validate.KindTextFile, "ldap-config/a/x.txt", 0)
	})
	t.Run("trailing document separator", func(t *testing.T) {
		res := mustRun(t, map[string]string{"ldap-config/a/x.yaml": "rules:\n  username: bob\n---\n"}, Options{})
		wantMembers(t, res, "a/x", "bob")
	})
}
