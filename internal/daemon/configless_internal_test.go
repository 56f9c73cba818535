package daemon

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
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

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"

	"github.com/droverhq/drover/internal/testutil"
)

// srvResolver answers _slurmctld._tcp with one controller.
type srvResolver struct {
	host string
	port uint16
}

func (r srvResolver) LookupSRV(_ context.Context, _, _, name string) (string, []*net.SRV, error) {
	if name != configless.SRVRecord {
		return "", nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	return name, []*net.SRV{{Target: r.host + ".", Port: r.port}}, nil
}

// TestNodeConfigless: a node daemon without --conf-server and without a
// local slurm.conf finds the controller by its SRV record, fetches the
// files into SlurmdSpoolDir/conf-cache signed as its node, and later,
// with the controller down, runs from that copy; with neither, it
// retries with slurmd's wording until it is stopped.
func TestNodeConfigless(t *testing.T) {
	etc := t.TempDir()
	keyBase := filepath.Join(etc, "slurm.conf") // never written: configless
	if err := clusterkey.WriteKey(clusterkey.KeyPath(keyBase)); err != nil {
		t.Fatal(err)
	}
	ring, err := clusterkey.Load(keyBase, "")
	if err != nil {
		t.Fatal(err)
	}
	verifier := &msgauth.Verifier{Keys: clusterkey.NewHolder(ring), Audience: msgauth.Controller}
	spool := filepath.Join(t.TempDir(), "spool")
	var up atomic.Bool
	up.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := verifier.VerifyRequest(r, nodeproto.MaxBody)
		switch {
		case !up.Load():
			http.Error(w, "down", http.StatusBadGateway)
		case err != nil || r.URL.Path != nodeproto.PathConfig:
			nodeproto.Fail(w, http.StatusUnauthorized, err)
		case claims.Issuer() != msgauth.Node("n1"):
			nodeproto.Fail(w, http.StatusForbidden, err)
		default:
			body, _ := json.Marshal(nodeproto.ConfigReply{SlurmdSpoolDir: spool, Files: []nodeproto.ConfigFile{
				{Name: "slurm.conf", Content: "ClusterName=c\n", Exists: true}, {Name: "gres.conf", Content: "Name=gpu\n", Exists: true}}})
			tok, _ := configless.SignReply(&msgauth.Signer{Keys: clusterkey.NewHolder(ring), Issuer: msgauth.Controller}, claims.Issuer(), r, body)
			w.Header().Set(msgauth.Header, tok)
			w.Write(body)
		}
	}))
	defer srv.Close()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	Resolver = srvResolver{host: host, port: uint16(p)}
	defer func() { Resolver = nil }()

	v := Settings()
	v.Set("spool-dir", spool)
	v.Set("conf-retry", "50ms")
	var logs testutil.SyncBuffer
	logger := Logger(&logs, "debug")
	path, f, err := nodeConfigless(context.Background(), v, "n1", keyBase, logger)
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(spool, configless.CacheFolder)
	if path != filepath.Join(cache, "slurm.conf") || f.cache != cache {
		t.Errorf("runs from %s, cache %s; want %s/slurm.conf", path, f.cache, cache)
	}
	for _, name := range []string{"slurm.conf", "gres.conf"} {
		fi, err := os.Stat(filepath.Join(cache, name))
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s in the cache: %v %v", name, fi, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "slurm.key")); err == nil {
		t.Errorf("the key is in the cache")
	}

	// The controller is down: the cached copy.
	up.Store(false)
	path, f, err = nodeConfigless(context.Background(), v, "n1", keyBase, logger)
	if err != nil || path != filepath.Join(cache, "slurm.conf") || f.last != nil {
		t.Fatalf("with the controller down: %s, %v (fetched %v)", path, err, f != nil && f.last != nil)
	}
	if !strings.Contains(logs.String(), "running from the cached copy") {
		t.Errorf("no word of the cached copy in the log:\n%s", logs.String())
	}

	// Down, and no cache: retries until stopped.
	v.Set("spool-dir", filepath.Join(t.TempDir(), "empty"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err = nodeConfigless(ctx, v, "n1", keyBase, logger)
	if err == nil || !strings.Contains(err.Error(), "failed to load configs from "+host) {
		t.Errorf("no controller and no cache: error = %v", err)
	}
	if n := strings.Count(logs.String(), "failed to load configs. Retrying in 50ms."); n < 2 {
		t.Errorf("%d retries logged, want several:\n%s", n, logs.String())
	}
}

// TestWantsConfigless follows Slurm's order: --conf-server, then
// SLURM_CONF_SERVER; a named slurm.conf wins over the SRV record.
func TestWantsConfigless(t *testing.T) {
	t.Setenv("SLURM_CONF_SERVER", "")
	t.Setenv("SLURM_CONF", "")
	v := Settings()
	v.Set("conf-server", "ctl")
	v.Set("conf", "/etc/x/slurm.conf")
	if !wantsConfigless(v) {
		t.Errorf("--conf-server with --conf: not configless")
	}
	v = Settings()
	v.Set("conf", "/etc/x/slurm.conf")
	if wantsConfigless(v) {
		t.Errorf("--conf alone: configless")
	}
	t.Setenv("SLURM_CONF_SERVER", "ctl")
	if !wantsConfigless(v) {
		t.Errorf("SLURM_CONF_SERVER with --conf: not configless")
	}
	t.Setenv("SLURM_CONF_SERVER", "")
	t.Setenv("SLURM_CONF", "/etc/x/slurm.conf")
	if wantsConfigless(Settings()) {
		t.Errorf("SLURM_CONF: configless")
	}
}

// TestConfiglessTLS: with --ca-cert-file the first fetch goes over TLS
// and takes only a controller whose certificate that CA signed.
func TestConfiglessTLS(t *testing.T) {
	etc := t.TempDir()
	keyBase := filepath.Join(etc, "slurm.conf")
	if err := clusterkey.WriteKey(clusterkey.KeyPath(keyBase)); err != nil {
		t.Fatal(err)
	}
	ring, err := clusterkey.Load(keyBase, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{{Name: "slurm.conf", Content: "ClusterName=tls\n", Exists: true}}})
		tok, _ := configless.SignReply(&msgauth.Signer{Keys: clusterkey.NewHolder(ring), Issuer: msgauth.Controller}, msgauth.Node("n1"), r, body)
		w.Header().Set(msgauth.Header, tok)
		w.Write(body)
	}))
	defer srv.Close()
	ca := filepath.Join(etc, "ca_cert.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	v := Settings()
	v.Set("conf-server", strings.TrimPrefix(srv.URL, "https://"))
	v.Set("spool-dir", t.TempDir())
	v.Set("conf-retry", "20ms")
	var logs testutil.SyncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// Plain HTTP to a TLS port does not do.
	if _, _, err := nodeConfigless(ctx, v, "n1", keyBase, Logger(&logs, "info")); err == nil {
		t.Fatalf("a plain fetch from a TLS controller succeeded")
	}
	v.Set("ca-cert-file", ca)
	path, _, err := nodeConfigless(context.Background(), v, "n1", keyBase, Logger(&logs, "info"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "ClusterName=tls\n" {
		t.Errorf("fetched over TLS: %q", b)
	}
}

// TestFetcherTriesEveryController: after the first fetch the fetcher
// also asks the SlurmctldHosts of the fetched slurm.conf (--conf-server
// named one), goes past one in standby, and then asks first the one
// that answered.
func TestFetcherTriesEveryController(t *testing.T) {
	etc := t.TempDir()
	keyBase := filepath.Join(etc, "slurm.conf")
	if err := clusterkey.WriteKey(clusterkey.KeyPath(keyBase)); err != nil {
		t.Fatal(err)
	}
	ring, err := clusterkey.Load(keyBase, "")
	if err != nil {
		t.Fatal(err)
	}
	keys := clusterkey.NewHolder(ring)
	// Two controller hosts share SlurmctldPort: 127.0.0.1 and .2.
	var l1, l2 net.Listener
	for range 20 {
		if l1, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l2, err = net.Listen("tcp", strings.Replace(l1.Addr().String(), "127.0.0.1", "127.0.0.2", 1)); err == nil {
			break
		}
		l1.Close()
	}
	if l2 == nil {
		t.Skip("no port free on both 127.0.0.1 and 127.0.0.2")
	}
	port := l1.Addr().(*net.TCPAddr).Port
	var standbys, answers atomic.Int32
	primary := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		standbys.Add(1)
		w.Header().Set(droverapi.StandbyHeader, "1")
		nodeproto.Fail(w, http.StatusServiceUnavailable, errors.New("in standby"))
	}))
	primary.Listener = l1
	primary.Start()
	defer primary.Close()
	backup := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answers.Add(1)
		body, _ := json.Marshal(nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{{Name: "slurm.conf", Content: "ClusterName=c\n", Exists: true}}})
		tok, _ := configless.SignReply(&msgauth.Signer{Keys: keys, Issuer: msgauth.Controller}, msgauth.Node("n1"), r, body)
		w.Header().Set(msgauth.Header, tok)
		w.Write(body)
	}))
	backup.Listener = l2
	backup.Start()
	defer backup.Close()

	f := &fetcher{servers: []configless.Server{{Host: "127.0.0.1", Port: port}},
		client: nodeproto.NewClient(&msgauth.Signer{Keys: keys, Issuer: msgauth.Node("n1")}, nil),
		cache:  t.TempDir(), logger: Logger(&testutil.SyncBuffer{}, "debug")}
	if _, err := f.fetch(context.Background()); err == nil {
		t.Fatal("fetched with the only known controller in standby")
	}
	sc, err := slurmconf.Parse(strings.NewReader(fmt.Sprintf("ClusterName=c\nSlurmctldHost=ctl1(127.0.0.1)\nSlurmctldHost=ctl2(127.0.0.2)\nSlurmctldPort=%d\n", port)), "slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	f.addControllers(sc)
	for i := range 2 {
		if _, err := f.fetch(context.Background()); err != nil {
			t.Fatalf("fetch %d: %v", i, err)
		}
	}
	// The primary was asked on the first two fetches, not the third.
	if standbys.Load() != 2 || answers.Load() != 2 {
		t.Errorf("standby answers %d, backup answers %d; want 2 and 2", standbys.Load(), answers.Load())
	}
}
