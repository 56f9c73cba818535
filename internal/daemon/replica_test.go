package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	"github.com/droverhq/drover/internal/droverapi"
)

// replicaDaemon is one of several controllers run in this process, each
// on a loopback address of its own.
type replicaDaemon struct {
	name, addr, sock string
	cancel           context.CancelFunc
	done             chan error
	logs             bytes.Buffer
	logMu            sync.Mutex
}

func (d *replicaDaemon) log() string {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	return d.logs.String()
}

// do sends a request to the controller's unix socket, as a command on
// its host does.
func (d *replicaDaemon) do(method, path, body string) (int, http.Header, map[string]any) {
	code, h, data := d.doPath(method, "/slurm/v0.0.44/"+path, body)
	var out map[string]any
	if code != 0 {
		_ = json.Unmarshal(data, &out)
	} else {
		out = map[string]any{"transport": string(data)}
	}
	return code, h, out
}

// doPath sends a request for path to the controller's unix socket and
// returns the raw answer (code 0 and the error when none came).
func (d *replicaDaemon) doPath(method, path, body string) (int, http.Header, []byte) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "unix", d.sock)
	}}}
	req, _ := http.NewRequest(method, "http://localhost"+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, []byte(err.Error())
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data
}

// replicaCluster is three controllers of one cluster, each on a
// loopback address of its own, stopped when the test ends.
type replicaCluster struct {
	t       *testing.T
	conf    string
	port    int
	daemons []*replicaDaemon
}

func startReplicaCluster(t *testing.T) *replicaCluster {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	port := freePort(t)
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterName=ha\n")
	daemons := []*replicaDaemon{}
	for i := 1; i <= 3; i++ {
		d := &replicaDaemon{name: fmt.Sprintf("ctl%d", i), addr: fmt.Sprintf("127.0.0.%d", i)}
		d.sock = filepath.Join(dir, d.name+".sock")
		daemons = append(daemons, d)
		fmt.Fprintf(&b, "SlurmctldHost=%s(%s)\n", d.name, d.addr)
	}
	fmt.Fprintf(&b, "SlurmctldPort=%d\nSlurmctldTimeout=4\nAccountingStorageType=accounting_storage/none\nStateSaveLocation=%s/state\n"+
		"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES State=UP\n", port, dir, freePort(t))
	// The programs slurmctld runs when it takes and leaves control.
	for _, p := range []string{"on", "off"} {
		prog := filepath.Join(dir, "primary-"+p)
		if err := os.WriteFile(prog, []byte("#!/bin/sh\necho "+p+" >> "+filepath.Join(dir, "primary.log")+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(&b, "SlurmctldPrimaryOnProg=%s/primary-on\nSlurmctldPrimaryOffProg=%s/primary-off\n", dir, dir)
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := clusterkey.WriteKey(clusterkey.KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	c := &replicaCluster{t: t, conf: conf, port: port, daemons: daemons}
	t.Cleanup(c.stopAll)
	for _, d := range daemons {
		c.start(d)
	}
	return c
}

// start runs d again.
func (c *replicaCluster) start(d *replicaDaemon) {
	startReplica(c.t, c.conf, filepath.Dir(c.conf), d)
}

// startReplica runs the controller d of the cluster conf.
func startReplica(t *testing.T, conf, dir string, d *replicaDaemon) {
	v := daemon.Settings()
	v.Set("conf", conf)
	v.Set("name", d.name)
	v.Set("socket", d.sock)
	v.Set("state-dir", filepath.Join(dir, "state-"+d.name))
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel, d.done = cancel, make(chan error, 1)
	ready := make(chan net.Addr, 1)
	go func() {
		d.done <- daemon.RunController(ctx, v, daemon.Logger(lockedWriter{&d.logs, &d.logMu}, "debug"), func(a net.Addr) { ready <- a })
	}()
	select {
	case <-ready:
	case err := <-d.done:
		t.Fatalf("%s did not start: %v\n%s", d.name, err, d.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30 s\n%s", d.name, d.log())
	}
}

// stopAll stops every controller, showing their logs when the test
// failed.
func (c *replicaCluster) stopAll() {
	for _, d := range c.daemons {
		c.stop(d)
		if c.t.Failed() {
			c.t.Logf("%s log:\n%s", d.name, d.log())
		}
	}
}

// stop stops d, if it runs.
func (c *replicaCluster) stop(d *replicaDaemon) {
	if d.cancel == nil {
		return
	}
	d.cancel()
	d.cancel = nil
	if err := <-d.done; err != nil {
		c.t.Errorf("%s: %v", d.name, err)
	}
}

// TestReplicatedControllers runs three controllers of one cluster: any
// of them takes a submission (followers forward it to the leader), and
// when the leader stops another leads within seconds, with every job
// acknowledged before.
func TestReplicatedControllers(t *testing.T) {
	c := startReplicaCluster(t)
	daemons, start, stop := c.daemons, c.start, c.stop
	// submit goes to d until a controller leads and the job is taken.
	submit := func(d *replicaDaemon, within time.Duration) (string, http.Header) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			code, h, out := d.do("POST", "job/submit", `{"job":{"script":"#!/bin/sh\ntrue\n","hold":true,"environment":["PATH=/bin"],"current_working_directory":"/tmp"}}`)
			if code == 200 {
				return fmt.Sprint(out["job_id"]), h
			}
			if code != http.StatusServiceUnavailable || h.Get(droverapi.StandbyHeader) != "1" {
				t.Fatalf("submit through %s: HTTP %d %v", d.name, code, out)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no controller led within %v", within)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var ids []string
	for _, d := range daemons {
		id, _ := submit(d, 20*time.Second)
		ids = append(ids, id)
	}
	if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Fatalf("job ids %v repeat", ids)
	}
	// The followers' answers name the leader; the leader's do not.
	var leader *replicaDaemon
	for _, d := range daemons {
		code, h, _ := d.do("GET", "job/"+ids[0], "")
		if code != 200 {
			t.Fatalf("job %s through %s: HTTP %d", ids[0], d.name, code)
		}
		if h.Get(droverapi.LeaderHeader) == "" {
			if leader != nil {
				t.Fatalf("%s and %s both answer as leader", leader.name, d.name)
			}
			leader = d
		} else if !strings.HasPrefix(h.Get(droverapi.LeaderHeader), "127.0.0.") {
			t.Errorf("%s names the leader %q", d.name, h.Get(droverapi.LeaderHeader))
		}
	}
	if leader == nil {
		t.Fatal("no controller answered as leader")
	}
	stop(leader)
	began := time.Now()
	var other *replicaDaemon
	for _, d := range daemons {
		if d != leader {
			other = d
			break
		}
	}
	id, _ := submit(other, 15*time.Second)
	t.Logf("%s stopped; a submission was taken again after %v", leader.name, time.Since(began))
	// The leader that stopped ran SlurmctldPrimaryOffProg, each new
	// leader SlurmctldPrimaryOnProg.
	if got := readLines(t, filepath.Join(filepath.Dir(c.conf), "primary.log")); strings.Count(got, "on") < 2 || strings.Count(got, "off") < 1 {
		t.Errorf("primary programs ran %q, want on, off, on", got)
	}
	for _, prev := range ids {
		if prev == id {
			t.Errorf("job id %s given again after failover", id)
		}
		if code, _, out := other.do("GET", "job/"+prev, ""); code != 200 {
			t.Errorf("job %s after failover: HTTP %d %v", prev, code, out)
		}
	}
	// The old leader comes back as a follower, and forwards.
	start(leader)
	id2, _ := submit(leader, 15*time.Second)
	if code, _, _ := leader.do("GET", "job/"+id2, ""); code != 200 {
		t.Errorf("job %s through the returned controller: HTTP %d", id2, code)
	}
}

// Replicated controllers refuse the embedded accounting store: each
// would keep the records of its own time as leader.
func TestReplicatedControllersRefuseEmbeddedAccounting(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	body := fmt.Sprintf("ClusterName=ha\nSlurmctldHost=ctl1(127.0.0.1)\nSlurmctldHost=ctl2(127.0.0.2)\nSlurmctldPort=%d\nStateSaveLocation=%s/state\n"+
		"NodeName=n1 CPUs=1\nPartitionName=batch Nodes=n1 Default=YES\n", freePort(t), dir)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := clusterkey.WriteKey(clusterkey.KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	v := daemon.Settings()
	v.Set("conf", conf)
	v.Set("name", "ctl1")
	var logs bytes.Buffer
	err := daemon.RunController(context.Background(), v, daemon.Logger(&logs, "info"), nil)
	if err == nil || !strings.Contains(err.Error(), "accounting_storage/pgsql") {
		t.Fatalf("started with the embedded store: %v", err)
	}
	// And a host that is none of the SlurmctldHost lines is refused.
	v.Set("name", "elsewhere")
	err = daemon.RunController(context.Background(), v, daemon.Logger(&logs, "info"), nil)
	if err == nil || !strings.Contains(err.Error(), "not a valid controller") {
		t.Fatalf("started as no controller: %v", err)
	}
}

// A cluster that grows from one controller to three keeps its jobs: the
// primary takes its single controller's state over when it first leads.
func TestSingleControllerBecomesReplicated(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	port := freePort(t)
	tail := fmt.Sprintf("SlurmctldPort=%d\nAccountingStorageType=accounting_storage/none\nStateSaveLocation=%s/state\n"+
		"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES State=UP\n", port, dir, freePort(t))
	if err := clusterkey.WriteKey(clusterkey.KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	daemons := []*replicaDaemon{}
	for i := 1; i <= 3; i++ {
		d := &replicaDaemon{name: fmt.Sprintf("ctl%d", i), addr: fmt.Sprintf("127.0.0.%d", i)}
		d.sock = filepath.Join(dir, d.name+".sock")
		daemons = append(daemons, d)
	}
	run := func(d *replicaDaemon) { startReplica(t, conf, dir, d) }
	c := &replicaCluster{t: t, conf: conf, daemons: daemons}
	stop := c.stop
	defer c.stopAll()
	// One controller, one job.
	if err := os.WriteFile(conf, []byte("ClusterName=grow\nSlurmctldHost=ctl1(127.0.0.1)\n"+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	run(daemons[0])
	code, _, out := daemons[0].do("POST", "job/submit", `{"job":{"script":"#!/bin/sh\ntrue\n","hold":true,"environment":["PATH=/bin"],"current_working_directory":"/tmp"}}`)
	if code != 200 {
		t.Fatalf("submit: HTTP %d %v", code, out)
	}
	first := fmt.Sprint(out["job_id"])
	stop(daemons[0])
	// Three controllers, the first as before.
	if err := os.WriteFile(conf, []byte("ClusterName=grow\nSlurmctldHost=ctl1(127.0.0.1)\nSlurmctldHost=ctl2(127.0.0.2)\nSlurmctldHost=ctl3(127.0.0.3)\n"+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range daemons {
		run(d)
	}
	for _, d := range daemons {
		deadline := time.Now().Add(20 * time.Second)
		for {
			code, _, out := d.do("GET", "job/"+first, "")
			if code == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s through %s after growing: HTTP %d %v", first, d.name, code, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// And the next job id follows the old ones.
	code, _, out = daemons[2].do("POST", "job/submit", `{"job":{"script":"#!/bin/sh\ntrue\n","hold":true,"environment":["PATH=/bin"],"current_working_directory":"/tmp"}}`)
	if code != 200 || fmt.Sprint(out["job_id"]) == first {
		t.Fatalf("submit after growing: HTTP %d %v (first job %s)", code, out, first)
	}
}

// Adding a controller to slurm.conf and reconfiguring makes it a member;
// taking one out and reconfiguring removes it.
func TestReconfigureChangesControllers(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	port := freePort(t)
	tail := fmt.Sprintf("SlurmctldPort=%d\nSlurmctldTimeout=4\nAccountingStorageType=accounting_storage/none\nStateSaveLocation=%s/state\n"+
		"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES State=UP\n", port, dir, freePort(t))
	if err := clusterkey.WriteKey(clusterkey.KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	var daemons []*replicaDaemon
	for i := 1; i <= 4; i++ {
		d := &replicaDaemon{name: fmt.Sprintf("ctl%d", i), addr: fmt.Sprintf("127.0.0.%d", i)}
		d.sock = filepath.Join(dir, d.name+".sock")
		daemons = append(daemons, d)
	}
	writeConf := func(ds ...*replicaDaemon) {
		var b strings.Builder
		b.WriteString("ClusterName=members\n")
		for _, d := range ds {
			fmt.Fprintf(&b, "SlurmctldHost=%s(%s)\n", d.name, d.addr)
		}
		if err := os.WriteFile(conf, []byte(b.String()+tail), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(d *replicaDaemon) { startReplica(t, conf, dir, d) }
	defer (&replicaCluster{t: t, conf: conf, daemons: daemons}).stopAll()
	// answers waits until d answers a request as itself or by forwarding.
	answers := func(d *replicaDaemon, within time.Duration) bool {
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			if code, _, _ := d.do("GET", "jobs/", ""); code == 200 {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	writeConf(daemons[:3]...)
	for _, d := range daemons[:3] {
		run(d)
	}
	if !answers(daemons[0], 20*time.Second) {
		t.Fatal("no leader")
	}
	// ctl4 starts with a slurm.conf that lists it: it waits for the
	// leader, which adds it once reconfigured.
	writeConf(daemons...)
	run(daemons[3])
	if answers(daemons[3], 2*time.Second) {
		t.Fatal("ctl4 answered before it was added")
	}
	if code, _, out := daemons[0].do("GET", "reconfigure/", ""); code != 200 {
		t.Fatalf("reconfigure: HTTP %d %v", code, out)
	}
	if !answers(daemons[3], 20*time.Second) {
		t.Fatal("ctl4 does not answer after the reconfigure added it")
	}
	// Take ctl2 out.
	writeConf(daemons[0], daemons[2], daemons[3])
	if code, _, out := daemons[0].do("GET", "reconfigure/", ""); code != 200 {
		t.Fatalf("reconfigure: HTTP %d %v", code, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	// The leader (whichever it is) says so.
	for !strings.Contains(daemons[0].log()+daemons[2].log()+daemons[3].log(), "removed=[ctl2]") {
		if time.Now().After(deadline) {
			t.Fatal("ctl2 was not removed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Every controller lists the controllers slurm.conf lists now.
	for _, d := range []*replicaDaemon{daemons[0], daemons[2], daemons[3]} {
		var got []string
		for {
			code, _, data := d.doPath("GET", droverapi.ControllersPath, "")
			var cs droverapi.Controllers
			got = nil
			if code == 200 && json.Unmarshal(data, &cs) == nil {
				for _, c := range cs.Controllers {
					got = append(got, fmt.Sprintf("%s:%v", c.Name, c.Responding))
				}
			}
			if strings.Join(got, ",") == "ctl1:true,ctl3:true,ctl4:true" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s lists the controllers %v, want ctl1, ctl3 and ctl4 up", d.name, got)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func readLines(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(data)), ",")
}
