// Package aadspec is the config half of the Azure AD backend: the keys of an `aad` OU and when
// two of them overlap. It is apart from the provider (package providers/aad) so that programs
// can load and calculate configs with aad OUs without compiling the Microsoft Graph SDK.
package aadspec

import (
	"fmt"
	"strings"

	"github.com/entitlements-go/entitlements/backend"
	"github.com/entitlements-go/entitlements/config"
)

// Name is the backend type.
const Name = "aad"

// Kinds of credential of an aad OU (the values of its `credential` key). README
// "Credentials" says what each needs.
const (
	ClientSecret     = "client_secret"
	Certificate      = "certificate"
	WorkloadIdentity = "workload_identity"
	GitHubOIDC       = "github_oidc"
	ManagedIdentity  = "managed_identity"
	AzureCLI         = "azure_cli"
	Default          = "default"
)

// Kinds lists the credential kinds, in the order messages name them.
var Kinds = []string{ClientSecret, Certificate, WorkloadIdentity, GitHubOIDC, ManagedIdentity, AzureCLI, Default}

// credentials are the kinds that config keys give, and those keys. The other kinds take
// nothing but tenant_id and client_id (or their environment variables).
func credentials() map[string][]string {
	return map[string][]string{
		ClientSecret: {"client_secret"},
		Certificate:  {"client_certificate_path", "client_certificate_password"},
	}
}

// Type is the config spec of the `aad` type.
func Type() config.TypeSpec {
	return config.TypeSpec{Name: Name, Priority: 50, Enumerates: true,
		Required: []string{"base"},
		Optional: []string{"tenant_id", "client_id", "client_secret", "user_principal_format",
			"create_if_missing", "ignore_not_found", "delete_groups", "managed_prefix", "graph_url",
			"credential", "client_certificate_path", "client_certificate_password"},
		// The certificate's path may come from the environment too, and be unset offline.
		Secrets:     []string{"tenant_id", "client_id", "client_secret", "client_certificate_path", "client_certificate_password"},
		Enums:       map[string][]string{"credential": Kinds},
		Credentials: credentials(),
		Check:       check,
		Overlap:     overlap}
}

// Backend is the aad type with no provider: a program built without the Graph SDK can
// calculate aad OUs, and planning one says that this program cannot write them.
func Backend() backend.Backend { return backend.Backend{Spec: Type()} }

// Kind is the credential kind of an OU: its `credential` key, else the kind its keys give
// (client_certificate_path: certificate; client_secret: client_secret), else client_secret
// when secretInEnv (AZURE_CLIENT_SECRET is set: what the OU meant before `credential`
// existed), else default (azidentity's chain).
func Kind(ou *config.OU, secretInEnv bool) string {
	if k, ok := ou.Setting("credential"); ok && strings.TrimSpace(k) != "" {
		return strings.ToLower(strings.TrimSpace(k))
	}
	given := func(key string) bool {
		v, ok := ou.Setting(key)
		return ok && strings.TrimSpace(v) != ""
	}
	switch {
	case given("client_certificate_path"):
		return Certificate
	case given("client_secret") || secretInEnv:
		return ClientSecret
	}
	return Default
}

// check refuses at load, at the key's line, a credential its keys cannot give: a certificate
// without its path, a password without a certificate. Keys of another kind next to an
// explicit `credential` are left alone, as for GitHub OUs: one config may serve deployments
// that authenticate differently.
func check(c *config.Checker, ou *config.OU) {
	cv := ou.Settings.Get("credential")
	path := ou.Settings.Get("client_certificate_path")
	if pw := ou.Settings.Get("client_certificate_password"); !pw.IsNull() && !path.Exists() {
		c.Errorf(pw.Line(), "Group %q attribute client_certificate_password needs client_certificate_path (the certificate it opens)", ou.Key)
	}
	if !cv.IsNull() && strings.EqualFold(strings.TrimSpace(cv.Text()), Certificate) && !path.Exists() {
		c.Errorf(cv.Line(), "Group %q has `credential: certificate` but no attribute client_certificate_path "+
			"(the PEM or PKCS#12 file of the certificate and its private key)", ou.Key)
	}
}

// overlap: delete_groups deletes the unclaimed groups under managed_prefix, so two OUs of one
// tenant whose prefixes overlap would delete each other's groups.
func overlap(a, b *config.OU, _ config.GroupFiles) string {
	if !a.SettingTrue("delete_groups") && !b.SettingTrue("delete_groups") || !config.SameServer(a, b, "tenant_id", "") {
		return ""
	}
	x, okA := a.Setting("managed_prefix")
	y, okB := b.Setting("managed_prefix")
	if okA && okB && (strings.HasPrefix(strings.ToLower(x), strings.ToLower(y)) || strings.HasPrefix(strings.ToLower(y), strings.ToLower(x))) {
		return fmt.Sprintf("delete_groups deletes the unclaimed groups under managed_prefix, and the prefixes %q and %q overlap", x, y)
	}
	return ""
}
