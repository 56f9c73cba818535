// Package v0043 serves slurmrestd's v0.0.43 API through the v0.0.44 bridge
// (see bridge/adapt): adapter_gen.go translates every operation the two
// versions share.
package v0043

//go:generate go run ../adapt/gen -from ../../openapi/v0043 -to ../../openapi/v0044 -out adapter_gen.go
