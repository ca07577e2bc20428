package providers

import (
	"errors"
	"fmt"
)

// ErrResponseTooLarge is wrapped by the error of a request whose answer was larger than the
// provider's cap on answers (its Options.MaxResponseSize): errors.Is finds it whichever
// provider refused the answer.
var ErrResponseTooLarge = errors.New("the answer is too large")

// ResponseTooLargeError is an answer refused for its size, as the providers that read HTTP
// answers through a capped body (GitHub, Graph) report it; nothing past Limit was read. A
// caller takes it out with errors.As to tell a hostile or broken server from other failures
// (it is not retried: the same answer would come again).
type ResponseTooLargeError struct {
	// Service names the API that answered ("GitHub", "Graph").
	Service string
	// Method and Path are the request's (no query: it may hold a cursor or a token).
	Method, Path string
	// Limit is the cap in bytes that the answer exceeded.
	Limit int64
}

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("the answer to %s %s is larger than %d bytes (Options.MaxResponseSize): refused", e.Method, e.Path, e.Limit)
}

// Is makes errors.Is(err, ErrResponseTooLarge) true.
func (e *ResponseTooLargeError) Is(target error) bool { return target == ErrResponseTooLarge }
