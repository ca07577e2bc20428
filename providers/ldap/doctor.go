package ldap

import (
	"context"
	"fmt"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/entitlements-go/entitlements/providers"
)

// Doctor checks, reading only, that the OU's server accepts the bind, that its base exists
// (or create_if_missing will create it), and that the bind may compare the base's
// objectClass: a permitted no-op that fails on servers whose ACLs hide the base from the
// binder. LDAP publishes no rate limits and no clock, so those checks are skipped.
func (p *Provider) Doctor(ctx context.Context, _ *providers.Target) []providers.Finding {
	bind := providers.Finding{Check: "bind", Detail: fmt.Sprintf("%s as %s", p.svc.cfg.URI, p.svc.cfg.BindDN)}
	if p.svc.cfg.BindDN == "" {
		bind.Detail = p.svc.cfg.URI + " (anonymous)"
	}
	if err := p.svc.pool.do(ctx, func(*goldap.Conn) error { return nil }); err != nil {
		bind.Fix = fmt.Sprintf("%v: check ldap_uri, ldap_binddn and ldap_bindpw (and the CA for TLS)", err)
		return []providers.Finding{bind}
	}
	bind.OK = true
	out := []providers.Finding{bind}
	if p.base == "" {
		return out
	}
	e, err := p.svc.readDN(ctx, p.base)
	base := providers.Finding{Check: "base", Detail: p.base}
	switch {
	case err != nil:
		base.Fix = fmt.Sprintf("%v: the bind DN must be allowed to read %s", err, p.base)
	case e == nil && p.createMissing:
		base.OK, base.Detail = true, p.base+" does not exist; create_if_missing creates it on the first apply"
	case e == nil:
		base.Fix = fmt.Sprintf("%s does not exist (or the bind DN cannot see it): create it, or set create_if_missing: true", p.base)
	default:
		base.OK = true
	}
	out = append(out, base)
	if e == nil {
		return out
	}
	write := providers.Finding{Check: "write access", Skipped: true, OK: true, Detail: "the base has no objectClass to compare"}
	if oc := e.GetAttributeValues("objectClass"); len(oc) > 0 {
		var same bool
		err := p.svc.pool.do(ctx, func(c *goldap.Conn) error {
			var err error
			same, err = c.Compare(p.base, "objectClass", oc[0])
			return err
		})
		write = providers.Finding{Check: "write access", Detail: "compare of objectClass on " + p.base}
		switch {
		case err != nil:
			write.Fix = fmt.Sprintf("%v: grant the bind DN compare and write access to %s", err, p.base)
		case !same:
			write.Fix = "the server denies a compare it should grant: check the ACLs of " + p.base
		default:
			write.OK = true
			write.Detail += " allowed (a write is only proven by apply: ACLs may still refuse it)"
		}
	}
	return append(out, write)
}
