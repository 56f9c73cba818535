package nodeagent

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/nodeproto"
	stepcred "github.com/droverhq/drover/internal/step/cred"
	"github.com/droverhq/drover/internal/tlsconf"
)

// newTLSSrun is a fake srun listening with a certificate of its own, as
// srun does when the cluster speaks TLS; it returns the fingerprint and
// a channel of the handshakes that failed.
func newTLSSrun(t *testing.T) (*fakeSrun, string, chan error) {
	t.Helper()
	f := newFakeSrun(t)
	cfg, pin, err := tlsconf.Ephemeral("srun")
	if err != nil {
		t.Fatal(err)
	}
	f.handshaken = make(chan net.Conn, 4)
	failed := make(chan error, 4)
	go func() {
		for {
			c, err := f.ln.Accept()
			if err != nil {
				return
			}
			tc := tls.Server(c, cfg)
			if err := tc.Handshake(); err != nil {
				c.Close()
				failed <- err
				continue
			}
			f.handshaken <- tc
		}
	}()
	return f, pin, failed
}

// tlsAgent is a node daemon of a cluster with TLSType=tls (its client
// side: the step's I/O is dialled from it).
func tlsAgent(t *testing.T) *testAgent {
	return startAgent(t, func(c *Config) { c.TLSClient = &tls.Config{MinVersion: tls.VersionTLS12} })
}

// TestStepIOOverTLS: under TLS the node daemon reaches srun over TLS, to
// the certificate the credential names, and the step runs as ever.
func TestStepIOOverTLS(t *testing.T) {
	srun, pin, _ := newTLSSrun(t)
	l := newLaunch(t, srun.addr(), 1, "echo", "over tls")
	sign(t, &l, srun.addr(), func(c *stepcred.Cred) { c.SrunCert = pin })
	runStepWith(t, tlsAgent(t), l, srun)
	srun.finish()
	if srun.res.hello == nil || srun.res.stdout[0] != "over tls\n" || srun.res.exits[0].Code != 0 {
		t.Errorf("step over TLS: %+v", srun.res)
	}
}

// TestStepIOPinned: a port whose certificate is not the one the
// credential names (someone else listening there) is never given the
// step's Hello: the launch fails as a connection failure does, and the
// node says why in its log.
func TestStepIOPinned(t *testing.T) {
	srun, _, failed := newTLSSrun(t)
	_, otherPin, err := tlsconf.Ephemeral("srun")
	if err != nil {
		t.Fatal(err)
	}
	l := newLaunch(t, srun.addr(), 1, "echo", "secret")
	sign(t, &l, srun.addr(), func(c *stepcred.Cred) { c.SrunCert = otherPin })
	ta := tlsAgent(t)
	err = ta.post(nodeproto.PathStepLaunch, l)
	var se *nodeproto.StatusError
	if !errors.As(err, &se) || se.Msg != "Communication connection failure" {
		t.Fatalf("launch to a port with another certificate: %v", err)
	}
	select {
	case err := <-failed:
		t.Logf("srun's side: %v", err)
	case c := <-srun.handshaken:
		c.Close()
		t.Fatal("the node finished a handshake with the wrong certificate")
	case <-time.After(testWait):
		t.Fatal("the node never dialled")
	}
	if logs := ta.logs(); !strings.Contains(logs, "cannot connect to srun") || !strings.Contains(logs, tlsconf.ErrPinMismatch.Error()) {
		t.Errorf("node log does not say why:\n%s", logs)
	}
	if n := len(ta.a.stepsOf(7, nil)); n != 0 {
		t.Errorf("%d steps left after a failed launch", n)
	}
}

// TestStepIOTLSNeedsCert: under TLS a credential that names no
// certificate of srun's is refused, since the I/O would be clear text.
func TestStepIOTLSNeedsCert(t *testing.T) {
	ta := tlsAgent(t)
	l := newLaunch(t, "127.0.0.1:1", 1, "true")
	checkRefused(t, ta.post(nodeproto.PathStepLaunch, l), "Invalid job credential: the cluster speaks TLS and the credential names no certificate of srun's")
	if n := len(ta.a.stepsOf(7, nil)); n != 0 {
		t.Errorf("%d steps registered after a refused launch", n)
	}
}

// TestStepSrunUnreachable: a node that cannot reach srun fails the
// launch (srun reports it) instead of leaving srun waiting.
func TestStepSrunUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ta := startAgent(t, nil)
	l := newLaunch(t, addr, 1, "true")
	err = ta.post(nodeproto.PathStepLaunch, l)
	var se *nodeproto.StatusError
	if !errors.As(err, &se) || se.Msg != "Communication connection failure" {
		t.Fatalf("launch with srun gone: %v", err)
	}
	if n := len(ta.a.stepsOf(7, nil)); n != 0 {
		t.Errorf("%d steps left after a failed launch", n)
	}
}
