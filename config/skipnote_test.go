package config_test

import (
	"testing"

	"github.com/entitlements-go/entitlements/internal/skipnote"
)

// TestMain prints one line per skip reason even without -v (see internal/skipnote).
func TestMain(m *testing.M) { skipnote.Main(m, "config") }
