package replog

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/internal/msgauth"
)

// Path is where a controller takes its peers' raft connections: an HTTP
// request that upgrades to raft's own protocol, on the port the
// controller already serves (one port to open, the same TLS), after its
// token says it comes from a controller of this cluster.
const Path = "/drover/v1/raft"

// upgradeProto names the protocol in the Upgrade header.
const upgradeProto = "drover-raft/1"

// Stream is raft's stream layer over the controllers' own port.
// Connections arrive through Handler and leave through Dial.
type Stream struct {
	advertise net.Addr
	tlsClient *tls.Config
	signer    *msgauth.Signer

	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// NewStream makes the stream layer of the controller reachable at
// advertise (host:port); tlsClient, when set, is how it reaches the other
// controllers (TLSType=tls), and signer signs its connection requests
// with the cluster key.
func NewStream(advertise string, tlsClient *tls.Config, signer *msgauth.Signer) (*Stream, error) {
	addr, err := net.ResolveTCPAddr("tcp", advertise)
	if err != nil {
		return nil, fmt.Errorf("replog: address %q: %w", advertise, err)
	}
	if tlsClient != nil {
		tlsClient = tlsClient.Clone()
		// Hijacking needs HTTP/1.1; raft's protocol then runs in the TLS
		// session the request opened.
		tlsClient.NextProtos = []string{"http/1.1"}
	}
	return &Stream{advertise: addr, tlsClient: tlsClient, signer: signer, conns: make(chan net.Conn), closed: make(chan struct{})}, nil
}

// Accept returns the next peer connection.
func (s *Stream) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept; connections already handed out stay open.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

// Addr is the address the other controllers reach this one at.
func (s *Stream) Addr() net.Addr { return s.advertise }

// Dial opens a raft connection to the controller at address.
func (s *Stream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	var conn net.Conn
	var err error
	if s.tlsClient != nil {
		conn, err = tls.DialWithDialer(&d, "tcp", string(address), s.tlsClient)
	} else {
		conn, err = d.Dial("tcp", string(address))
	}
	if err != nil {
		return nil, err
	}
	if err := s.upgrade(conn, string(address), timeout); err != nil {
		conn.Close()
		return nil, fmt.Errorf("replog: connect to %s: %w", address, err)
	}
	return conn, nil
}

func (s *Stream) upgrade(conn net.Conn, address string, timeout time.Duration) error {
	if timeout > 0 {
		conn.SetDeadline(time.Now().Add(timeout))
		defer conn.SetDeadline(time.Time{})
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+address+Path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", upgradeProto)
	if err := s.signer.SignRequest(req, msgauth.Controller, nil); err != nil {
		return err
	}
	if err := req.Write(conn); err != nil {
		return err
	}
	// The peer writes nothing after its answer until raft's first
	// request arrives, so the reader holds no bytes of the stream.
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("refused: %s", resp.Status)
	}
	return nil
}

// ErrNotController is why a request only controllers may make (a raft
// connection, a peer's ping or reconfigure) is refused: its token is not
// a controller's.
var ErrNotController = errors.New("taken from controllers only")

// Handler takes the other controllers' connections. verify checks the
// request's token and returns its claims (the controller's verifier,
// whose replay cache stops a token from being used twice).
func (s *Stream) Handler(verify func(*http.Request) (*msgauth.Claims, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.Header.Get("Upgrade") != upgradeProto {
			http.Error(w, "raft connections upgrade with "+upgradeProto, http.StatusBadRequest)
			return
		}
		claims, err := verify(r)
		if err == nil && !claims.FromController() {
			err = ErrNotController
		}
		if err != nil {
			http.Error(w, "raft connection refused: "+err.Error(), http.StatusUnauthorized)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "raft needs HTTP/1.1", http.StatusHTTPVersionNotSupported)
			return
		}
		conn, rw, err := hj.Hijack()
		if err != nil {
			return
		}
		// The server's read and write deadlines would cut raft's
		// long-lived connection.
		conn.SetDeadline(time.Time{})
		if _, err := rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + upgradeProto + "\r\n\r\n"); err != nil || rw.Flush() != nil {
			conn.Close()
			return
		}
		c := net.Conn(conn)
		if n := rw.Reader.Buffered(); n > 0 {
			// Raft's first request came with the upgrade.
			c = &bufferedConn{Conn: conn, r: rw.Reader}
		}
		select {
		case s.conns <- c:
		case <-s.closed:
			conn.Close()
		case <-r.Context().Done():
			conn.Close()
		}
	})
}

// bufferedConn reads what the HTTP server had already buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
