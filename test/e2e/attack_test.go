package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/sack"
	stepio "github.com/droverhq/drover/internal/step/stream"
)

// TestAttacks tries, as an ordinary user on the login host and on a
// compute host where their own job runs, everything such a user could
// try with curl and nc against a cluster across hosts: every attempt is
// refused, logged by the daemon it reached, and changes nothing.
func TestAttacks(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, Hosts: true, JWT: true})
	nobody := nobodyUser(c)
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	attacker := filepath.Join(binDir, "attacker")
	files := filepath.Join(c.Dir, "attack")
	must(t, os.MkdirAll(files, 0o755))
	file := func(name string, data []byte) string {
		p := filepath.Join(files, name)
		must(t, os.WriteFile(p, data, 0o644))
		return p
	}
	// attack runs the attacker as nobody on host and returns the first
	// line it printed (the HTTP status) and the rest.
	attack := func(host string, args ...string) (string, string) {
		t.Helper()
		r := c.RunOnPath(host, nobody, attacker, args...)
		if r.Code != 0 {
			t.Fatalf("attacker %v: %+v", args, r)
		}
		first, rest, _ := strings.Cut(r.Stdout, "\n")
		return first, rest
	}
	ctl := "http://" + c.Host("ctl").Addr + ":" + strconv.Itoa(c.CtlPort)
	nodeURL := func(name string) string {
		return "http://" + c.Host(name).Addr + ":" + strconv.Itoa(c.nodePort(name))
	}

	// A job of root's, on n2, and one of nobody's own, on n1.
	rootJob := c.Submit("", "-w", "n2", "--wrap", "sleep 300")
	r := c.RunOn("login", nobody, nil, "", "sbatch", "--parsable", "-w", "n1", "--wrap", "sleep 300")
	if r.Code != 0 {
		t.Fatalf("nobody's job: %+v", r)
	}
	ownJob := strings.TrimSpace(r.Stdout)
	c.WaitState(rootJob, "RUNNING", 20*time.Second)
	c.WaitState(ownJob, "RUNNING", 20*time.Second)

	marker := filepath.Join(c.WorkDir, "pwned")
	launch := func(id uint32, uid uint32, script string) []byte {
		data, _ := json.Marshal(nodeproto.Launch{JobID: id, Name: "x", UserName: "root", UID: uid, GID: uid, WorkDir: c.WorkDir,
			Script: script, Nodes: []string{"n1"}, CPUsPerNode: []uint32{1}, TasksPerNode: []uint32{1}, NumTasks: 1})
		return data
	}
	rootLaunch := file("launch-root.json", launch(4242, 0, "#!/bin/sh\ntouch "+marker+"\n"))
	ring, err := clusterkey.Load(c.Conf, "")
	must(t, err)
	keys := clusterkey.NewHolder(ring)
	asController := &msgauth.Signer{Keys: keys, Issuer: msgauth.Controller}
	signed := func(s *msgauth.Signer, aud, path string, body []byte) string {
		tok, err := s.Sign(aud, "POST", path, body)
		must(t, err)
		return msgauth.Header + ":" + tok
	}

	type try struct {
		host, method, url, body string
		headers                 []string
		want                    string
		// logged is in the controller's log once refused, when set.
		logged string
	}
	tries := map[string]try{}
	for _, host := range []string{"login", "n1"} {
		tries["launch as root, from "+host] = try{host: host, method: "POST", url: nodeURL("n1") + nodeproto.PathLaunch, body: rootLaunch, want: "401"}
		tries["signal root's job, from "+host] = try{host: host, method: "POST", url: nodeURL("n2") + nodeproto.PathSignal,
			body: file("signal.json", []byte(`{"job_id":`+rootJob+`,"terminate":true,"kind":"cancelled"}`)), want: "401"}
		tries["reconfigure a node, from "+host] = try{host: host, method: "POST", url: nodeURL("n1") + nodeproto.PathReconfigure, body: file("empty.json", []byte("{}")), want: "401"}
		tries["cancel root's job naming root, from "+host] = try{host: host, method: "DELETE", url: ctl + "/slurm/v0.0.44/job/" + rootJob, body: "-", headers: []string{"X-SLURM-USER-NAME:root"}, want: "401"}
		tries["cancel root's job with no name, from "+host] = try{host: host, method: "DELETE", url: ctl + "/slurm/v0.0.44/job/" + rootJob, body: "-", want: "401"}
		tries["end root's job as its node, from "+host] = try{host: host, method: "POST", url: ctl + nodeproto.PathJobDone,
			body: file("jobdone.json", []byte(`{"node":"n2","job_id":`+rootJob+`,"kind":"exited"}`)), want: "401"}
		tries["move n1 elsewhere, from "+host] = try{host: host, method: "POST", url: ctl + nodeproto.PathRegister,
			body: file("register.json", []byte(`{"name":"n1","addr":"10.200.0.100:9","cpus":2}`)), want: "401"}
	}
	wrongNode := file("launch-n2.json", launch(4244, 0, "#!/bin/sh\ntouch "+marker+"\n"))
	tries["a launch signed for n2, sent to n1"] = try{host: "login", method: "POST", url: nodeURL("n1") + nodeproto.PathLaunch, body: wrongNode,
		headers: []string{signed(asController, msgauth.Node("n2"), nodeproto.PathLaunch, launch(4244, 0, "#!/bin/sh\ntouch "+marker+"\n"))}, want: "401"}
	expired := &msgauth.Signer{Keys: keys, Issuer: msgauth.Controller, Now: func() time.Time { return time.Now().Add(-5 * time.Minute) }}
	tries["an expired launch"] = try{host: "login", method: "POST", url: nodeURL("n1") + nodeproto.PathLaunch, body: rootLaunch,
		headers: []string{signed(expired, msgauth.Node("n1"), nodeproto.PathLaunch, launch(4242, 0, "#!/bin/sh\ntouch "+marker+"\n"))}, want: "401"}
	otherKey := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(bytes.Repeat([]byte{7}, 32))), Issuer: msgauth.Controller}
	tries["a launch signed with another key"] = try{host: "login", method: "POST", url: nodeURL("n1") + nodeproto.PathLaunch, body: rootLaunch,
		headers: []string{signed(otherKey, msgauth.Node("n1"), nodeproto.PathLaunch, launch(4242, 0, "#!/bin/sh\ntouch "+marker+"\n"))}, want: "401"}
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sun":"root","exp":%d,"iat":%d}`, time.Now().Add(time.Hour).Unix(), time.Now().Unix()))) + "."
	tries["a token with alg none"] = try{host: "login", method: "DELETE", url: ctl + "/slurm/v0.0.44/job/" + rootJob, body: "-", headers: []string{"X-SLURM-USER-TOKEN:" + none}, want: "401"}
	tok := c.RunOn("login", nobody, nil, "", "scontrol", "token")
	own, ok := strings.CutPrefix(strings.TrimSpace(tok.Stdout), "SLURM_JWT=")
	if tok.Code != 0 || !ok {
		t.Fatalf("nobody's token: %+v", tok)
	}
	tries["nobody's token naming root"] = try{host: "login", method: "DELETE", url: ctl + "/slurm/v0.0.44/job/" + rootJob, body: "-",
		headers: []string{"X-SLURM-USER-TOKEN:" + own, "X-SLURM-USER-NAME:root"}, want: "401"}

	// A session of nobody's own, from the login host's credential
	// service, turned against root's job and the node protocol.
	sackSock := sack.DefaultSocket(c.Name)
	tries["a session rewritten to name root"] = try{host: "login", method: "DELETE", url: ctl + "/slurm/v0.0.44/job/" + rootJob, body: "-",
		headers: []string{"session", sackSock, "root"}, want: "401", logged: "signature is invalid"}
	tries["a session's key signing as a node"] = try{host: "login", method: "POST", url: ctl + nodeproto.PathJobDone,
		body: file("jobdone.json", []byte(`{"node":"n2","job_id":`+rootJob+`,"kind":"exited"}`)), headers: []string{"session", sackSock, "daemon"}, want: "401", logged: "a session signs user tokens only"}
	// The control: the session as granted works, for nobody's own
	// ends (an unknown job, so nothing changes).
	tries["a session as granted"] = try{host: "login", method: "GET", url: ctl + "/slurm/v0.0.44/job/999999", body: "-",
		headers: []string{"session", sackSock, "own"}, want: "404"}

	for name, tr := range tries {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"http", tr.method, tr.url, tr.body}, tr.headers...)
			if len(tr.headers) == 3 && tr.headers[0] == "session" {
				args = []string{"session", tr.headers[1], tr.headers[2], tr.method, tr.url, tr.body}
			}
			status, body := attack(tr.host, args...)
			if status != tr.want {
				t.Errorf("HTTP %s %s, want %s", status, body, tr.want)
			}
			if tr.logged != "" && !strings.Contains(c.ReadFile(filepath.Join(c.Dir, "controller.log")), tr.logged) {
				t.Errorf("the controller's log does not say %q", tr.logged)
			}
		})
	}
	// Nothing any try did shows.
	time.Sleep(time.Second)
	if st := c.State(rootJob); st != "RUNNING" {
		t.Errorf("root's job is %s", st)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a launch of an attacker's ran")
	}
	if out := c.MustRun("", "srun", "-w", "n1", "hostname"); strings.TrimSpace(out) != "n1" {
		t.Errorf("srun on n1 after the fake registration: %q", out)
	}

	t.Run("a captured launch replayed", func(t *testing.T) {
		count := filepath.Join(c.WorkDir, "replayed")
		body := launch(4250, 65534, "#!/bin/sh\necho run >> "+count+"\n")
		header := signed(asController, msgauth.Node("n1"), nodeproto.PathLaunch, body)
		k, v, _ := strings.Cut(header, ":")
		req, _ := http.NewRequest("POST", nodeURL("n1")+nodeproto.PathLaunch, bytes.NewReader(body))
		req.Header.Set(k, v)
		// The controller's own send, from its host.
		r := c.Host("ctl").Command(attacker, "http", "POST", nodeURL("n1")+nodeproto.PathLaunch, file("launch-replay.json", body), header)
		out, err := r.Output()
		if err != nil || !strings.HasPrefix(string(out), "200") {
			t.Fatalf("the real launch: %s %v", out, err)
		}
		c.WaitFile(count, 20*time.Second)
		if status, body := attack("login", "http", "POST", nodeURL("n1")+nodeproto.PathLaunch, filepath.Join(files, "launch-replay.json"), header); status != "401" {
			t.Errorf("replay: HTTP %s %s", status, body)
		}
		time.Sleep(time.Second)
		if got := c.ReadFile(count); got != "run\n" {
			t.Errorf("the launch ran %d times", strings.Count(got, "run"))
		}
	})

	t.Run("another user on a step's I/O port", func(t *testing.T) {
		// n2's daemon is stopped, so that srun keeps its port open for
		// n2's connection while the attacker tries it.
		c.mu.Lock()
		n2 := c.nodes["n2"].Process.Pid
		c.mu.Unlock()
		must(t, syscall.Kill(n2, syscall.SIGSTOP))
		defer syscall.Kill(n2, syscall.SIGCONT)
		var wg sync.WaitGroup
		var victim Result
		wg.Add(1)
		go func() {
			defer wg.Done()
			victim = c.RunOn("login", nil, nil, "typed by root\n", "srun", "-N2", "-l", "sh", "-c", "read x; echo $SLURMD_NODENAME got: $x")
		}()
		port := waitSrunPort(t, c, "login")
		frames := &bytes.Buffer{}
		w := stepio.NewWriter(frames)
		w.Write(stepio.Frame{Kind: stepio.Hello, Data: []byte("not a credential")})
		w.Write(stepio.Frame{Kind: stepio.Stdout, Data: []byte("forged output\n")})
		var got [2]string
		var aw sync.WaitGroup
		for i, data := range []string{"-", file("frames.bin", frames.Bytes())} {
			aw.Add(1)
			go func() {
				defer aw.Done()
				status, out := attack("login", "dial", c.Host("login").Addr+":"+strconv.Itoa(port), data)
				got[i] = status + "|" + out
			}()
		}
		aw.Wait()
		syscall.Kill(n2, syscall.SIGCONT)
		for i, g := range got {
			if g != "read 0 bytes|" {
				t.Errorf("attempt %d: the attacker got %q", i, g)
			}
		}
		wg.Wait()
		out := lines(victim.Stdout)
		slices.Sort(out)
		if victim.Code != 0 || !slices.Equal(out, []string{"0: n1 got: typed by root", "1: n2 got:"}) {
			t.Errorf("the step under attack: %+v", victim)
		}
	})

	logs := map[string]string{"controller": "authentication failed", "n1": "request refused"}
	for name, want := range logs {
		data, _ := os.ReadFile(filepath.Join(c.Dir, name+".log"))
		if !strings.Contains(string(data), want) {
			t.Errorf("%s.log does not say %q", name, want)
		}
	}
	c.MustRun("", "scancel", rootJob, ownJob)
}

// waitSrunPort finds the port an srun on host listens on for its step's
// I/O, within the cluster's SrunPortRange.
func waitSrunPort(t *testing.T, c *Cluster, host string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(c.Host(host).Run("cat", "/proc/net/tcp"), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "0A" { // LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && p >= 60001 && p <= 60999 {
				return int(p)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no srun listens")
	return 0
}
