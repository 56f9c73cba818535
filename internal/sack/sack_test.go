package sack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"log/slog"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
)

var key = []byte("0123456789abcdef0123456789abcdef")

func serve(t testing.TB, addr string) {
	t.Helper()
	l, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{Signer: &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Issuer: msgauth.Host("login1")}, Logger: slog.Default()}
	done := make(chan struct{})
	go func() { s.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestCredentialForPeer: the service vouches for the uid and gid the
// kernel reports for its peer, for the one request asked, and the
// controller's checker takes it (and only once).
func TestCredentialForPeer(t *testing.T) {
	for name, addr := range map[string]string{
		"abstract": "@drover-test/sack/" + strconv.Itoa(os.Getpid()),
		"path":     filepath.Join(t.TempDir(), "sack.socket"),
	} {
		t.Run(name, func(t *testing.T) {
			serve(t, addr)
			if addr[0] != '@' {
				if st, err := os.Stat(addr); err != nil || st.Mode().Perm() != 0o666 {
					t.Fatalf("socket %v %v", st, err)
				}
			}
			v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: msgauth.Controller}
			var seen atomic.Int32
			ctl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := v.VerifyRequest(r, 1<<20)
				if err != nil {
					http.Error(w, err.Error(), 401)
					return
				}
				seen.Add(1)
				if *c.UID != uint32(os.Getuid()) || *c.GID != uint32(os.Getgid()) || c.Kind != msgauth.KindUser || c.Issuer() != "sack:login1" {
					http.Error(w, "wrong claims", 500)
					return
				}
				b, _ := io.ReadAll(r.Body)
				io.WriteString(w, "ok "+string(b))
			}))
			defer ctl.Close()
			hc := &http.Client{Transport: &Transport{Next: http.DefaultTransport, Client: NewClient(addr)}}
			for _, body := range []string{"", `{"job":{}}`} {
				var rd io.Reader
				method := "GET"
				if body != "" {
					rd, method = strings.NewReader(body), "POST"
				}
				req, _ := http.NewRequest(method, ctl.URL+"/slurm/v0.0.44/jobs/?update_time=5", rd)
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(out) != "ok "+body {
					t.Fatalf("%s: %d %s", method, resp.StatusCode, out)
				}
			}
			if seen.Load() != 2 {
				t.Errorf("%d requests verified", seen.Load())
			}
		})
	}
}

// TestClientSession: a program asks its host's service once per session,
// not once per request, and every token it signs passes the controller's
// check once.
func TestClientSession(t *testing.T) {
	addr := "@drover-test/sack-session/" + strconv.Itoa(os.Getpid())
	serve(t, addr)
	c := NewClient(addr)
	sessions := map[string]bool{}
	v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: msgauth.Controller}
	for i := range 20 {
		body := []byte(strconv.Itoa(i))
		tok, err := c.Cred(context.Background(), "POST", "/slurm/v0.0.44/job/submit", body)
		if err != nil {
			t.Fatal(err)
		}
		claims, err := v.Verify(tok, "POST", "/slurm/v0.0.44/job/submit", body)
		if err != nil || *claims.UID != uint32(os.Getuid()) || claims.Session == "" {
			t.Fatalf("request %d: %+v %v", i, claims, err)
		}
		sessions[claims.Session] = true
	}
	// One session signed them all: the service was asked once.
	if len(sessions) != 1 {
		t.Errorf("%d sessions for 20 requests", len(sessions))
	}
	// Past half its life the session is renewed.
	first := c.session.Desc
	c.renew = time.Now().Add(-time.Second)
	if _, err := c.Cred(context.Background(), "GET", "/", nil); err != nil {
		t.Fatal(err)
	}
	if c.session.Desc == first {
		t.Error("the session was not renewed")
	}
}

// TestClientWithoutSessions: a service that grants no session (an older
// one) still vouches for each request.
func TestClientWithoutSessions(t *testing.T) {
	addr := "@drover-test/sack-nosession/" + strconv.Itoa(os.Getpid())
	l, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	signer := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Issuer: msgauth.Host("old")}
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var q Request
			json.Unmarshal(line, &q)
			var reply Reply
			if q.Op != "" {
				reply.Error = "bad request"
			} else {
				reply.Cred, _ = signer.SignUser(msgauth.UserID{UID: 7, GID: 7}, q.Audience, q.Method, q.URI, q.BodyHash)
			}
			out, _ := json.Marshal(reply)
			conn.Write(append(out, '\n'))
		}
	}()
	c := NewClient(addr)
	v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: msgauth.Controller}
	for range 2 {
		tok, err := c.Cred(context.Background(), "GET", "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		if claims, err := v.Verify(tok, "GET", "/", nil); err != nil || *claims.UID != 7 || claims.Session != "" {
			t.Fatalf("%+v %v", claims, err)
		}
	}
}

func TestServiceUnavailable(t *testing.T) {
	c := NewClient("@drover-test/none/" + strconv.Itoa(os.Getpid()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Cred(ctx, "GET", "/", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "drover sackd") {
		t.Fatalf("%v", err)
	}
}

// ask sends one raw line to the service and returns its answer.
func ask(t testing.TB, addr string, line []byte) Reply {
	t.Helper()
	conn, err := net.Dial("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	conn.Write(append(bytes.ReplaceAll(line, []byte("\n"), nil), '\n'))
	out, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return Reply{Error: "closed: " + err.Error()}
	}
	var r Reply
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("answer %q: %v", out, err)
	}
	return r
}

func TestRefusesOtherAudiences(t *testing.T) {
	addr := "@drover-test/sack-aud/" + strconv.Itoa(os.Getpid())
	serve(t, addr)
	r := ask(t, addr, []byte(`{"aud":"slurmd:n1","method":"POST","uri":"/drover/v1/launch","body_hash":"`+msgauth.BodyHash(nil)+`"}`))
	if r.Cred != "" || !strings.Contains(r.Error, "one request to the controller") {
		t.Fatalf("a credential for a node daemon: %+v", r)
	}
	if r := ask(t, addr, bytes.Repeat([]byte("x"), maxRequest+10)); r.Cred != "" {
		t.Fatalf("an oversized request: %+v", r)
	}
}

// FuzzRequest: any request on the socket gets an answer or a closed
// connection; a credential comes only for a well-formed request to the
// controller, and names the peer.
func FuzzRequest(f *testing.F) {
	f.Add([]byte(`{"aud":"slurmctld","method":"GET","uri":"/","body_hash":"` + msgauth.BodyHash(nil) + `"}`))
	f.Add([]byte(`{"aud":"slurmd:n1"}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`{"op":"session"}`))
	f.Add([]byte(`{"op":"other"}`))
	addr := "@drover-test/sack-fuzz/" + strconv.Itoa(os.Getpid())
	serve(f, addr)
	v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: msgauth.Controller}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := ask(t, addr, body)
		if r.Session != nil {
			var q Request
			if json.Unmarshal(bytes.ReplaceAll(body, []byte("\n"), nil), &q) != nil || q.Op != OpSession {
				t.Fatalf("a session for %q", body)
			}
			ss := msgauth.Session{Desc: r.Session.Desc, KeyID: r.Session.KeyID, Key: r.Session.Key, Expires: r.Session.Expires, Issuer: r.Session.Issuer}
			tok, err := ss.Sign(msgauth.Controller, "GET", "/", msgauth.BodyHash(nil), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			claims, err := v.Verify(tok, "GET", "/", nil)
			if err != nil || *claims.UID != uint32(os.Getuid()) {
				t.Fatalf("a session token for %q: %+v %v", body, claims, err)
			}
			return
		}
		if r.Cred == "" {
			return
		}
		var q Request
		if json.Unmarshal(bytes.ReplaceAll(body, []byte("\n"), nil), &q) != nil || q.Audience != msgauth.Controller {
			t.Fatalf("a credential for %q", body)
		}
		claims, err := v.Verify(r.Cred, q.Method, q.URI, nil)
		if err != nil && q.BodyHash == msgauth.BodyHash(nil) {
			t.Fatalf("credential for %q does not verify: %v", body, err)
		}
		if err == nil && *claims.UID != uint32(os.Getuid()) {
			t.Fatalf("credential for uid %d", *claims.UID)
		}
	})
}

// A session granted in the second after the client read its clock: the
// token is dated after the session, so that it does not outlive the
// session's TTL (the controller refused "lives 1m1s, over 1m0s").
func TestSessionAcrossASecond(t *testing.T) {
	addr := "@drover-test/sack-second/" + strconv.Itoa(os.Getpid())
	l, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	second := time.Now().Truncate(time.Second).Add(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{Signer: &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Issuer: msgauth.Host("login1"),
		Now: func() time.Time { return second }}, Logger: slog.Default()}
	done := make(chan struct{})
	go func() { s.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	// The client reads its clock just before that second, asks for a
	// session, and reads it again just after.
	reads := []time.Time{second.Add(-time.Millisecond), second.Add(time.Millisecond)}
	c := NewClient(addr)
	c.now = func() time.Time {
		t := reads[0]
		if len(reads) > 1 {
			reads = reads[1:]
		}
		return t
	}
	tok, err := c.Cred(context.Background(), "GET", "/slurm/v0.0.44/ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: msgauth.Controller}
	if _, err := v.Verify(tok, "GET", "/slurm/v0.0.44/ping", nil); err != nil {
		t.Errorf("token of a session granted across a second: %v", err)
	}
}
