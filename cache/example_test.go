package cache_test

import (
	"context"
	"fmt"
	"time"

	"github.com/entitlements-go/entitlements/cache"
)

// A TTL cache loads each key once while it is fresh; a test clock shows expiry without
// sleeping.
func ExampleTTL() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &cache.TTL[string]{TTL: time.Minute, Now: func() time.Time { return now }}
	loads := 0
	load := func(context.Context) (string, error) {
		loads++
		return fmt.Sprintf("value #%d", loads), nil
	}
	get := func() string {
		v, err := c.Get(context.Background(), "team", load)
		if err != nil {
			panic(err)
		}
		return v
	}
	v1 := get()
	v2 := get() // fresh: no load
	now = now.Add(2 * time.Minute)
	v3 := get() // expired: loaded again
	fmt.Println(v1, v2, v3, loads)
	// Output:
	// value #1 value #1 value #2 2
}

// Existence remembers DNs known to exist, whatever their letter case or spacing.
func ExampleExistence() {
	var e cache.Existence
	e.Mark("ou=Teams, dc=example,dc=net")
	fmt.Println(e.Exists("OU=teams,DC=example,DC=net"), e.Exists("ou=Apps,dc=example,dc=net"))
	// Output:
	// true false
}
