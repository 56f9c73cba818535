// Package openapi holds the slurmrestd OpenAPI documents Drover speaks and the
// ogen code generated from them: one package per API version (v0042 to
// v0045).
//
// The upstream documents under spec/ are never edited; normalize/ renames the
// few schemas ogen cannot accept, and the result is generated here. The
// generated packages are committed; TestGeneratedIsFresh fails when they no
// longer match what `go generate ./openapi` produces.
package openapi

//go:generate go run ./normalize -in spec/slurmrestd-v0.0.42.json -out .normalized/slurmrestd-v0.0.42.json
//go:generate go tool ogen --config ogen.yml --target v0042 --package v0042 --clean .normalized/slurmrestd-v0.0.42.json
//go:generate go run ./normalize -in spec/slurmrestd-v0.0.43.json -out .normalized/slurmrestd-v0.0.43.json
//go:generate go tool ogen --config ogen.yml --target v0043 --package v0043 --clean .normalized/slurmrestd-v0.0.43.json
//go:generate go run ./normalize -in spec/slurmrestd-v0.0.44.json -out .normalized/slurmrestd-v0.0.44.json
//go:generate go tool ogen --config ogen.yml --target v0044 --package v0044 --clean .normalized/slurmrestd-v0.0.44.json
//go:generate go run ./normalize -in spec/slurmrestd-v0.0.45.json -out .normalized/slurmrestd-v0.0.45.json
//go:generate go tool ogen --config ogen.yml --target v0045 --package v0045 --clean .normalized/slurmrestd-v0.0.45.json
