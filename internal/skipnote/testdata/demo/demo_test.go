// Package demo is run by skipnote's tests through `go test`: one test skips, one passes.
package demo

import (
	"testing"

	"github.com/entitlements-go/entitlements/internal/skipnote"
)

func TestMain(m *testing.M) { skipnote.Main(m, "demo") }

func TestSkips(t *testing.T) { skipnote.Skip(t, "nothing to run here") }

func TestPasses(t *testing.T) {}
