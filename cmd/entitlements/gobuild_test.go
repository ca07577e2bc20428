package main

import (
	"os"
	"strings"
	"testing"
)

// buildLikeTests makes the go commands a test runs build as the test binary was built (see
// raceBuild). GOFLAGS already set, such as CI's -count=1, is kept: go ignores the flags a
// command does not know.
func buildLikeTests(t *testing.T) {
	if raceBuild {
		t.Setenv("GOFLAGS", strings.TrimSpace(os.Getenv("GOFLAGS")+" -race"))
	}
}
