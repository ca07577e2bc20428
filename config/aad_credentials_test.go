package config_test

import (
	"strings"
	"testing"
)

// aadOU is an aad OU entry with the keys given (4-space indented lines).
func aadOU(keys string) string {
	return "  gh:\n    type: aad\n    base: ou=aad,dc=example\n" + keys
}

// lineOf is the 1-based line of the first line of text that contains s.
func lineOf(text, s string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return -2
}

// Issue 24 item 2: an aad OU names its credential kind; an unknown kind, a certificate
// without its path and a password without a certificate are load errors at their line, and
// keys of two kinds need `credential` to say which one is used.
func TestAADCredentials(t *testing.T) {
	at := func(keys, marker, msg string) cfgCase {
		text := cfgText(aadOU(keys))
		return cfgCase{text: text, errs: []cfgErr{{lineOf(text, marker), msg}}}
	}
	named := func(name string, c cfgCase) cfgCase { c.name = name; return c }
	cases := []cfgCase{
		{name: "nothing (default chain or environment)", text: cfgText(aadOU(""))},
		{name: "client secret", text: cfgText(aadOU("    tenant_id: t\n    client_id: c\n    client_secret: s3cret-x\n"))},
		{name: "certificate", text: cfgText(aadOU("    credential: certificate\n    client_certificate_path: /etc/az.pem\n    client_certificate_password: ${PW}\n"))},
		{name: "certificate without credential key", text: cfgText(aadOU("    client_certificate_path: /etc/az.pem\n"))},
		{name: "certificate path from an unset variable", text: cfgText(aadOU("    credential: certificate\n    client_certificate_path: ${UNSET}\n"))},
		{name: "kinds without keys", text: cfgText(aadOU("    credential: github_oidc\n    tenant_id: t\n    client_id: c\n"))},
		{name: "upper case kind", text: cfgText(aadOU("    credential: Workload_Identity\n"))},
		{name: "secret and certificate, one chosen", text: cfgText(aadOU("    credential: client_secret\n    client_secret: s3cret-x\n    client_certificate_path: /a.pem\n"))},
		named("unknown kind", at("    credential: oidc\n", "credential:",
			"Group \"gh\" attribute credential is [FILTERED]; it must be one of: client_secret, certificate, workload_identity, github_oidc, managed_identity, azure_cli, default")),
		named("certificate without path", at("    tenant_id: t\n    credential: certificate\n", "credential:",
			"Group \"gh\" has `credential: certificate` but no attribute client_certificate_path")),
		named("password without certificate", at("    tenant_id: t\n    client_certificate_password: pw-x\n", "client_certificate_password",
			"Group \"gh\" attribute client_certificate_password needs client_certificate_path")),
		named("secret and certificate", at("    client_secret: s3cret-x\n    client_certificate_path: /a.pem\n", "  gh:",
			"Group \"gh\" gives more than one credential (client_secret: client_secret; certificate: client_certificate_path): keep one, or say which one to use with `credential: client_secret` or `credential: certificate`")),
		named("unknown key", at("    credentials: default\n", "  gh:", "unknown attribute(s): credentials (did you mean \"credential\"?)")),
	}
	for _, typ := range []string{"managed_identity", "azure_cli", "default", "workload_identity"} {
		cases = append(cases, cfgCase{name: "kind " + typ, text: cfgText(aadOU("    credential: " + typ + "\n"))})
	}
	runCfgCases(t, cases)
}
