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

// Type is the config spec of the `aad` type.
func Type() config.TypeSpec {
	return config.TypeSpec{Name: Name, Priority: 50, Enumerates: true,
		Required: []string{"base"},
		Optional: []string{"tenant_id", "client_id", "client_secret", "user_principal_format",
			"create_if_missing", "ignore_not_found", "delete_groups", "managed_prefix", "graph_url"},
		Secrets: []string{"tenant_id", "client_id", "client_secret"},
		Overlap: overlap}
}

// Backend is the aad type with no provider: a program built without the Graph SDK can
// calculate aad OUs, and planning one says that this program cannot write them.
func Backend() backend.Backend { return backend.Backend{Spec: Type()} }

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
