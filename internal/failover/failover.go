// Package failover sends each request to whichever of a cluster's
// controllers (its SlurmctldHost lines, primary first) is up, as Slurm's
// commands and daemons reach a backup slurmctld when the primary does not
// answer. It is an http.RoundTripper shared by the commands
// (internal/cli/connect), the node daemon, restd and the configless
// fetch.
//
// A request goes first to the controller that answered last. It goes on
// to the next one when the connection could not be made (the request was
// never sent) or when the controller answered 503 with
// droverapi.StandbyHeader (a follower that knows no leader, during an
// election), cycling through all of them with a short pause after each
// round until the retry window ends; then the last error, or the last
// standby answer, is returned. A request that was sent and then lost (the
// connection broke, or a 502 or 504 came back) is sent again only when
// doing so cannot apply it twice: GET and HEAD, and requests carrying
// droverapi.RequestIDHeader, which the transport sets on every job
// submission and allocation and every step creation.
//
// Credentials are single use (internal/msgauth's nonces), so the
// transport that signs requests goes below this one: each attempt is
// signed afresh.
package failover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/internal/droverapi"
)

// Options bound how long a request keeps trying.
type Options struct {
	// ConnectWindow is how long a request keeps going round the
	// controllers while none accepts a connection.
	ConnectWindow time.Duration
	// StandbyWindow replaces ConnectWindow once a controller answered
	// that it is in standby: a leader is being elected.
	StandbyWindow time.Duration
	// DialTimeout is how long one controller has to accept the
	// connection (and finish the TLS handshake) before the next is
	// tried, so that a dead host whose packets are dropped does not hold
	// a request (a node's heartbeat) for the whole window.
	DialTimeout time.Duration
	// Backoff is the first pause after a round of all controllers
	// failed; it doubles up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// MaxBody is the largest request body kept to be sent again; a
	// larger one is sent once, to one controller, as the controller
	// refuses it anyway.
	MaxBody int64
}

// Defaults, from Slurm's defaults for MessageTimeout (10 s) and
// SlurmctldTimeout (120 s); see Windows.
const (
	DefaultConnectWindow = 10 * time.Second
	DefaultStandbyWindow = 180 * time.Second
	DefaultDialTimeout   = 3 * time.Second
	DefaultBackoff       = 100 * time.Millisecond
	DefaultMaxBackoff    = time.Second
	DefaultMaxBody       = 16 << 20
)

// Windows are the retry windows of a cluster whose slurm.conf sets
// MessageTimeout and SlurmctldTimeout (0: Slurm's default), chosen as
// Slurm's commands choose theirs (src/common/slurm_protocol_api.c):
//
//   - _open_controller goes round every SlurmctldHost, starting with the
//     one that answered last, sleeping a second after each round, until
//     MessageTimeout has passed, then fails with
//     SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR ("Unable to contact slurm
//     controller (connect failure)"): ConnectWindow is MessageTimeout.
//   - slurm_send_recv_controller_msg moves on to the next controller
//     while the one it reached answers ESLURM_IN_STANDBY_MODE, for up to
//     SlurmctldTimeout * 1.5 (long enough for a backup to take over):
//     StandbyWindow is that. Slurm sleeps SlurmctldTimeout / 2 after each
//     round of standbys because its backup waits SlurmctldTimeout before
//     taking over; a raft election ends in seconds, so the pause here is
//     the same short backoff as for connection failures.
//
// The dial timeout is Slurm's conn_timeout of slurm_send_addr_recv_msgs
// (MIN(MessageTimeout, 10)) cut to DefaultDialTimeout: a controller on
// the cluster's network accepts in milliseconds or not at all, and the
// next one should get its turn within the window.
func Windows(messageTimeout, slurmctldTimeout time.Duration) Options {
	o := Options{ConnectWindow: messageTimeout, StandbyWindow: slurmctldTimeout + slurmctldTimeout/2}
	if messageTimeout <= 0 {
		o.ConnectWindow = DefaultConnectWindow
	}
	if slurmctldTimeout <= 0 {
		o.StandbyWindow = DefaultStandbyWindow
	}
	o.StandbyWindow = max(o.StandbyWindow, o.ConnectWindow)
	o.DialTimeout = min(DefaultDialTimeout, o.ConnectWindow)
	return o
}

func (o Options) withDefaults() Options {
	if o.ConnectWindow <= 0 {
		o.ConnectWindow = DefaultConnectWindow
	}
	if o.StandbyWindow <= 0 {
		o.StandbyWindow = max(DefaultStandbyWindow, o.ConnectWindow)
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = min(DefaultDialTimeout, o.ConnectWindow)
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	return o
}

// Transport is the failover http.RoundTripper. It is safe for concurrent
// use; keep one per set of controllers, so that what it learns of which
// controller answers serves every request.
type Transport struct {
	next  http.RoundTripper
	urls  []*url.URL
	opts  Options
	hosts map[string]int // controller's host:port -> index in urls
	// cur is the index of the controller that answered last, where the
	// next request starts.
	cur atomic.Int32
}

// New returns a transport that sends requests through next to the
// controllers (base URLs, "http://host:port", in the order to try them).
// A request's own scheme and host are replaced by each controller's in
// turn; its path and query are kept.
func New(next http.RoundTripper, controllers []string, o Options) (*Transport, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	if len(controllers) == 0 {
		return nil, errors.New("failover: no controller to send requests to")
	}
	t := &Transport{next: next, opts: o.withDefaults(), hosts: map[string]int{}}
	for _, c := range controllers {
		u, err := url.Parse(c)
		if err != nil {
			return nil, fmt.Errorf("failover: controller address %q: %w", c, err)
		}
		if u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("failover: controller address %q is not scheme://host:port", c)
		}
		if _, ok := t.hosts[strings.ToLower(u.Host)]; ok {
			continue
		}
		t.hosts[strings.ToLower(u.Host)] = len(t.urls)
		t.urls = append(t.urls, u)
	}
	return t, nil
}

// Current is the base URL of the controller the next request goes to
// first: the one that answered last.
func (t *Transport) Current() string { return t.urls[t.cur.Load()].String() }

// Controllers are the controllers' base URLs in the order of New.
func (t *Transport) Controllers() []string {
	out := make([]string, len(t.urls))
	for i, u := range t.urls {
		out[i] = u.String()
	}
	return out
}

// outcome is one attempt's result.
type outcome int

const (
	answered  outcome = iota // an answer to hand back
	unsent                   // no connection: safe to send elsewhere
	standby                  // 503 with StandbyHeader: try the next
	ambiguous                // sent, then lost: maybe applied
)

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, rest, err := t.replayable(req)
	if err != nil {
		return nil, err
	}
	hdr := req.Header
	if id, _ := req.Context().Value(requestIDKey{}).(string); id != "" && hdr.Get(droverapi.RequestIDHeader) == "" {
		hdr = hdr.Clone()
		hdr.Set(droverapi.RequestIDHeader, id)
	}
	if IsCreation(req.Method, req.URL.Path) && hdr.Get(droverapi.RequestIDHeader) == "" {
		id, err := NewRequestID()
		if err != nil {
			return nil, err
		}
		hdr = hdr.Clone()
		hdr.Set(droverapi.RequestIDHeader, id)
	}
	// Sending again what may have been applied is safe only when it
	// reads, when the controller recognises the retry by its id, or when
	// the caller said applying it twice does no harm.
	again := req.Method == http.MethodGet || req.Method == http.MethodHead ||
		ValidRequestID(hdr.Get(droverapi.RequestIDHeader)) || req.Context().Value(idempotentKey{}) != nil
	ctx := req.Context()
	start := time.Now()
	first := int(t.cur.Load())
	n := len(t.urls)
	if rest != nil {
		// Too large to keep: one try, where the last answer came from.
		return t.attempt(req, hdr, first, rest, nil)
	}
	pause := t.opts.Backoff
	window := t.opts.ConnectWindow
	var lastErr error
	var lastResp, lastStandby *http.Response
	for i := 0; ; i++ {
		idx := (first + i) % n
		var b io.ReadCloser
		switch {
		case body == nil:
		case len(body) == 0:
			b = http.NoBody
		default:
			b = replayBody{bytes.NewReader(body), body}
		}
		var out outcome
		resp, err := t.attempt(req, hdr, idx, b, &out)
		switch {
		case out == answered:
			if err == nil {
				t.cur.Store(int32(idx))
				t.follow(resp)
			} else {
				t.passOver(first, idx)
			}
			return resp, err
		case out == ambiguous && !again:
			t.passOver(first, idx)
			return resp, err
		case out == standby:
			window = t.opts.StandbyWindow
			lastStandby = resp
		}
		if err != nil {
			lastErr, lastResp = err, nil
		} else {
			lastErr, lastResp = nil, resp
		}
		if ctx.Err() != nil || time.Since(start) >= window {
			break
		}
		if (i+1)%n == 0 {
			timer := time.NewTimer(min(pause, max(0, window-time.Since(start))))
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
			timer.Stop()
			pause = min(pause*2, t.opts.MaxBackoff)
			if ctx.Err() != nil {
				break
			}
		}
	}
	// A standby answer says more than a refused connection: the
	// command prints the controller's error, as Slurm's print
	// ESLURM_IN_STANDBY_MODE's.
	if lastStandby != nil {
		return lastStandby, nil
	}
	if lastResp != nil {
		return lastResp, nil
	}
	return nil, lastErr
}

// attempt sends req to controller idx with the headers hdr and body b.
// With out nil the answer is handed back whatever it is; otherwise *out
// says what became of the request, and an answer that is not handed
// back is read and closed (kept in the returned response, to return if
// it is the last).
func (t *Transport) attempt(req *http.Request, hdr http.Header, idx int, b io.ReadCloser, out *outcome) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	var connected, wrote, dialExpired atomic.Bool
	trace := &httptrace.ClientTrace{
		GotConn:      func(httptrace.GotConnInfo) { connected.Store(true) },
		WroteHeaders: func() { wrote.Store(true) },
	}
	ctx = httptrace.WithClientTrace(ctx, trace)
	timer := time.AfterFunc(t.opts.DialTimeout, func() {
		if !connected.Load() {
			dialExpired.Store(true)
			cancel()
		}
	})
	r := req.Clone(ctx)
	r.Header = hdr.Clone()
	u := t.urls[idx]
	r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
	if req.Host == "" || req.Host == req.URL.Host {
		// The Host header follows the controller, unless the caller
		// set one of its own (restd passes its client's on).
		r.Host = ""
	}
	if b != nil {
		r.Body = b
		r.GetBody = nil
		r.ContentLength = req.ContentLength
		if b == http.NoBody {
			r.ContentLength = 0
			r.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		}
		if body, ok := b.(replayBody); ok {
			// The transport below may send it again itself over a
			// fresh connection when a kept one was found closed.
			r.GetBody = func() (io.ReadCloser, error) { return body.again(), nil }
			r.ContentLength = int64(len(body.data))
		}
	}
	resp, err := t.next.RoundTrip(r)
	timer.Stop()
	if err != nil {
		cancel()
		if dialExpired.Load() && req.Context().Err() == nil {
			// A dial error, as the commands tell a connect failure
			// (sbatch's "Unable to contact slurm controller").
			err = &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("%s did not answer within %s: %w", u.Host, t.opts.DialTimeout, os.ErrDeadlineExceeded)}
		}
		if out != nil {
			switch {
			case req.Context().Err() != nil:
				*out = answered // the caller gave up: hand its error back
			case wrote.Load():
				*out = ambiguous
			default:
				*out = unsent
			}
		}
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	if out == nil {
		return resp, nil
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(droverapi.StandbyHeader) != "":
		*out = standby
	case resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusGatewayTimeout,
		// A leader that lost its place while serving says 503 without
		// the header (ESLURM_IN_STANDBY_USE_BACKUP): nothing was
		// applied, but only what is safe to repeat is, to be sure.
		resp.StatusCode == http.StatusServiceUnavailable:
		*out = ambiguous
	default:
		*out = answered
		return resp, nil
	}
	// An answer that may not be the last: kept whole (it is short, an
	// error envelope) and the connection freed for the next attempt.
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if rerr != nil && *out == ambiguous {
		return nil, fmt.Errorf("read %d answer from %s: %w", resp.StatusCode, u.Host, rerr)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

// passOver starts the next request after controller idx, which took a
// request and then failed it or did not answer in the caller's time (a
// controller whose process hangs accepts connections and never
// answers): unless another request found one that answers since.
func (t *Transport) passOver(first, idx int) {
	t.cur.CompareAndSwap(int32(first), int32((idx+1)%len(t.urls)))
}

type idempotentKey struct{}

// Idempotent returns ctx marking the requests made with it as safe to
// send again when they may have been applied (the connection broke after
// they were sent): applying them twice does no harm, as a node's
// heartbeat, or a report that is sent until it is acknowledged.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

type requestIDKey struct{}

// WithRequestID returns ctx naming the client request the requests made
// with it belong to (droverapi.RequestIDHeader, unless a request sets the
// header itself): a caller that asks again on its own, as srun does while
// a step waits for CPUs, keeps one id across all its tries, so that the
// controller answers a try after one whose answer was lost with what
// that one made.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// follow moves the next request to the leader a follower named, when it
// is one of the controllers: it answers without forwarding. A name not
// among them is ignored, so that no answer can send the requests
// elsewhere.
func (t *Transport) follow(resp *http.Response) {
	v := resp.Header.Get(droverapi.LeaderHeader)
	if v == "" {
		return
	}
	addr, err := ParseLeader(v)
	if err != nil {
		return
	}
	if i, ok := t.hosts[addr]; ok {
		t.cur.Store(int32(i))
	}
}

// replayable reads req's body to send it again (nil: none). A body over
// MaxBody is not kept: rest is then the whole of it, to be sent once.
func (t *Transport) replayable(req *http.Request) (data []byte, rest io.ReadCloser, err error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil, nil
	}
	if req.ContentLength > t.opts.MaxBody {
		return nil, req.Body, nil
	}
	data, err = io.ReadAll(io.LimitReader(req.Body, t.opts.MaxBody+1))
	if err != nil {
		req.Body.Close()
		return nil, nil, fmt.Errorf("read request body: %w", err)
	}
	if int64(len(data)) > t.opts.MaxBody {
		return nil, struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), req.Body), req.Body}, nil
	}
	req.Body.Close()
	if data == nil {
		data = []byte{}
	}
	return data, nil, nil
}

// replayBody is a kept request body, which can be read again.
type replayBody struct {
	*bytes.Reader
	data []byte
}

func (b replayBody) Close() error { return nil }

func (b replayBody) again() io.ReadCloser { return replayBody{bytes.NewReader(b.data), b.data} }

// cancelBody ends an attempt's context once its answer is read.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
