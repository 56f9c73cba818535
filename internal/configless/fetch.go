package configless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"
)

// Server is a controller to ask for the files.
type Server struct {
	Host string
	Port int
}

// Addr is host:port.
func (s Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// ParseServers reads --conf-server: "HOST[:PORT][,HOST2[:PORT]...]" in
// the order to try them, an IPv6 address in brackets ("[::1]:6817"),
// the port SlurmctldPort's default (6817) when left out, as slurmd reads
// it.
func ParseServers(s string) ([]Server, error) {
	var out []Server
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		srv := Server{Port: slurmconf.DefaultSlurmctldPort}
		host, port := item, ""
		if strings.HasPrefix(item, "[") {
			end := strings.IndexByte(item, ']')
			if end < 0 {
				return nil, fmt.Errorf("--conf-server %q: no ] after an IPv6 address", item)
			}
			host, port = item[1:end], item[end+1:]
			if port != "" && !strings.HasPrefix(port, ":") {
				return nil, fmt.Errorf("--conf-server %q: %q after the address", item, port)
			}
			port = strings.TrimPrefix(port, ":")
		} else if h, p, ok := strings.Cut(item, ":"); ok {
			host, port = h, p
		}
		if host == "" || strings.ContainsAny(host, " \t/[]") {
			return nil, fmt.Errorf("--conf-server %q: not a host name", item)
		}
		if port != "" {
			n, err := strconv.ParseUint(port, 10, 16)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("--conf-server %q: port %q is not a port number", item, port)
			}
			srv.Port = int(n)
		}
		srv.Host = host
		out = append(out, srv)
	}
	if len(out) == 0 {
		return nil, errors.New("--conf-server names no controller")
	}
	return out, nil
}

// Resolver looks up SRV records; *net.Resolver is one, tests give their
// own.
type Resolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
}

// SRVRecord is the record that names the controllers, looked up in the
// host's search domains, as Slurm's resolve_ctls_from_dns_srv does.
const SRVRecord = "_slurmctld._tcp"

// LookupServers finds the controllers in DNS: the _slurmctld._tcp SRV
// records, lowest priority value first (the primary controller).
func LookupServers(ctx context.Context, r Resolver) ([]Server, error) {
	if r == nil {
		r = net.DefaultResolver
	}
	_, recs, err := r.LookupSRV(ctx, "", "", SRVRecord)
	if err != nil {
		return nil, fmt.Errorf("DNS SRV lookup of %s failed: %w", SRVRecord, err)
	}
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b *net.SRV) int { return int(a.Priority) - int(b.Priority) })
	var out []Server
	for _, rec := range recs {
		host := strings.TrimSuffix(rec.Target, ".")
		if host == "" || rec.Port == 0 {
			continue
		}
		out = append(out, Server{Host: host, Port: int(rec.Port)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("DNS SRV lookup of %s failed: no usable record", SRVRecord)
	}
	return out, nil
}

// Fetch asks the controllers in turn for the files (REQUEST_CONFIG),
// signed with the cluster key as c's signer (a node daemon or a login
// host's credential service), afresh for each, and returns the first
// reply that the controller signed and that Check takes, with the index
// in servers of the controller that sent it. Every controller is tried
// whatever the one before answered (refused, in standby, a reply not
// signed), so that neither a controller that is down or electing nor a
// host answering in a controller's place keeps a node from the others.
func Fetch(ctx context.Context, c *nodeproto.Client, servers []Server) (*nodeproto.ConfigReply, int, error) {
	var errs []error
	for i, s := range servers {
		r, err := fetchOne(ctx, c, s)
		if err == nil {
			return r, i, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", s.Addr(), err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, -1, errors.Join(errs...)
}

func fetchOne(ctx context.Context, c *nodeproto.Client, s Server) (*nodeproto.ConfigReply, error) {
	body := []byte("{}")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(s.Addr(), nodeproto.PathConfig), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if err := c.Signer.SignRequest(req, msgauth.Controller, body); err != nil {
		return nil, fmt.Errorf("sign request: %w", err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxReply+1))
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	if len(data) > MaxReply {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBadReply, MaxReply)
	}
	if resp.StatusCode/100 != 2 {
		var e nodeproto.Error
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return nil, &nodeproto.StatusError{Code: resp.StatusCode, Msg: e.Error}
		}
		return nil, &nodeproto.StatusError{Code: resp.StatusCode, Msg: string(data)}
	}
	if err := verifyReply(c.Signer, req.Header.Get(msgauth.Header), resp.Header.Get(msgauth.Header), data); err != nil {
		return nil, err
	}
	return DecodeReply(data)
}

// ErrUnsigned is wrapped when a reply is not the controller's: not
// signed with the cluster key by slurmctld for this daemon and this
// request.
var ErrUnsigned = errors.New("configless: the reply is not signed by the controller")

// SignReply is the controller's signature of a reply body to request
// r, for aud, the daemon that signed the request.
func SignReply(s *msgauth.Signer, aud string, r *http.Request, body []byte) (string, error) {
	return s.Sign(aud, nodeproto.ReplyMethod, nodeproto.ReplyURI(r.URL.Path, r.Header.Get(msgauth.Header)), body)
}

// verifyReply checks the controller's signature on a reply to the
// request signed with reqToken, with the keys s signs with.
func verifyReply(s *msgauth.Signer, reqToken, token string, body []byte) error {
	// The reply is bound to this request, so no replay cache is needed
	// and the controller's AuthInfo ttl, unknown here, is not: any up to
	// an hour is taken.
	v := &msgauth.Verifier{Keys: s.Keys, Audience: s.Issuer, MaxTTL: time.Hour}
	claims, err := v.Verify(token, nodeproto.ReplyMethod, nodeproto.ReplyURI(nodeproto.PathConfig, reqToken), body)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnsigned, err)
	}
	if !claims.FromController() {
		return fmt.Errorf("%w: signed by %s", ErrUnsigned, claims.Issuer())
	}
	return nil
}

// DecodeReply reads and checks a controller's reply.
func DecodeReply(data []byte) (*nodeproto.ConfigReply, error) {
	var r nodeproto.ConfigReply
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	if err := Check(&r); err != nil {
		return nil, err
	}
	return &r, nil
}
