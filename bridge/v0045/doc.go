// Package v0045 serves slurmrestd's v0.0.45 API through the v0.0.44 bridge
// (see bridge/adapt): adapter_gen.go translates every operation the two
// versions share.
package v0045

//go:generate go run ../adapt/gen -from ../../openapi/v0045 -to ../../openapi/v0044 -out adapter_gen.go
