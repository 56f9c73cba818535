// Package sack is the credential service of a host (Slurm's sackd, the
// "Slurm Auth and Cred Kiosk", or munged): it holds the cluster key, and
// signs for each local program that asks on its unix socket a credential
// naming the uid and gid the kernel reports for that program
// (SO_PEERCRED), for one request to the controller. The commands on a
// login or compute host so prove who they are without a token handed to
// their user; only hosts that hold the key can vouch for anyone. The node
// daemon serves it on compute hosts and `drover sackd` on login hosts.
package sack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/usercred"
)

// Path is the one request the service answers.
const Path = "/sack/v1/cred"

// EnvSocket names the socket in place of the default (DROVER_SACK_SOCKET:
// a path, or "@name" for an abstract socket).
const EnvSocket = "DROVER_SACK_SOCKET"

// DefaultSocket is where a cluster's service listens on a host: an
// abstract unix socket, which belongs to the host's network namespace, so
// that several hosts on one file system (tests, Slurm's multiple-slurmd
// mode) each find their own, and which leaves no file behind.
func DefaultSocket(cluster string) string { return "@drover/sack/" + cluster }

// Socket is where the commands find their host's service.
func Socket(cluster string) string {
	if s := os.Getenv(EnvSocket); s != "" {
		return s
	}
	return DefaultSocket(cluster)
}

// Request asks for a credential for one request to the controller.
type Request struct {
	// Audience is who the request goes to (msgauth.Controller).
	Audience string `json:"aud"`
	Method   string `json:"method"`
	// URI is the request's path and query, as sent.
	URI string `json:"uri"`
	// BodyHash is msgauth.BodyHash of the body: the service never sees
	// what is sent.
	BodyHash string `json:"body_hash"`
}

// Reply carries the credential.
type Reply struct {
	Cred string `json:"cred"`
}

// maxRequest bounds a request: a path and a hash.
const maxRequest = 16 << 10

// Server signs credentials for the peers of its sockets.
type Server struct {
	Signer *msgauth.Signer
	Logger *slog.Logger
}

// Listen opens a socket at addr: "@name" is abstract, anything else a
// path, made mode 0666 (the peer's credentials say who connects).
func Listen(addr string) (net.Listener, error) {
	if len(addr) > 0 && addr[0] == '@' {
		l, err := net.Listen("unix", addr)
		if err != nil {
			return nil, fmt.Errorf("credential service: listen on %s: %w", addr, err)
		}
		return l, nil
	}
	_ = os.Remove(addr)
	l, err := net.Listen("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("credential service: listen on %s: %w", addr, err)
	}
	if err := os.Chmod(addr, 0o666); err != nil {
		l.Close()
		return nil, fmt.Errorf("credential service: chmod %s: %w", addr, err)
	}
	return l, nil
}

type peerKey struct{}

// Serve answers on l until ctx ends.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           http.HandlerFunc(s.handle),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			cred, err := peer(c)
			if err != nil {
				return ctx
			}
			return context.WithValue(ctx, peerKey{}, cred)
		},
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	cred, _ := r.Context().Value(peerKey{}).(*syscall.Ucred)
	if cred == nil {
		http.Error(w, "credential service: the peer's credentials are unknown", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != Path {
		http.Error(w, "credential service: unknown request", http.StatusNotFound)
		return
	}
	var req Request
	if err := json.NewDecoder(io.LimitReader(r.Body, maxRequest)).Decode(&req); err != nil {
		http.Error(w, "credential service: bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req.Audience != msgauth.Controller || req.Method == "" || req.URI == "" || len(req.BodyHash) != len(msgauth.BodyHash(nil)) {
		http.Error(w, "credential service: a credential is for one request to the controller", http.StatusBadRequest)
		return
	}
	u := msgauth.UserID{UID: cred.Uid, GID: cred.Gid, Name: strconv.FormatUint(uint64(cred.Uid), 10)}
	if id, err := usercred.Lookup(cred.Uid); err == nil {
		u.Name = id.Name
	}
	tok, err := s.Signer.SignUser(u, req.Audience, req.Method, req.URI, req.BodyHash)
	if err != nil {
		s.Logger.Error("credential service: sign", "uid", cred.Uid, "err", err)
		http.Error(w, "credential service: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Reply{Cred: tok})
}

func peer(c net.Conn) (*syscall.Ucred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, credErr
}

// Client asks a host's service for credentials. Its connection is kept
// for the program's next requests.
type Client struct {
	socket string
	hc     *http.Client
}

// NewClient returns a client of the service at socket.
func NewClient(socket string) *Client {
	return &Client{socket: socket, hc: &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socket)
			},
			MaxIdleConnsPerHost: 2,
		},
	}}
}

// ErrUnavailable is wrapped when the service cannot be reached.
var ErrUnavailable = errors.New("cannot reach this host's credential service (drover sackd)")

// Cred returns a credential for a request to the controller whose body
// is body.
func (c *Client) Cred(ctx context.Context, method, uri string, body []byte) (string, error) {
	data, _ := json.Marshal(Request{Audience: msgauth.Controller, Method: method, URI: uri, BodyHash: msgauth.BodyHash(body)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://sack"+Path, bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("%w at %s: %v", ErrUnavailable, c.socket, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxRequest))
	if err != nil {
		return "", fmt.Errorf("%w at %s: %v", ErrUnavailable, c.socket, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("credential service at %s: %s", c.socket, bytes.TrimSpace(out))
	}
	var r Reply
	if err := json.Unmarshal(out, &r); err != nil || r.Cred == "" {
		return "", fmt.Errorf("credential service at %s: unexpected answer", c.socket)
	}
	return r.Cred, nil
}
