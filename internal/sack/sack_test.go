package sack

import (
	"context"
	"errors"
	"io"
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

func serve(t *testing.T, addr string) {
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

func TestServiceUnavailable(t *testing.T) {
	c := NewClient("@drover-test/none/" + strconv.Itoa(os.Getpid()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Cred(ctx, "GET", "/", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "drover sackd") {
		t.Fatalf("%v", err)
	}
}

func TestRefusesOtherAudiences(t *testing.T) {
	addr := "@drover-test/sack-aud/" + strconv.Itoa(os.Getpid())
	serve(t, addr)
	c := NewClient(addr)
	req, _ := http.NewRequest("POST", "http://sack"+Path, strings.NewReader(`{"aud":"slurmd:n1","method":"POST","uri":"/drover/v1/launch","body_hash":"`+msgauth.BodyHash(nil)+`"}`))
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a credential for a node daemon: %d, want 400", resp.StatusCode)
	}
}
