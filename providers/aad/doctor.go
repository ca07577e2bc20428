package aad

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/entitlements-go/entitlements/providers"
)

// maxSkew is the clock difference doctor reports: tokens are checked against the
// server's clock, and MSAL renews them 5 minutes before they expire by ours.
const maxSkew = 2 * time.Minute

// Doctor checks, reading only, that the OU's credential gives a Graph token, that the token's
// roles allow what the OU's settings need, and that Graph's clock agrees with ours.
func (p *Provider) Doctor(ctx context.Context, _ *providers.Target) []providers.Finding {
	g := p.svc.g
	kind, _, _ := strings.Cut(p.identity, ":")
	tok, err := g.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{g.scope}})
	if err != nil {
		return []providers.Finding{{Check: "credential", Detail: "credential " + kind,
			Fix: p.reg.secrets.String(fmt.Sprintf("no Graph token: %v; check the OU's credential keys and their environment variables (README \"Credentials\")", err))}}
	}
	p.reg.secrets.Add(tok.Token)
	claims := jwtClaims(tok.Token)
	who := kind
	if app, _ := claims["appid"].(string); app != "" {
		who += fmt.Sprintf(", app %s in tenant %v", app, claims["tid"])
	}
	out := []providers.Finding{{Check: "credential", OK: true, Detail: who}}
	out = append(out, p.roles(claims))
	out = append(out, p.clock(ctx, tok.Token))
	out = append(out, providers.Finding{Check: "rate limit", OK: true, Skipped: true,
		Detail: "Graph publishes no remaining quota; throttled requests wait for Retry-After"})
	return out
}

// roles checks the application permissions of the token against the OU's settings.
func (p *Provider) roles(claims map[string]any) providers.Finding {
	raw, ok := claims["roles"].([]any)
	if claims == nil || !ok {
		return providers.Finding{Check: "permissions", OK: true, Skipped: true, Detail: "the token carries no roles claim (not an application token?)"}
	}
	var roles []string
	for _, r := range raw {
		if s, ok := r.(string); ok {
			roles = append(roles, s)
		}
	}
	has := func(want ...string) bool {
		return slices.ContainsFunc(want, func(r string) bool { return slices.Contains(roles, r) })
	}
	f := providers.Finding{Check: "permissions", OK: true, Detail: "roles " + strings.Join(roles, ", ")}
	var fix []string
	switch {
	case (p.createMissing || p.deleteGroups) && !has("Group.ReadWrite.All", "Directory.ReadWrite.All"):
		fix = append(fix, "grant the application permission Group.ReadWrite.All (create_if_missing or delete_groups creates or deletes groups) and admin consent")
	case !has("GroupMember.ReadWrite.All", "Group.ReadWrite.All", "Directory.ReadWrite.All"):
		fix = append(fix, "grant the application permission GroupMember.ReadWrite.All and admin consent")
	}
	if !has("User.Read.All", "User.ReadBasic.All", "User.ReadWrite.All", "Directory.Read.All", "Directory.ReadWrite.All") {
		fix = append(fix, "grant User.Read.All (members are found by userPrincipalName)")
	}
	if len(fix) > 0 {
		f.OK, f.Fix = false, strings.Join(fix, "; ")
	}
	return f
}

// clock reads one group ID (a read the permissions above allow) and compares the reply's
// Date header with our clock.
func (p *Provider) clock(ctx context.Context, token string) providers.Finding {
	f := providers.Finding{Check: "clock"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.svc.g.base+"/groups?$top=1&$select=id", nil)
	if err != nil {
		f.Fix = err.Error()
		return f
	}
	req.Header.Set("Authorization", "Bearer "+token)
	before := p.reg.opt.Now()
	resp, err := (&http.Client{Transport: p.reg.parent, Timeout: p.reg.timeout}).Do(req)
	if err != nil {
		f.Fix = p.reg.secrets.String(fmt.Sprintf("Graph is not reachable: %v", err))
		return f
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		f.Check, f.Fix = "permissions", fmt.Sprintf("Graph answered %s to a group read: grant GroupMember.Read.All or more, with admin consent", resp.Status)
		return f
	}
	date, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		f.OK, f.Skipped, f.Detail = true, true, "Graph's answer has no Date header"
		return f
	}
	// Date has whole seconds: compare with the middle of the request truncated alike.
	skew := date.Sub(before.Add(p.reg.opt.Now().Sub(before) / 2).Truncate(time.Second)).Round(time.Second)
	f.Detail = fmt.Sprintf("skew %v", skew)
	f.OK = skew.Abs() <= maxSkew
	if !f.OK {
		f.Fix = "this machine's clock is off by " + skew.String() + " from Graph's: synchronise it (NTP)"
	}
	return f
}

// jwtClaims decodes a JWT's claims without checking the signature (the token came from the
// identity platform over TLS; only its roles are read), or nil when it is not a JWT.
func jwtClaims(tok string) map[string]any {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil
	}
	var c map[string]any
	if json.Unmarshal(b, &c) != nil {
		return nil
	}
	return c
}
