package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/replog"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/internal/restd"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/state"
)

// replication is what a controller daemon adds when slurm.conf lists
// several SlurmctldHost lines: its replica of the replicated log, which
// outlives reconfigures, raft's connections on the controller's port,
// and the forwarding of every request to the controller that leads.
type replication struct {
	cfg    replog.Config
	stream *replog.Stream
	// signer signs this controller's requests to the others (raft's
	// connections, their reconfigure, the pings of ReplicaPath).
	signer *msgauth.Signer
	// client reaches the other controllers (their reconfigure); peers
	// sends the pings, with a short limit.
	client *http.Client
	peers  *http.Client
	// hosts are the SlurmctldHost lines of the latest slurm.conf read
	// (cfg.Members until a reconfigure), which scontrol ping lists.
	hosts atomic.Pointer[[]replog.Member]
	// log is set once the first controller opened it; requests may
	// come before.
	log     atomic.Pointer[replog.Log]
	scheme  string
	forward http.Handler
	logger  *slog.Logger
}

// selfController finds which SlurmctldHost this daemon is: --name, else
// the short host name, as slurmctld finds itself in the list.
func selfController(v *viper.Viper, sc *slurmconf.Config) (slurmconf.ControllerHost, error) {
	me := hostName(v)
	for _, h := range sc.SlurmctldHosts {
		name, _, _ := strings.Cut(h.Name, ".")
		if name == me || h.Name == me {
			return h, nil
		}
	}
	var names []string
	for _, h := range sc.SlurmctldHosts {
		names = append(names, h.Name)
	}
	return slurmconf.ControllerHost{}, fmt.Errorf("this host (%s) is not a valid controller: SlurmctldHost lists %s (--name sets which one this is)", me, strings.Join(names, ","))
}

// controllerMembers are the SlurmctldHost lines as raft members, each
// reached at its address (or name) and SlurmctldPort.
func controllerMembers(sc *slurmconf.Config) []replog.Member {
	var out []replog.Member
	for _, h := range sc.SlurmctldHosts {
		out = append(out, replog.Member{ID: h.Name, Addr: sc.ControllerAddr(h)})
	}
	return out
}

// newReplication prepares the replica of the controller self; it opens
// with the first controller (open). tlsClient is how controllers reach
// each other under TLSType=tls (nil: plain HTTP).
func newReplication(sc *slurmconf.Config, self slurmconf.ControllerHost, stateDir string, keys *clusterkey.Holder, tlsClient *tls.Config, recover bool, logger *slog.Logger, onLeader func(bool), onFatal func(error)) (*replication, error) {
	members := controllerMembers(sc)
	var addr string
	for _, m := range members {
		if m.ID == self.Name {
			addr = m.Addr
		}
	}
	signer := &msgauth.Signer{Keys: keys, Issuer: msgauth.Controller}
	stream, err := replog.NewStream(addr, tlsClient, signer)
	if err != nil {
		return nil, err
	}
	r := &replication{stream: stream, signer: signer, logger: logger, scheme: "http"}
	if tlsClient != nil {
		r.scheme = "https"
	}
	pings := http.DefaultTransport.(*http.Transport).Clone()
	pings.TLSClientConfig = tlsClient
	r.peers = &http.Client{Transport: pings, Timeout: peerTimeout}
	r.cfg = replog.Config{
		ID: self.Name, Members: members,
		// A folder of the controller's own: slurmctld's backups share
		// StateSaveLocation, and two replicas must never share files.
		Dir: filepath.Join(stateDir, "raft-"+self.Name),
		// The primary starts the cluster, and takes over the state of
		// the single controller it was.
		Bootstrap: self.Name == sc.SlurmctldHosts[0].Name,
		Import:    controller.StatePath(stateDir),
		Recover:   recover,
		Stream:    stream, FailoverTimeout: sc.SlurmctldTimeout,
		Logger: logger, OnLeader: onLeader, OnFatal: onFatal,
	}
	base := forwardTransport(tlsClient)
	r.client = &http.Client{Transport: base, Timeout: quiesceTimeout + 30*time.Second}
	host, _, _ := strings.Cut(self.Name, ".")
	r.forward = restd.Handler(restd.Options{
		// The leader's address is filled in per request (leaderTransport).
		Controller: &url.URL{Scheme: r.scheme, Host: "leader"},
		Cluster:    &msgauth.Signer{Keys: keys, Issuer: msgauth.Host(host)},
		Logger:     logger,
		Transport:  &leaderTransport{leader: r.leader, scheme: r.scheme, next: base},
		AllPaths:   true,
		// The leader went away while the request was forwarded: the
		// client cannot tell whether it was applied.
		GatewayStatus: http.StatusBadGateway,
		// It could not be reached at all: nothing was applied, and the
		// client may try again, here or elsewhere.
		Unreachable: func(w http.ResponseWriter, _ *http.Request, err error) bool {
			if !errors.Is(err, errNoLeader) && !isDialError(err) {
				return false
			}
			standby(w)
			return true
		},
	})
	return r, nil
}

// open is the controllers' Replicate: the first opens the replica, a
// reconfigured one takes it over.
func (r *replication) open(fsm state.FSM) (*replog.Log, error) {
	if l := r.log.Load(); l != nil {
		return l, l.Rebind(fsm)
	}
	l, err := replog.Open(r.cfg, fsm)
	if err != nil {
		return nil, err
	}
	r.log.Store(l)
	return l, nil
}

// leader is the leading controller other than this one, if known.
func (r *replication) leader() (replog.Member, bool) {
	l := r.log.Load()
	if l == nil {
		return replog.Member{}, false
	}
	m, ok := l.Leader()
	if !ok || m.ID == r.cfg.ID {
		return replog.Member{}, false
	}
	return m, true
}

func (r *replication) close() {
	if l := r.log.Load(); l != nil {
		if err := l.Close(); err != nil {
			r.logger.Error("close the replica", "err", err)
		}
	}
	r.stream.Close()
}

// handler routes a controller's requests: raft's connections, the
// leader's reconfigure and the other controllers' pings to the replica;
// the pings of controllers (answeredLocally) to the local controller,
// which needs no leader for them; the rest to the local controller while
// it leads, else to the leader. A follower that knows no leader (an
// election is under way) answers 503, which tells the client to try
// another controller.
func (r *replication) handler(local http.Handler, leads func() bool, verify func(*http.Request) (*msgauth.Claims, error), reload func(context.Context) error) http.Handler {
	raftConns := r.stream.Handler(verify)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.URL.Path == replog.Path:
			raftConns.ServeHTTP(w, req)
			return
		case req.URL.Path == reconfigurePath:
			r.serveReconfigure(w, req, verify, reload)
			return
		case req.URL.Path == droverapi.ReplicaPath:
			r.serveReplica(w, req, verify)
			return
		case answeredLocally(req):
			local.ServeHTTP(w, req)
			return
		}
		if leads() {
			local.ServeHTTP(w, req)
			return
		}
		leader, ok := r.leader()
		if !ok {
			standby(w)
			return
		}
		w.Header().Set(droverapi.LeaderHeader, leader.Addr)
		r.forward.ServeHTTP(w, req)
	})
}

// standby answers as a controller in standby mode answers a client that
// reached it: try another.
func standby(w http.ResponseWriter) {
	w.Header().Set(droverapi.StandbyHeader, "1")
	w.Header().Set("Retry-After", "1")
	code := slurmerr.InStandbyUseBackup
	restapi.WriteEnvelopeError(w, http.StatusServiceUnavailable, int32(code), code.Message(), "no controller leads at the moment", "slurmctld")
}

var errNoLeader = errors.New("no other controller leads")

// isDialError reports whether err happened connecting, before any of
// the request was sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// forwardTransport is the transport of a follower's requests to the
// leader. Forwarded requests share kept-alive connections (no handshake
// each). The follower drops an idle one well before the leader would
// (restapi.Timeouts.Idle), so that the leader closing it is rare; when it
// happens before anything was written, the transport sends the request
// again on a fresh connection (the body is kept for that:
// leaderTransport).
func forwardTransport(tlsClient *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tlsClient
	t.IdleConnTimeout = forwardIdle
	t.MaxIdleConnsPerHost = 64
	return t
}

// leaderTransport sends a forwarded request to the leader of the moment.
type leaderTransport struct {
	leader func() (replog.Member, bool)
	scheme string
	next   http.RoundTripper
}

func (t *leaderTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	leader, ok := t.leader()
	if !ok {
		return nil, errNoLeader
	}
	req.URL.Scheme, req.URL.Host = t.scheme, leader.Addr
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		// The controller refuses a body over restapi.MaxBody: reading
		// one byte more is enough to pass that on.
		body, err := io.ReadAll(io.LimitReader(req.Body, restapi.MaxBody+1))
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the request to forward: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength, req.TransferEncoding = int64(len(body)), nil
	}
	return t.next.RoundTrip(req)
}

// forwardIdle is how long a follower keeps an idle connection to the
// leader: well under the leader's own limit.
const forwardIdle = 30 * time.Second

// fromController checks that req carries a controller's token: the
// requests controllers make of each other are taken from no one else.
func fromController(req *http.Request, verify func(*http.Request) (*msgauth.Claims, error)) error {
	claims, err := verify(req)
	if err == nil && !claims.FromController() {
		err = replog.ErrNotController
	}
	return err
}

// reconfigurePath is where a controller asks another to read slurm.conf
// again: the leader does, once it has itself, as slurmctld passes
// REQUEST_RECONFIGURE on. Answered by the controller asked, never
// forwarded, and only to a controller's token.
const reconfigurePath = "/drover/v1/replica/reconfigure"

func (r *replication) serveReconfigure(w http.ResponseWriter, req *http.Request, verify func(*http.Request) (*msgauth.Claims, error), reload func(context.Context) error) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := fromController(req, verify); err != nil {
		r.logger.Warn("reconfigure request refused", "source", req.RemoteAddr, "err", err)
		restapi.WriteAuthError(w, err)
		return
	}
	if err := reload(req.Context()); err != nil {
		restapi.WriteEnvelopeError(w, http.StatusInternalServerError, int32(slurmerr.CodeOf(err)), slurmerr.CodeOf(err).Message(), err.Error(), "slurmctld")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// reconfigured is the leader's part after its own reconfigure: the
// controllers slurm.conf now lists become the cluster's voters (those
// added join, those gone leave), and every other controller reads
// slurm.conf again.
func (r *replication) reconfigured(ctx context.Context, sc *slurmconf.Config) {
	hosts := controllerMembers(sc)
	r.hosts.Store(&hosts)
	l := r.log.Load()
	if l == nil || !l.IsLeader() {
		return
	}
	members := controllerMembers(sc)
	added, removed, err := l.SetMembers(members)
	if err != nil {
		r.logger.Error("reconfigure: change the controllers", "err", err)
	} else if len(added)+len(removed) > 0 {
		r.logger.Info("reconfigure: controllers changed", "added", added, "removed", removed)
	}
	for _, m := range members {
		if m.ID == r.cfg.ID {
			continue
		}
		if err := r.askReconfigure(ctx, m); err != nil {
			r.logger.Error("reconfigure: another controller did not read slurm.conf again", "controller", m.ID, "err", err)
		}
	}
}

func (r *replication) askReconfigure(ctx context.Context, m replog.Member) error {
	_, err := r.ask(ctx, r.client, http.MethodPost, m.Addr, reconfigurePath)
	return err
}

// ask makes a request of another controller, with this one's token, and
// returns the answer's body (at most 64 KiB) when it is a 200.
func (r *replication) ask(ctx context.Context, client *http.Client, method, addr, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.scheme+"://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	if err := r.signer.SignRequest(req, msgauth.Controller, nil); err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return body, nil
}
