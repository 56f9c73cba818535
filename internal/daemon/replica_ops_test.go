package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/scontrol"
	"github.com/droverhq/drover/internal/cli/sdiag"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/msgauth"
)

// controllers asks d for droverapi.ControllersPath.
func (c *replicaCluster) controllers(d *replicaDaemon) droverapi.Controllers {
	c.t.Helper()
	code, _, data := d.doPath("GET", droverapi.ControllersPath, "")
	if code != http.StatusOK {
		c.t.Fatalf("%s through %s: HTTP %d %s", droverapi.ControllersPath, d.name, code, data)
	}
	var out droverapi.Controllers
	if err := json.Unmarshal(data, &out); err != nil {
		c.t.Fatalf("%s through %s: %v: %s", droverapi.ControllersPath, d.name, err, data)
	}
	return out
}

// waitControllers asks d until ok holds of the answer.
func (c *replicaCluster) waitControllers(d *replicaDaemon, within time.Duration, ok func(droverapi.Controllers) bool) droverapi.Controllers {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := c.controllers(d)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("within %v, %s never answered as wanted; last: %+v", within, d.name, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaderOf is the controller the answer says leads ("" when none or
// several do).
func leaderOf(cs droverapi.Controllers) string {
	var leaders []string
	for _, ctl := range cs.Controllers {
		if ctl.Leader {
			leaders = append(leaders, ctl.Name)
		}
	}
	if len(leaders) != 1 {
		return ""
	}
	return leaders[0]
}

// tcp sends a request to d's TCP address, signed by sign.
func (c *replicaCluster) tcp(d *replicaDaemon, method, path string, sign func(*http.Request)) (int, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest(method, "http://"+net.JoinHostPort(d.addr, strconv.Itoa(c.port))+path, nil)
	if sign != nil {
		sign(req)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// signer signs as issuer with the cluster's key.
func (c *replicaCluster) signer(issuer string) *msgauth.Signer {
	ring, err := clusterkey.LoadFile(clusterkey.KeyPath(c.conf))
	if err != nil {
		c.t.Fatal(err)
	}
	return &msgauth.Signer{Keys: clusterkey.NewHolder(ring), Issuer: issuer}
}

// command runs a drop-in command as root on d's host, through its unix
// socket, as the shipped commands reach it.
func (c *replicaCluster) command(d *replicaDaemon, cmd clienv.Command, args ...string) (int, string, string) {
	c.t.Helper()
	target := connect.Target{Socket: d.sock}
	client, err := connect.Client(target, "root")
	if err != nil {
		c.t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	env := &clienv.Env{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv:  func(k string) string { return map[string]string{"SLURM_CONF": c.conf}[k] },
		Environ: func() []string { return nil }, Now: time.Now, Client: client,
		Call: func(ctx context.Context, method, path string, in, out any) error {
			return connect.CallTarget(ctx, target, method, path, in, out)
		},
		User: clienv.User{Name: "root"}, Hostname: d.name, Cwd: "/",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := cmd(ctx, env, args)
	return code, stdout.String(), stderr.String()
}

// TestReplicatedControllersOps runs three controllers and checks what
// operators see of them: every controller lists all three and the one
// leading, from its own pings (REST ping too); only controllers learn a
// replica's state; a takeover by name moves the leadership and an
// unprivileged one is refused; a stopped controller shows DOWN.
func TestReplicatedControllersOps(t *testing.T) {
	c := startReplicaCluster(t)
	d := c.daemons
	// A leader, and every replica holding the three voters (the
	// backups join through the primary's first configuration).
	first := c.waitControllers(d[0], 20*time.Second, func(cs droverapi.Controllers) bool {
		for _, ctl := range cs.Controllers {
			if ctl.Replica == nil || ctl.Replica.Voters != 3 {
				return false
			}
		}
		return leaderOf(cs) != ""
	})
	leader := leaderOf(first)
	var follower, other *replicaDaemon
	for _, x := range d {
		switch {
		case x.name == leader:
		case follower == nil:
			follower = x
		default:
			other = x
		}
	}
	got := c.controllers(follower)
	if !got.Replicated || len(got.Controllers) != 3 {
		t.Fatalf("%s lists %+v, want three replicated controllers", follower.name, got)
	}
	for i, ctl := range got.Controllers {
		want := []string{"primary", "backup1", "backup2"}[i]
		if ctl.Name != d[i].name || ctl.Mode != want || !ctl.Responding || ctl.Replica == nil {
			t.Errorf("controller %d: %+v, want %s, %s, responding, with its replica", i, ctl, d[i].name, want)
			continue
		}
		if ctl.Self != (ctl.Name == follower.name) {
			t.Errorf("%s: self %v, asked %s", ctl.Name, ctl.Self, follower.name)
		}
		if ctl.Replica.Voters != 3 || ctl.Replica.Leader != leader {
			t.Errorf("%s's replica: %+v, want 3 voters and %s leading", ctl.Name, ctl.Replica, leader)
		}
		if ctl.Leader != (ctl.Name == leader) || (ctl.Replica.State == "Leader") != ctl.Leader {
			t.Errorf("%s: leader %v, state %s; %s leads", ctl.Name, ctl.Leader, ctl.Replica.State, leader)
		}
		if ctl.Leader && ctl.Replica.LastContactSeconds != -1 {
			t.Errorf("the leader's last contact: %v, want -1", ctl.Replica.LastContactSeconds)
		}
	}
	// slurmrestd's ping, answered by the follower from the same pings.
	code, _, data := follower.doPath("GET", "/slurm/v0.0.44/ping/", "")
	var ping struct {
		Pings []struct {
			Hostname, Pinged, Mode string
			Primary, Responding    bool
		}
	}
	if code != 200 || json.Unmarshal(data, &ping) != nil || len(ping.Pings) != 3 {
		t.Fatalf("ping through %s: HTTP %d %s", follower.name, code, data)
	}
	for i, p := range ping.Pings {
		if p.Hostname != d[i].name || p.Pinged != "UP" || !p.Responding || p.Primary != (i == 0) || p.Mode != []string{"primary", "backup1", "backup2"}[i] {
			t.Errorf("ping %d: %+v", i, p)
		}
	}

	// scontrol ping and sdiag, as an operator runs them on a follower.
	code, out, errOut := c.command(follower, scontrol.Run, "ping")
	var want strings.Builder
	for i, x := range d {
		mark := ""
		if x.name == leader {
			mark = " (leader)"
		}
		fmt.Fprintf(&want, "Slurmctld(%s) at %s is UP%s\n", []string{"primary", "backup1", "backup2"}[i], x.name, mark)
	}
	if code != 0 || out != want.String() || errOut != "" {
		t.Errorf("scontrol ping through %s: exit %d\n%s%s\nwant\n%s", follower.name, code, out, errOut, want.String())
	}
	code, out, errOut = c.command(follower, sdiag.Run)
	if code != 0 || !strings.Contains(out, "\nReplication:\n\tThis controller: "+follower.name+" (") || !strings.Contains(out, "\tLeader:          "+leader+"\n") {
		t.Errorf("sdiag through %s: exit %d %s\n%s", follower.name, code, errOut, out)
	}

	// Each controller's metrics say which raft state it is in.
	for _, x := range d {
		code, body := c.tcp(x, "GET", "/metrics/drover", nil)
		state := "Follower"
		if x.name == leader {
			state = "Leader"
		}
		for _, line := range []string{`drover_raft_state{state="` + state + `"} 1`, "drover_raft_term ", "drover_raft_commit_index ", "drover_raft_leader_changes_total "} {
			if code != http.StatusOK || !strings.Contains(string(body), "\n"+line) {
				t.Errorf("%s's /metrics/drover (HTTP %d) lacks %q", x.name, code, line)
			}
		}
	}

	// Only a controller's token opens a replica's state.
	if code, body := c.tcp(follower, "GET", droverapi.ReplicaPath, nil); code != http.StatusUnauthorized {
		t.Errorf("replica state without a token: HTTP %d %s", code, body)
	}
	host := c.signer(msgauth.Host("n1"))
	user := func(uid uint32) func(*http.Request) {
		return func(r *http.Request) {
			tok, err := host.SignUser(msgauth.UserID{Name: "nobody", UID: uid, GID: uid}, msgauth.Controller, r.Method, r.URL.RequestURI(), msgauth.BodyHash(nil))
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set(msgauth.Header, tok)
		}
	}
	if code, body := c.tcp(follower, "GET", droverapi.ReplicaPath, user(0)); code != http.StatusUnauthorized {
		t.Errorf("replica state for a user's credential: HTTP %d %s", code, body)
	}
	ctld := c.signer(msgauth.Controller)
	code, body := c.tcp(follower, "GET", droverapi.ReplicaPath, func(r *http.Request) {
		if err := ctld.SignRequest(r, msgauth.Controller, nil); err != nil {
			t.Fatal(err)
		}
	})
	if code != http.StatusOK || !strings.Contains(string(body), `"voters":3`) {
		t.Errorf("replica state for a controller: HTTP %d %s", code, body)
	}

	// An unprivileged takeover is refused, as slurmctld refuses it.
	path := droverapi.TakeoverPath + "?controller=" + other.name
	code, body = c.tcp(follower, "POST", path, user(65534))
	if code == http.StatusOK || !strings.Contains(string(body), `"error_number":2010`) {
		t.Errorf("takeover by nobody: HTTP %d %s", code, body)
	}
	switch now := leaderOf(c.waitControllers(other, 10*time.Second, func(cs droverapi.Controllers) bool { return leaderOf(cs) != "" })); now {
	case leader:
	case other.name:
		t.Errorf("after a refused takeover by %s, it leads", other.name)
	default:
		t.Logf("%s leads now, not %s: an election on a loaded machine", now, leader)
	}
	// root's, through a follower, returns once the one named leads. On
	// a loaded machine an election may follow (a heartbeat came late):
	// the takeover is then asked again.
	for try := 1; ; try++ {
		code, _, body = follower.doPath("POST", path, "")
		if code != http.StatusOK {
			t.Fatalf("takeover by %s: HTTP %d %s", other.name, code, body)
		}
		now := leaderOf(c.waitControllers(other, 10*time.Second, func(cs droverapi.Controllers) bool { return leaderOf(cs) != "" }))
		if now == other.name {
			break
		}
		if try == 3 {
			t.Fatalf("after takeover by %s, %q leads", other.name, now)
		}
		t.Logf("after takeover by %s, %s leads (an election followed); again", other.name, now)
	}
	code, _, body = other.doPath("POST", droverapi.TakeoverPath+"?controller=7", "")
	if code == http.StatusOK || !strings.Contains(string(body), "invalid backup controller index (7)") {
		t.Errorf("takeover by index 7 of 3: HTTP %d %s", code, body)
	}

	// scontrol takeover by name, through the follower.
	if code, out, errOut := c.command(follower, scontrol.Run, "takeover", follower.name); code != 0 || out != "" || errOut != "" {
		t.Errorf("scontrol takeover %s: exit %d %q %q", follower.name, code, out, errOut)
	} else if now := leaderOf(c.controllers(follower)); now != follower.name {
		t.Logf("after scontrol takeover %s, %q leads (an election followed?)", follower.name, now)
	}

	// The leader stops: the others show it DOWN, scontrol ping too, and
	// another leads.
	var stopped, asked *replicaDaemon
	name := leaderOf(c.waitControllers(follower, 10*time.Second, func(cs droverapi.Controllers) bool { return leaderOf(cs) != "" }))
	for _, x := range d {
		switch {
		case x.name == name:
			stopped = x
		case asked == nil:
			asked = x
		}
	}
	c.stop(stopped)
	began := time.Now()
	after := c.waitControllers(asked, 20*time.Second, func(cs droverapi.Controllers) bool {
		l := leaderOf(cs)
		return l != "" && l != stopped.name
	})
	t.Logf("%s stopped; %s listed it down with %s leading after %v", stopped.name, asked.name, leaderOf(after), time.Since(began))
	for _, ctl := range after.Controllers {
		if ctl.Name == stopped.name && (ctl.Responding || ctl.Error == "" || ctl.Replica != nil) {
			t.Errorf("the stopped controller: %+v", ctl)
		}
		if ctl.Name != stopped.name && !ctl.Responding {
			t.Errorf("%s: not responding (%s)", ctl.Name, ctl.Error)
		}
		if ctl.LatencyMicros > 3e6 {
			t.Errorf("%s: ping took %v", ctl.Name, time.Duration(ctl.LatencyMicros)*time.Microsecond)
		}
	}
	code, out, _ = c.command(asked, scontrol.Run, "ping")
	if code != 0 || !strings.Contains(out, " at "+stopped.name+" is DOWN\n") || !strings.Contains(out, "** RESTORE SLURMCTLD DAEMON TO SERVICE **") || strings.Count(out, " (leader)\n") != 1 {
		t.Errorf("scontrol ping through %s with %s stopped: exit %d\n%s", asked.name, stopped.name, code, out)
	}
	// A takeover by the stopped controller fails, as Slurm's does when
	// the backup cannot be reached.
	began = time.Now()
	code, out, errOut = c.command(asked, scontrol.Run, "takeover", stopped.name)
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "slurm_takeover error: takeover by "+stopped.name+": ") {
		t.Errorf("scontrol takeover %s (stopped): exit %d %q %q", stopped.name, code, out, errOut)
	}
	t.Logf("takeover by a stopped controller failed after %v: %s", time.Since(began), strings.TrimSpace(errOut))
}
