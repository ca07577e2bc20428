package ldap

import "github.com/entitlements-go/entitlements/config"

// GroupReaderFor returns the reader of unmanaged LDAP groups for the config's ldap_group
// extra, or nil when the config has none.
func (r *Registry) GroupReaderFor(cfg *config.Config) *GroupReader {
	if !cfg.LDAPGroup.Exists() {
		return nil
	}
	return r.GroupReader(cfg.LDAPGroup)
}
