// Package sack is the credential service of a host (Slurm's sackd, the
// "Slurm Auth and Cred Kiosk", or munged): it holds the cluster key, and
// signs for each local program that asks on its unix socket a credential
// naming the uid and gid the kernel reports for that program
// (SO_PEERCRED), for one request to the controller, or a session
// (msgauth.Session) in which the program signs its own requests for a
// minute. The commands on a login or compute host so prove who they are
// without a token handed to their user; only hosts that hold the key can
// vouch for anyone. The node daemon serves it on compute hosts and
// `drover sackd` on login hosts.
package sack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/usercred"
)

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

// Request asks for a credential for one request to the controller, or,
// with Op "session", for a session (msgauth.Session): a key with which
// the program signs its own requests until the session ends.
type Request struct {
	Op string `json:"op,omitempty"`
	// Audience is who the request goes to (msgauth.Controller).
	Audience string `json:"aud"`
	Method   string `json:"method"`
	// URI is the request's path and query, as sent.
	URI string `json:"uri"`
	// BodyHash is msgauth.BodyHash of the body: the service never sees
	// what is sent.
	BodyHash string `json:"body_hash"`
}

// Reply carries the credential or the session, or why there is none.
type Reply struct {
	Cred    string        `json:"cred,omitempty"`
	Session *SessionReply `json:"session,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// SessionReply is a granted session (msgauth.Session).
type SessionReply struct {
	Desc    string    `json:"desc"`
	KeyID   string    `json:"kid"`
	Key     []byte    `json:"key"`
	Expires time.Time `json:"exp"`
	Issuer  string    `json:"iss"`
}

// OpSession asks for a session.
const OpSession = "session"

// maxRequest bounds a request: a path and a hash.
const maxRequest = 16 << 10

// Server signs credentials for the peers of its sockets.
type Server struct {
	Signer *msgauth.Signer
	Logger *slog.Logger

	// names label the uids the kernel vouches for.
	names usercred.NameCache
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

// Serve answers on l until ctx ends. The protocol is a JSON line each
// way: a Request, then a Reply, as many as the client asks on one
// connection.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	var wg sync.WaitGroup
	conns := map[net.Conn]bool{}
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		l.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		conns[c] = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveConn(c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

// idleTimeout closes a connection that asks nothing for this long.
const idleTimeout = 2 * time.Minute

func (s *Server) serveConn(c net.Conn) {
	defer c.Close()
	cred, err := peer(c)
	if err != nil {
		s.Logger.Warn("credential service: the peer's credentials are unknown", "err", err)
		return
	}
	r := bufio.NewReaderSize(c, 4096)
	w := bufio.NewWriter(c)
	for {
		c.SetReadDeadline(time.Now().Add(idleTimeout))
		line, err := readLine(r)
		if err != nil {
			return
		}
		var reply Reply
		var req Request
		u := msgauth.UserID{UID: cred.Uid, GID: cred.Gid}
		switch {
		case json.Unmarshal(line, &req) != nil:
			reply.Error = "bad request"
		case req.Op == OpSession:
			u.Name = s.names.Name(cred.Uid)
			ss, err := s.Signer.GrantSession(u)
			if err != nil {
				s.Logger.Error("credential service: grant a session", "uid", cred.Uid, "err", err)
				reply.Error = err.Error()
				break
			}
			reply.Session = &SessionReply{Desc: ss.Desc, KeyID: ss.KeyID, Key: ss.Key, Expires: ss.Expires, Issuer: ss.Issuer}
		case req.Op != "":
			reply.Error = "unknown request " + strconv.Quote(req.Op)
		case req.Audience != msgauth.Controller || req.Method == "" || req.URI == "" || len(req.BodyHash) != len(msgauth.BodyHash(nil)):
			reply.Error = "a credential is for one request to the controller"
		default:
			u.Name = s.names.Name(cred.Uid)
			tok, err := s.Signer.SignUser(u, req.Audience, req.Method, req.URI, req.BodyHash)
			if err != nil {
				s.Logger.Error("credential service: sign", "uid", cred.Uid, "err", err)
				reply.Error = err.Error()
			}
			reply.Cred = tok
		}
		out, _ := json.Marshal(reply)
		w.Write(append(out, '\n'))
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if w.Flush() != nil {
			return
		}
	}
}

// readLine reads one line of at most maxRequest bytes.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxRequest {
			return nil, errTooLong
		}
		if err == nil {
			return line, nil
		}
		if err != bufio.ErrBufferFull {
			return nil, err
		}
	}
}

var errTooLong = errors.New("request too long")

func peer(c net.Conn) (*syscall.Ucred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix socket")
	}
	return usercred.PeerCred(uc)
}

// Client asks a host's service for credentials. Its connection is kept
// for the program's next requests, and so is its session.
type Client struct {
	socket string
	mu     sync.Mutex
	conn   net.Conn
	r      *bufio.Reader
	// session is the current session (nil: none yet, or the service
	// grants none, noSession).
	session   *msgauth.Session
	noSession bool
	// renew is when the session is renewed: half way through its life,
	// so that every token signed with it has half a life to be checked.
	renew time.Time
	// now is the clock (nil: time.Now).
	now func() time.Time
}

func (c *Client) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// NewClient returns a client of the service at socket.
func NewClient(socket string) *Client { return &Client{socket: socket} }

// ErrUnavailable is wrapped when the service cannot be reached.
var ErrUnavailable = errors.New("cannot reach this host's credential service (drover sackd)")

// Cred returns a credential for a request to the controller whose body
// is body: signed with the program's session, which is asked for when
// there is none or it is past half its life, or else by the service.
func (c *Client) Cred(ctx context.Context, method, uri string, body []byte) (string, error) {
	bh := msgauth.BodyHash(body)
	now := c.clock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.noSession && (c.session == nil || !now.Before(c.renew)) {
		r, err := c.ask(ctx, Request{Op: OpSession})
		switch {
		case err != nil:
			return "", err
		case r.Session != nil:
			c.session = &msgauth.Session{Desc: r.Session.Desc, KeyID: r.Session.KeyID, Key: r.Session.Key, Expires: r.Session.Expires, Issuer: r.Session.Issuer}
			// The token is issued after the session, not at the time
			// read before asking for it: issued in the second before
			// the session's, it would outlive the session's TTL by
			// that second, and the controller refuses such a token.
			now = c.clock()
			c.renew = now.Add(r.Session.Expires.Sub(now) / 2)
		default:
			// A service that grants no session: a credential each
			// request, as before sessions.
			c.noSession, c.session = true, nil
		}
	}
	if c.session != nil {
		return c.session.Sign(msgauth.Controller, method, uri, bh, now)
	}
	r, err := c.ask(ctx, Request{Audience: msgauth.Controller, Method: method, URI: uri, BodyHash: bh})
	if err != nil {
		return "", err
	}
	if r.Error != "" || r.Cred == "" {
		return "", fmt.Errorf("credential service at %s: %s", c.socket, r.Error)
	}
	return r.Cred, nil
}

// ask sends one request to the service and reads its answer. Caller
// holds c.mu.
func (c *Client) ask(ctx context.Context, req Request) (Reply, error) {
	data, _ := json.Marshal(req)
	data = append(data, '\n')
	var line []byte
	var err error
	// A kept connection the service closed meanwhile (it restarted, or
	// the connection sat idle) is dialled again once.
	for try := 0; try < 2; try++ {
		if c.conn == nil {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "unix", c.socket)
			if err != nil {
				return Reply{}, fmt.Errorf("%w at %s: %v", ErrUnavailable, c.socket, err)
			}
			c.conn, c.r = conn, bufio.NewReader(conn)
		}
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(10 * time.Second)
		}
		c.conn.SetDeadline(deadline)
		if _, err = c.conn.Write(data); err == nil {
			if line, err = readLine(c.r); err == nil {
				break
			}
		}
		c.conn.Close()
		c.conn = nil
	}
	if err != nil {
		return Reply{}, fmt.Errorf("%w at %s: %v", ErrUnavailable, c.socket, err)
	}
	var r Reply
	if err := json.Unmarshal(line, &r); err != nil {
		return Reply{}, fmt.Errorf("credential service at %s: unexpected answer", c.socket)
	}
	return r, nil
}
