// Package apicheck holds tests of the module's public API as a whole: no exported identifier
// of a public package may mention a type of an internal package, which no consumer could
// name, construct or convert.
package apicheck
