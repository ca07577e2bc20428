package config_test

import "testing"

// ghOU is a github_org OU entry with the keys given (4-space indented lines).
func ghOU(typ, keys string) string {
	return "  gh:\n    type: " + typ + "\n    org: acme\n    base: ou=gh,dc=example\n" + keys
}

// Issue 24: a GitHub OU takes a token or a GitHub App; giving both is a load error unless
// `credential` says which one the provider uses. A credential key that renders empty (an unset
// variable) gives nothing, so one config can serve deployments that set either.
func TestGitHubCredentials(t *testing.T) {
	const app = "    app_id: 12345\n    private_key: <%= ENV[\"KEY\"] %>\n"
	two := "Group \"gh\" gives more than one credential (token: token; app: app_id"
	var cases []cfgCase
	for _, typ := range []string{"github_org", "github_team"} {
		cases = append(cases,
			cfgCase{name: typ + "/token", text: cfgText(ghOU(typ, "    token: t0ken-x\n"))},
			cfgCase{name: typ + "/app", text: cfgText(ghOU(typ, app+"    installation_id: 42\n"))},
			cfgCase{name: typ + "/app key file", text: cfgText(ghOU(typ, "    app_id: 1\n    private_key_path: /etc/app.pem\n"))},
			cfgCase{name: typ + "/nothing (environment fallbacks)", text: cfgText(ghOU(typ, ""))},
			cfgCase{name: typ + "/both", text: cfgText(ghOU(typ, "    token: t0ken-x\n"+app)),
				errs: []cfgErr{{-1, two}}},
			cfgCase{name: typ + "/both, message", text: cfgText(ghOU(typ, "    token: t0ken-x\n    private_key_path: k.pem\n")),
				errs: []cfgErr{{-1, "Group \"gh\" gives more than one credential (token: token; app: private_key_path): keep one, or say which one to use with `credential: token` or `credential: app`"}}},
			cfgCase{name: typ + "/both, token chosen", text: cfgText(ghOU(typ, "    token: t0ken-x\n"+app+"    credential: token\n"))},
			cfgCase{name: typ + "/both, app chosen", text: cfgText(ghOU(typ, "    token: t0ken-x\n"+app+"    credential: app\n"))},
			cfgCase{name: typ + "/unknown kind", text: cfgText(ghOU(typ, "    token: t0ken-x\n    credential: pat\n")),
				errs: []cfgErr{{-1, "attribute credential is [FILTERED]; it must be one of: token, app"}}},
			// An empty substitution gives nothing: the token's variable is unset here.
			cfgCase{name: typ + "/token unset, app set", text: cfgText(ghOU(typ, "    token: <%= ENV[\"UNSET\"] %>\n"+app))},
			cfgCase{name: typ + "/token empty, app set", text: cfgText(ghOU(typ, "    token: ${EMPTY}\n"+app))},
		)
	}
	runCfgCases(t, cases)
}
