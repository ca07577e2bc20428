//go:build race

package main

// raceBuild is set when the tests run with -race: a test that builds the CLI builds it with
// -race too, so that it links the packages the test run has compiled already instead of
// compiling every dependency a second time (minutes on a cold build cache).
const raceBuild = true
