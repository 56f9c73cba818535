// Package rpc is the transport of Drover's plugin protocol: the
// go-plugin handshake and one gRPC service per plugin kind and major
// version, carrying package protocol's messages as JSON (the "json"
// content subtype, see Codec) rather than protobuf, so that a message
// may gain fields in a minor version without breaking a plugin built
// against an older one.
package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

// Handshake is what a Drover plugin and its host must agree on before
// anything else: a program started without it (run by hand, say) exits
// with go-plugin's explanation instead of serving.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   protocol.MagicCookieKey,
	MagicCookieValue: protocol.MagicCookieValue,
}

// FullMethod is a method's gRPC name: "/drover.plugin.spank.v1.Plugin/Hook".
func FullMethod(kind string, major int, method string) string {
	return fmt.Sprintf("/drover.plugin.%s.v%d.Plugin/%s", kind, major, method)
}

// CodecName is the gRPC content subtype Drover's messages use.
const CodecName = "json"

// Codec encodes messages as JSON. A json.RawMessage passes as it is, so
// that a server can decode a request once it knows the method.
type Codec struct{}

// Marshal implements encoding.Codec.
func (Codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case json.RawMessage:
		return m, nil
	case *json.RawMessage:
		return *m, nil
	}
	return json.Marshal(v)
}

// Unmarshal implements encoding.Codec.
func (Codec) Unmarshal(data []byte, v any) error {
	if raw, ok := v.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}

// Name implements encoding.Codec.
func (Codec) Name() string { return CodecName }

func init() {
	encoding.RegisterCodec(Codec{})
}

// Handler serves one plugin's methods: it decodes req for method and
// returns the reply, or an error the host reports with the plugin's name.
type Handler func(ctx context.Context, method string, req json.RawMessage) (any, error)

// ServiceDesc is the gRPC service of kind at major version serving
// methods through h.
func ServiceDesc(kind string, major int, methods []string, h Handler) *grpc.ServiceDesc {
	sd := &grpc.ServiceDesc{
		ServiceName: fmt.Sprintf("drover.plugin.%s.v%d.Plugin", kind, major),
		HandlerType: (*any)(nil),
	}
	for _, m := range methods {
		sd.Methods = append(sd.Methods, grpc.MethodDesc{
			MethodName: m,
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				var req json.RawMessage
				if err := dec(&req); err != nil {
					return nil, err
				}
				return h(ctx, m, req)
			},
		})
	}
	return sd
}

// Conn calls one plugin's methods.
type Conn struct {
	cc    *grpc.ClientConn
	kind  string
	major int
}

// Call invokes method with in and decodes the reply into out.
func (c *Conn) Call(ctx context.Context, method string, in, out any) error {
	return c.cc.Invoke(ctx, FullMethod(c.kind, c.major, method), in, out, grpc.CallContentSubtype(CodecName))
}

// GRPCPlugin is the go-plugin side of a kind: on the plugin's side it
// registers Methods served by Handler, on Drover's it returns a *Conn.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Kind    string
	Major   int
	Methods []string
	Handler Handler
}

// GRPCServer implements plugin.GRPCPlugin.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(ServiceDesc(p.Kind, p.Major, p.Methods, p.Handler), nil)
	return nil
}

// GRPCClient implements plugin.GRPCPlugin.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return &Conn{cc: cc, kind: p.Kind, major: p.Major}, nil
}

// PluginSets are the versioned sets for a host of kind (no handlers: the
// host only calls).
func PluginSets(kind string) map[int]plugin.PluginSet {
	sets := map[int]plugin.PluginSet{}
	for _, v := range protocol.Versions[kind] {
		sets[v] = plugin.PluginSet{kind: &GRPCPlugin{Kind: kind, Major: v}}
	}
	return sets
}
