package tlsconf

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
)

// serve accepts one connection on a TLS listener and echoes a line.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, io.LimitReader(c, 5))
			}()
		}
	}()
	return ln.Addr().String()
}

func TestPinnedAcceptsOnlyItsCertificate(t *testing.T) {
	srv, pin, err := Ephemeral("srun")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, srv)

	good, err := Pinned(pin)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", addr, good)
	if err != nil {
		t.Fatalf("pinned dial: %v", err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("echo: %q %v", buf, err)
	}
	c.Close()

	// Another listener's certificate, with the first one's pin: an
	// attacker who took the port cannot pass for srun.
	other, _, err := Ephemeral("srun")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.Dial("tcp", serve(t, other), good); !errors.Is(err, ErrPinMismatch) {
		t.Errorf("dial to another certificate: %v, want %v", err, ErrPinMismatch)
	}

	// A plain-text peer gets no clear text from the listener.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(raw)
	if len(got) > 0 && got[0] != 0x15 { // a TLS alert record, if anything
		t.Errorf("plain-text peer read %q", got)
	}
}

func TestPinnedRefusesMalformedFingerprints(t *testing.T) {
	for _, fp := range []string{"", "zz", "abcd", "00112233445566778899aabbccddeeff00112233445566778899aabbccddee"} {
		if _, err := Pinned(fp); err == nil {
			t.Errorf("Pinned(%q): no error", fp)
		}
	}
}
