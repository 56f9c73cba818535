package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMultiHost runs a cluster across test hosts, as Slurm runs: the
// controller on its host, two compute hosts and a login host, each with
// its own address and host name, joined by a bridge. An ordinary user on
// the login host submits, runs steps across the compute hosts and a
// torch-style env:// rendezvous, without any token handed to them: the
// login host's credential service vouches for them.
func TestMultiHost(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4, Hosts: true, JWT: true,
		PlugStack: "required drover-spank-nccl port_range=41000-41999 socket_ifname=none\n"})
	nobody := nobodyUser(c)
	login := c.Host("login")
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	as := func(prog string, args ...string) Result {
		t.Helper()
		return c.RunOn("login", nobody, nil, "", prog, args...)
	}

	t.Run("nodes registered from their hosts", func(t *testing.T) {
		if r := as("sinfo", "-h", "-o", "%D %T %N"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "2 idle n[1-2]" {
			t.Fatalf("sinfo on %v: %+v", login, r)
		}
	})

	t.Run("batch job across hosts", func(t *testing.T) {
		r := as("sbatch", "--parsable", "-N2", "-n2", "-o", "batch.out", "--wrap",
			"hostname; srun -l sh -c 'echo $(hostname) $(id -un) $MASTER_ADDR'")
		if r.Code != 0 {
			t.Fatalf("sbatch as nobody on login: %+v", r)
		}
		id := strings.TrimSpace(r.Stdout)
		j := c.WaitState(id, "COMPLETED", 60*time.Second)
		if j.UserName.Value != "nobody" {
			t.Errorf("job %s runs as %q", id, j.UserName.Value)
		}
		got := lines(c.ReadFile("batch.out"))
		want := []string{"n1", "0: n1 nobody 10.200.0.11", "1: n2 nobody 10.200.0.11"}
		slices.Sort(got[1:])
		if !slices.Equal(got, want) {
			t.Errorf("output %q, want %q", got, want)
		}
	})

	t.Run("interactive srun from the login host, env:// rendezvous", func(t *testing.T) {
		r := as("srun", "-N2", "-n4", "-l", filepath.Join(binDir, "allreduce"))
		got := lines(r.Stdout)
		slices.Sort(got)
		var want []string
		// Four CPUs a node: the tasks fill n1 first, 3 and 1 (cons_tres).
		for rank, local := range []int{0, 1, 2, 0} {
			want = append(want, fmt.Sprintf("%d: rank %d of 4 (local %d): sum 6", rank, rank, local))
		}
		if r.Code != 0 || !slices.Equal(got, want) {
			t.Fatalf("allreduce: exit %d\ngot  %q\nwant %q\nstderr:\n%s", r.Code, got, want, r.Stderr)
		}
	})

	t.Run("drover restd on a host of its own", func(t *testing.T) {
		sock := filepath.Join(c.Dir, "restd.sock")
		c.daemonOn("rest", "restd", "restd", "--conf", c.Conf, "0.0.0.0:6820", "unix:"+sock)
		attacker := filepath.Join(binDir, "attacker")
		tok := as("scontrol", "token")
		jwt, ok := strings.CutPrefix(strings.TrimSpace(tok.Stdout), "SLURM_JWT=")
		if !ok {
			t.Fatalf("scontrol token: %+v", tok)
		}
		url := "http://" + c.Host("rest").Addr + ":6820/slurm/v0.0.44/ping/"
		var r Result
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if r = c.RunOnPath("login", nobody, attacker, "http", "GET", url, "-", "X-SLURM-USER-TOKEN:"+jwt); strings.HasPrefix(r.Stdout, "200") {
				break
			}
		}
		if !strings.HasPrefix(r.Stdout, "200") || !strings.Contains(r.Stdout, `"user":"nobody"`) {
			t.Errorf("ping through restd with a token, from the login host: %+v", r)
		}
		// On restd's host its unix socket vouches for the caller.
		body := filepath.Join(c.WorkDir, "submit.json")
		must(t, os.WriteFile(body, []byte(`{"job":{"script":"#!/bin/sh\nid -un > via-restd.out\n","current_working_directory":"`+c.WorkDir+`","environment":["PATH=/bin:/usr/bin"]}}`), 0o644))
		r = c.RunOnPath("rest", nobody, attacker, "unix", sock, "POST", "http://restd/slurm/v0.0.44/job/submit", body, "Content-Type:application/json")
		var sub struct {
			JobID int `json:"job_id"`
		}
		_, js, _ := strings.Cut(r.Stdout, "\n")
		if json.Unmarshal([]byte(js), &sub); !strings.HasPrefix(r.Stdout, "200") || sub.JobID == 0 {
			t.Fatalf("submit on restd's socket as nobody: %+v", r)
		}
		c.WaitState(strconv.Itoa(sub.JobID), "COMPLETED", 30*time.Second)
		if got := strings.TrimSpace(c.ReadFile("via-restd.out")); got != "nobody" {
			t.Errorf("the job submitted through restd ran as %q", got)
		}
	})

	t.Run("scontrol reconfigure reaches every host", func(t *testing.T) {
		f, err := os.OpenFile(c.Conf, os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		fmt.Fprintln(f, "PartitionName=extra Nodes=n[1-2] State=UP")
		f.Close()
		c.MustRun("", "scontrol", "reconfigure")
		if r := as("sinfo", "-h", "-p", "extra", "-o", "%P %D"); strings.TrimSpace(r.Stdout) != "extra 2" {
			t.Errorf("sinfo -p extra after the reconfigure: %+v", r)
		}
		c.WaitNodesUp()
		r := as("srun", "-p", "extra", "-N2", "-l", "hostname")
		got := lines(r.Stdout)
		slices.Sort(got)
		if r.Code != 0 || !slices.Equal(got, []string{"0: n1", "1: n2"}) {
			t.Errorf("srun across hosts after the reconfigure: %+v", r)
		}
		// The controller's signed push reached each node's host.
		for _, n := range []string{"n1", "n2"} {
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(string(mustRead(t, filepath.Join(c.Dir, n+".log"))), "msg=reconfigured") {
				if time.Now().After(deadline) {
					t.Errorf("%s did not reconfigure", n)
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
}

// partitionScript's first run counts slowly until it is killed, saving
// its count; a later run resumes from the saved count and finishes. Each
// run leaves its pid, so that the test can tell whether it still runs.
const partitionScript = `#!/bin/bash
#SBATCH --open-mode=append
echo $$ > pid.${SLURM_RESTART_COUNT:-0}
i=$(cat ckpt 2>/dev/null || echo 0)
echo "run restart=${SLURM_RESTART_COUNT:-0} node=$SLURMD_NODENAME from=$i"
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
	while :; do i=$((i+1)); echo "$i" > ckpt.tmp.$$ && mv ckpt.tmp.$$ ckpt; sleep 0.1; done
fi
echo "done from $i"
`

// TestMultiHostLinkDown is story 4 across hosts: the link of the compute
// host under a requeueable job goes down. After SlurmdTimeout the node
// is DOWN and the job is requeued; it finishes on the other host from its
// checkpoint. When the link comes back, the node daemon registers again
// and the lost run's processes, which ran on through the partition, are
// killed: no job goes on running twice.
func TestMultiHostLinkDown(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, Hosts: true})
	nobody := nobodyUser(c)
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	c.MustRun("", "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=hold")
	r := c.RunOn("login", nobody, nil, partitionScript, "sbatch", "--parsable", "--requeue", "-o", "train.out")
	if r.Code != 0 {
		t.Fatalf("sbatch: %+v", r)
	}
	id := strings.TrimSpace(r.Stdout)
	c.WaitState(id, "RUNNING", 20*time.Second)
	c.MustRun("", "scontrol", "update", "NodeName=n2", "State=RESUME")
	waitCheckpoint(t, c, 5)
	firstPid := readPid(t, c, "pid.0")

	c.Host("n1").SetLink(false)
	saved := readCheckpoint(t, c)
	j := c.WaitState(id, "COMPLETED", 60*time.Second)
	if n := j.Nodes.Or(""); n != "n2" || j.RestartCnt.Or(-1) != 1 {
		t.Errorf("job finished on %q after %d restarts, want n2 after 1", n, j.RestartCnt.Or(-1))
	}
	if st := nodeState(t, c, "n1"); !strings.HasPrefix(st, "down") {
		t.Errorf("n1 is %s while cut off, want DOWN", st)
	}
	out := lines(c.ReadFile("train.out"))
	var from int
	for _, l := range out {
		if rest, ok := strings.CutPrefix(l, "run restart=1 node=n2 from="); ok {
			from, _ = strconv.Atoi(rest)
		}
	}
	if from < saved || from == 0 {
		t.Errorf("the second run resumed from %d, want the checkpoint (%d or later):\n%s", from, saved, strings.Join(out, "\n"))
	}
	if !alive(firstPid) {
		t.Fatalf("the first run (pid %d) did not run on through the partition: the test shows nothing", firstPid)
	}

	c.Host("n1").SetLink(true)
	deadline := time.Now().Add(30 * time.Second)
	for alive(firstPid) {
		if time.Now().After(deadline) {
			t.Fatalf("the lost run (pid %d) still runs %v after n1's link came back", firstPid, 30*time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The lost run's end changes nothing: the job stays as it finished.
	time.Sleep(time.Second)
	if st := c.State(id); st != "COMPLETED" {
		t.Errorf("job after the lost run was killed: %s", st)
	}
}

func readPid(t *testing.T, c *Cluster, name string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(c.ReadFile(name)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive reports whether a process runs (a zombie counts as gone).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// nodeState is a node's state as sinfo's %T shows it.
func nodeState(t *testing.T, c *Cluster, name string) string {
	t.Helper()
	return strings.TrimSpace(c.MustRun("", "sinfo", "-h", "-N", "-n", name, "-o", "%T"))
}

// TestMultiHostTLS: with TLSType=tls/s2n every TCP connection of the
// cluster is TLS, checked against the cluster's CA: node daemons join,
// a user's batch job and interactive steps span the hosts, restd serves
// over TLS; plain HTTP gets nowhere, and neither does a client that does
// not trust the CA.
func TestMultiHostTLS(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, Hosts: true, TLS: true, JWT: true})
	nobody := nobodyUser(c)
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	as := func(prog string, args ...string) Result {
		t.Helper()
		return c.RunOn("login", nobody, nil, "", prog, args...)
	}
	r := as("sbatch", "--parsable", "-N2", "-n2", "-o", "tls.out", "--wrap", "srun -l hostname")
	if r.Code != 0 {
		t.Fatalf("sbatch over TLS: %+v", r)
	}
	c.WaitState(strings.TrimSpace(r.Stdout), "COMPLETED", 60*time.Second)
	got := lines(c.ReadFile("tls.out"))
	slices.Sort(got)
	if !slices.Equal(got, []string{"0: n1", "1: n2"}) {
		t.Errorf("batch job over TLS: %q", got)
	}
	if r := as("srun", "-N2", "-l", "hostname"); r.Code != 0 || !strings.Contains(r.Stdout, "1: n2") {
		t.Errorf("interactive srun over TLS: %+v", r)
	}

	attacker := filepath.Join(binDir, "attacker")
	ctl := c.Host("ctl").Addr + ":" + strconv.Itoa(c.CtlPort)
	node := c.Host("n1").Addr + ":" + strconv.Itoa(c.nodePort("n1"))
	for name, url := range map[string]string{
		"the controller in plain HTTP": "http://" + ctl + "/slurm/v0.0.44/ping/",
		"a node in plain HTTP":         "http://" + node + "/drover/v1/launch",
	} {
		if r := c.RunOnPath("login", nobody, attacker, "http", "GET", url, "-"); !strings.HasPrefix(r.Stdout, "400") {
			t.Errorf("%s: %+v", name, r)
		}
	}
	// A client that does not trust the cluster's CA: the system's roots.
	if r := c.RunOnPath("login", nobody, attacker, "http", "GET", "https://"+ctl+"/slurm/v0.0.44/ping/", "-"); !strings.Contains(r.Stdout, "certificate signed by unknown authority") {
		t.Errorf("https without the cluster's CA: %+v", r)
	}

	// restd over TLS, forwarding to the controller over TLS.
	c.daemonOn("rest", "restd", "restd", "--conf", c.Conf, "0.0.0.0:6820")
	tok := as("scontrol", "token")
	jwt, _ := strings.CutPrefix(strings.TrimSpace(tok.Stdout), "SLURM_JWT=")
	caFile := filepath.Join(filepath.Dir(c.Conf), "ca_cert.pem")
	url := "https://" + c.Host("rest").Addr + ":6820/slurm/v0.0.44/ping/"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if r = c.RunOnPath("login", nobody, attacker, "https-ca", caFile, "GET", url, "-", "X-SLURM-USER-TOKEN:"+jwt); strings.HasPrefix(r.Stdout, "200") {
			break
		}
	}
	if !strings.HasPrefix(r.Stdout, "200") || !strings.Contains(r.Stdout, `"user":"nobody"`) {
		t.Errorf("restd over TLS: %+v", r)
	}
}
