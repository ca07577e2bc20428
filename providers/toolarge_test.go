package providers_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/entitlements-go/entitlements/internal/capped"
	"github.com/entitlements-go/entitlements/providers"
)

// A capped body's refusal reaches a caller, through any wrapping, as the one typed error.
func TestResponseTooLargeErrorAs(t *testing.T) {
	refusal := &providers.ResponseTooLargeError{Service: "GitHub", Method: "GET", Path: "/orgs/acme/members", Limit: 8}
	body := capped.Body(io.NopCloser(strings.NewReader(strings.Repeat("x", 64))), 8, refusal)
	_, err := io.ReadAll(body)
	err = fmt.Errorf("reading github/org: %w", fmt.Errorf("GET /orgs/acme/members: %w", err))
	var tl *providers.ResponseTooLargeError
	if !errors.As(err, &tl) || tl != refusal || !errors.Is(err, providers.ErrResponseTooLarge) {
		t.Fatalf("errors.As(%v): %+v", err, tl)
	}
	if want := "the answer to GET /orgs/acme/members is larger than 8 bytes (Options.MaxResponseSize): refused"; tl.Error() != want {
		t.Errorf("Error() = %q, want %q", tl.Error(), want)
	}
	// An answer within the cap is read whole, without the error.
	if b, err := io.ReadAll(capped.Body(io.NopCloser(strings.NewReader("12345678")), 8, refusal)); err != nil || string(b) != "12345678" {
		t.Errorf("within the cap: %q, %v", b, err)
	}
	if errors.Is(errors.New("other"), providers.ErrResponseTooLarge) {
		t.Error("an unrelated error is ErrResponseTooLarge")
	}
}
