package nodeagent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/usercred"
)

// FuzzDaemonMessages sends arbitrary bodies to a node daemon: signals and
// reconfigures signed by the controller, and step launches (whose
// credential cannot be valid). Each gets an answer, none panics, and the
// daemon keeps serving. Batch launches have FuzzBatchLaunch.
func FuzzDaemonMessages(f *testing.F) {
	paths := []string{nodeproto.PathSignal, nodeproto.PathReconfigure, nodeproto.PathStepLaunch}
	for i := range paths {
		f.Add(uint8(i), []byte(`{"job_id":1,"signal":15,"terminate":true}`))
		f.Add(uint8(i), []byte(`{"cred":"x.y","job_id":1,"tasks":[0],"nodes":["n1"],"argv":["true"]}`))
		f.Add(uint8(i), []byte(`[`))
	}
	ta := startAgent(f, nil)
	signer := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(testStepKey)), Issuer: msgauth.Controller}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := paths[int(which)%len(paths)]
		req, _ := http.NewRequest(http.MethodPost, ta.url+path, bytes.NewReader(body))
		if err := signer.SignRequest(req, msgauth.Node("n1"), body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusInternalServerError && resp.StatusCode != http.StatusNotImplemented {
			t.Fatalf("%s %q: HTTP %d", path, body, resp.StatusCode)
		}
	})
}

// FuzzBatchLaunch sends arbitrary batch launches, signed by the
// controller, through the node daemon's real launch path: decoding,
// idempotence, the job's folder and environment, output patterns, user
// checks and the start of the script. What would make a valid launch
// dangerous to run here is pinned after decoding (the decoded message is
// sent again, so that no second spelling of a field escapes the pin): the
// script is `true`, the user is nobody when the test runs as root, and
// the working folder and output files stay inside the test's folder.
// Bodies that do not decode are sent as they are.
func FuzzBatchLaunch(f *testing.F) {
	f.Add([]byte(`{"job_id":1,"uid":0,"gid":0,"script":"#!/bin/sh\nid\n","environment":["A=1"],"stdout":"out-%j","nodes":["n1"],"cpus_per_node":[1],"tasks_per_node":[1]}`))
	f.Add([]byte(`{"job_id":2,"array_job_id":2,"array_task_id":3,"name":"../../x","stdout":"/etc/%x","stderr":"%u.%N.err","stdin":"/dev/zero","environment":["SLURM_UMASK=0077","SLURM_RLIMIT_NOFILE=64"]}`))
	f.Add([]byte(`{"job_id":3,"restart_count":1,"gpus":[0,1],"time_limit":1,"mem_per_cpu":100,"topology_addr":"s0.n1","topology_pattern":"switch.node"}`))
	f.Add([]byte(`{"job_id":1,"Script":"x","SCRIPT":"y"}`))
	f.Add([]byte(`{"job_id":"1"}`))
	f.Add([]byte(`[`))

	dir, err := os.MkdirTemp("", "drover-fuzz-launch-")
	if err != nil {
		f.Fatal(err)
	}
	// The last fuzzed jobs may still be writing their output as the
	// agent stops: removing the folder under them fails (not empty)
	// until they are done.
	f.Cleanup(func() {
		for range 100 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		f.Errorf("%s left behind", dir)
	})
	// The job's user (nobody, under root) writes its output here.
	if err := os.Chmod(dir, 0o1777); err != nil {
		f.Fatal(err)
	}
	uid, gid, user := uint32(os.Getuid()), uint32(os.Getgid()), "tester"
	if uid == 0 {
		nobody, err := usercred.LookupName("nobody")
		if err != nil {
			f.Skipf("no user nobody to run fuzzed jobs as: %v", err)
		}
		uid, gid, user = nobody.UID, nobody.GID, "nobody"
	}
	// A spool the job's user can reach, as /var/spool/slurmd is.
	spool := filepath.Join(dir, "spool")
	if err := os.Mkdir(spool, 0o755); err != nil {
		f.Fatal(err)
	}
	ta := startAgent(f, func(c *Config) { c.SpoolDir = spool })
	signer := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(testStepKey)), Issuer: msgauth.Controller}
	inside := func(p string) string {
		if p == "" {
			return ""
		}
		return filepath.Join(dir, strings.NewReplacer("/", "_", "\\", "_").Replace(p))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var l nodeproto.Launch
		if json.Unmarshal(body, &l) == nil {
			l.Script = "#!/bin/sh\ntrue\n"
			l.UID, l.GID, l.UserName = uid, gid, user
			l.WorkDir = dir
			l.Name = strings.NewReplacer("/", "_", "\\", "_").Replace(l.Name)
			l.StdOut, l.StdErr, l.StdIn = inside(l.StdOut), inside(l.StdErr), inside(l.StdIn)
			// Variables the shells would act on: none reach a fuzzed
			// job.
			l.Environment = slices.DeleteFunc(l.Environment, func(kv string) bool {
				k, _, _ := strings.Cut(kv, "=")
				return strings.HasPrefix(k, "BASH_") || strings.HasPrefix(k, "LD_") || k == "ENV" || k == "PATH" || k == "IFS"
			})
			var err error
			if body, err = json.Marshal(l); err != nil {
				t.Fatal(err)
			}
		}
		req, _ := http.NewRequest(http.MethodPost, ta.url+nodeproto.PathLaunch, bytes.NewReader(body))
		if err := signer.SignRequest(req, msgauth.Node("n1"), body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("launch: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusInternalServerError {
			t.Fatalf("launch %q: HTTP %d", body, resp.StatusCode)
		}
	})
}
