package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/entitlements-go/entitlements/internal/testldap"
)

// startSlapd starts a slapd with the given extra entries, its files in a new directory under
// dir; the caller stops it (Stop). skip says why LDAP cannot run (slapd is not installed); err
// is a failure of an installed slapd.
func startSlapd(dir, ldif string) (srv *testldap.Server, skip string, err error) {
	sub, err := os.MkdirTemp(dir, "slapd-")
	if err != nil {
		return nil, "", err
	}
	// Large repos: tens of MB of groups per 10,000 people.
	srv, err = testldap.Launch(sub, testldap.Options{LDIF: ldif, MaxSize: 4 << 30})
	if errors.Is(err, testldap.ErrNotInstalled) {
		return nil, err.Error(), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("starting slapd: %w", err)
	}
	return srv, "", nil
}
