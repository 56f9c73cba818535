package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/daemon"
)

// TestSackConfigless runs a controller with enable_configless and a
// login host's credential service that has only --conf-server and the
// key: the service fetches the commands' files into its folder, with
// slurm.conf 0644 and no key, and after the controller's slurm.conf is
// edited and reconfigured, its copy follows.
func TestSackConfigless(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	port := freePort(t)
	base := fmt.Sprintf("ClusterName=cfgless\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%d\nStateSaveLocation=%s/state\n"+
		"SlurmctldParameters=enable_configless\n"+
		"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES State=UP\n", port, dir, freePort(t))
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("slurm.conf", base)
	write("topology.conf", "SwitchName=s0 Nodes=n1\n")
	write("gres.conf", "# for node daemons only\n")
	if err := clusterkey.WriteKey(clusterkey.KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := daemon.Logger(lockedWriter{&logs, &logMu}, "info")
	defer func() {
		if t.Failed() {
			logMu.Lock()
			t.Log(logs.String())
			logMu.Unlock()
		}
	}()
	v := daemon.Settings()
	v.Set("conf", conf)
	ready := make(chan net.Addr, 1)
	ctlDone := make(chan error, 1)
	go func() { ctlDone <- daemon.RunController(ctx, v, logger, func(a net.Addr) { ready <- a }) }()
	select {
	case <-ready:
	case err := <-ctlDone:
		t.Fatalf("controller did not start: %v", err)
	}

	login := t.TempDir()
	cache := filepath.Join(login, "run", "conf")
	s := daemon.Settings()
	s.Set("conf-server", fmt.Sprintf("127.0.0.1:%d", port))
	s.Set("key-file", clusterkey.KeyPath(conf))
	s.Set("conf-dir", cache)
	s.Set("conf-refresh", "100ms")
	s.Set("sack-socket", filepath.Join(login, "sack.sock"))
	s.Set("name", "login1")
	sackReady := make(chan string, 1)
	sackDone := make(chan error, 1)
	go func() { sackDone <- daemon.RunSack(ctx, s, logger, func(a string) { sackReady <- a }) }()
	select {
	case <-sackReady:
	case err := <-sackDone:
		t.Fatalf("sackd did not start: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("sackd did not start in 20s")
	}
	defer func() {
		cancel()
		<-sackDone
		if err := <-ctlDone; err != nil {
			t.Errorf("controller: %v", err)
		}
	}()

	entries, _ := os.ReadDir(cache)
	var got []string
	for _, e := range entries {
		fi, _ := e.Info()
		got = append(got, fmt.Sprintf("%s %v", e.Name(), fi.Mode()))
	}
	if want := "slurm.conf -rw-r--r--,topology.conf -rw-r--r--"; strings.Join(got, ",") != want {
		t.Errorf("login host's cache holds %v, want %s", got, want)
	}

	// The controller's slurm.conf changes and it reconfigures.
	write("slurm.conf", base+"# edited\nPartitionName=extra Nodes=n1 State=UP\n")
	sock := filepath.Join(dir, "state", "drover.sock")
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	resp, err := client.Get("http://localhost/slurm/v0.0.44/reconfigure/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("reconfigure: HTTP %d", resp.StatusCode)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(cache, "slurm.conf"))
		if strings.Contains(string(b), "PartitionName=extra") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the login host's slurm.conf did not follow the reconfigure:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
