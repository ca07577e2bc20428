package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/entitlements-go/entitlements", Version: "v1.2.3"}},
			"entitlements github.com/entitlements-go/entitlements v1.2.3 go1.26.0"},
		{debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/entitlements-go/entitlements", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "77c6b86"}, {Key: "vcs.time", Value: "2026-12-01T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"entitlements github.com/entitlements-go/entitlements (devel) (revision 77c6b86, 2026-12-01T12:00:00Z, modified) go1.26.0"},
	} {
		if got := versionFrom(&tc.bi); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := runCLI(t, args...)
		if code != exitOK || !strings.HasPrefix(stdout, "entitlements ") {
			t.Errorf("%v: exit %d, %q", args, code, stdout)
		}
	}
}
