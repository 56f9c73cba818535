// Package protocol is the wire contract between Drover and its plugins:
// the messages each plugin kind carries. Package rpc holds the go-plugin
// handshake and the gRPC services (one per kind and major version), so
// that code that only reads messages (the commands) links no gRPC.
// Messages travel as JSON, not protobuf, so that a message may gain
// fields in a minor version without breaking a plugin built against an
// older one: unknown fields are ignored and missing ones keep their zero
// value. A major version is a new service, negotiated by go-plugin's
// versioned plugin sets.
package protocol

// MagicCookieKey and MagicCookieValue are the handshake go-plugin checks
// before anything else (package rpc): a program started without them
// (run by hand, say) exits with go-plugin's explanation instead of
// serving.
const (
	MagicCookieKey   = "DROVER_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "d6f5e0b2-drover-plugin"
)

// Plugin kinds, each its own service.
const (
	KindSpank     = "spank"
	KindGres      = "gres"
	KindJobSubmit = "job_submit"
	KindMPI       = "mpi"
)

// Versions are the major protocol versions of each kind this build
// speaks; minor changes add fields only.
var Versions = map[string][]int{
	KindSpank:     {1},
	KindGres:      {1},
	KindJobSubmit: {1},
	KindMPI:       {1},
}
