package salloc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func init() { pollInterval = 20 * time.Millisecond }

// controller answers the allocation request and then the job's states,
// one per GetJob call (the last repeats), and records releases.
type controller struct {
	v0044.UnimplementedHandler
	mu       sync.Mutex
	refusal  string
	states   []v0044.V0044JobInfoJobStateItem
	desc     v0044.V0044JobDescMsg
	released []string
}

func (c *controller) SlurmV0044PostJobAllocate(_ context.Context, req v0044.OptV0044JobAllocReq) (v0044.SlurmV0044PostJobAllocateRes, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.desc = req.Value.Job.Value
	if c.refusal != "" {
		return &v0044.V0044OpenapiJobAllocRespStatusCode{StatusCode: 500, Response: v0044.V0044OpenapiJobAllocResp{
			Errors: v0044.V0044OpenapiErrors{{Error: v0044.NewOptString(c.refusal), ErrorNumber: v0044.NewOptInt32(2001)}},
		}}, nil
	}
	return &v0044.V0044OpenapiJobAllocResp{JobID: v0044.NewOptInt32(7)}, nil
}

func (c *controller) SlurmV0044GetJob(_ context.Context, _ v0044.SlurmV0044GetJobParams) (v0044.SlurmV0044GetJobRes, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.states[0]
	if len(c.states) > 1 {
		c.states = c.states[1:]
	}
	j := v0044.V0044JobInfo{
		JobID: v0044.NewOptInt32(7), JobState: []v0044.V0044JobInfoJobStateItem{st}, Name: v0044.NewOptString("interactive"),
		Partition: v0044.NewOptString("batch"), Cluster: v0044.NewOptString("c1"), Account: v0044.NewOptString("physics"),
	}
	if st != v0044.V0044JobInfoJobStateItemPENDING {
		j.Nodes = v0044.NewOptString("n[1-2]")
		j.JobResources = v0044.NewOptV0044JobRes(v0044.V0044JobRes{Nodes: v0044.NewOptV0044JobResNodes(v0044.V0044JobResNodes{
			Allocation: v0044.V0044JobResNodesList{
				{Index: 0, Name: "n1", Cpus: v0044.NewOptV0044JobResNodeCpus(v0044.V0044JobResNodeCpus{Count: v0044.NewOptInt32(3)})},
				{Index: 1, Name: "n2", Cpus: v0044.NewOptV0044JobResNodeCpus(v0044.V0044JobResNodeCpus{Count: v0044.NewOptInt32(1)})},
			},
		})})
	}
	return &v0044.V0044OpenapiJobInfoResp{Jobs: v0044.V0044JobInfoMsg{j}}, nil
}

func (c *controller) releases() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.released...)
}

const (
	pending   = v0044.V0044JobInfoJobStateItemPENDING
	running   = v0044.V0044JobInfoJobStateItemRUNNING
	cancelled = v0044.V0044JobInfoJobStateItemCANCELLED
	timedOut  = v0044.V0044JobInfoJobStateItemTIMEOUT
)

// fixture runs salloc in-process against a controller, with a signal
// channel the test feeds and a working directory of its own.
type fixture struct {
	h    *clitest.Harness
	ctl  *controller
	sigs chan os.Signal
	dir  string
}

func newFixture(t *testing.T, states ...v0044.V0044JobInfoJobStateItem) *fixture {
	t.Helper()
	ctl := &controller{states: states}
	h := clitest.New(t, ctl, time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC))
	f := &fixture{h: h, ctl: ctl, sigs: make(chan os.Signal, 4), dir: t.TempDir()}
	h.Env.Cwd = f.dir
	h.Env.Hostname = "login1"
	h.Env.Now = time.Now
	h.Env.Call = func(_ context.Context, method, path string, _, _ any) error {
		ctl.mu.Lock()
		defer ctl.mu.Unlock()
		ctl.released = append(ctl.released, method+" "+path)
		return nil
	}
	h.Vars["PATH"] = os.Getenv("PATH")
	h.Vars["SHELL"] = "/bin/sh"
	return f
}

func (f *fixture) run(args ...string) clitest.Run {
	return f.h.Run(func(ctx context.Context, env *clienv.Env, args []string) int {
		return run(ctx, env, args, f.sigs)
	}, "salloc", "", args...)
}

// signalWhen sends sig once the command created the file name in the
// working directory.
func (f *fixture) signalWhen(t *testing.T, name string, sig os.Signal) {
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(f.dir, name)); err == nil {
				f.sigs <- sig
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Errorf("%s never appeared", name)
	}()
}

func release(code string) []string {
	return []string{"POST /drover/v1/job/7/complete?exit_code=" + code}
}

func TestRun(t *testing.T) {
	granted := "salloc: Granted job allocation 7\nsalloc: Nodes n[1-2] are ready for job\n"
	relinquish := "salloc: Relinquishing job allocation 7\n"
	tests := map[string]struct {
		states   []v0044.V0044JobInfoJobStateItem
		refusal  string
		args     []string
		signal   os.Signal // sent once the command created "started"
		queued   os.Signal // queued before salloc starts
		want     clitest.Run
		released []string
	}{
		"command's status": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			args:     []string{"-N2", "sh", "-c", "echo $SLURM_JOB_ID $SLURM_JOB_NAME $SLURM_TASKS_PER_NODE $SLURM_SUBMIT_HOST; exit 3"},
			want:     clitest.Run{Code: 3, Stdout: "7 interactive 3,1 login1\n", Stderr: granted + relinquish},
			released: release("3"),
		},
		"queued first": {
			states: []v0044.V0044JobInfoJobStateItem{pending, pending, pending, pending, pending, running},
			args:   []string{"true"},
			want: clitest.Run{Stderr: "salloc: Pending job allocation 7\nsalloc: job 7 queued and waiting for resources\n" +
				"salloc: job 7 has been allocated resources\n" + granted + relinquish},
			released: release("0"),
		},
		"default command is the shell": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			args:     nil,
			want:     clitest.Run{Stderr: granted + relinquish},
			released: release("0"),
		},
		"version": {
			args: []string{"--version"},
			want: clitest.Run{Stdout: "slurm " + clienv.SlurmVersion + "\n"},
		},
		"warning": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			args:     []string{"-N4", "-n2", "true"},
			want:     clitest.Run{Stderr: "salloc: warning: can't run 2 processes on 4 nodes, setting nnodes to 2\n" + granted + relinquish},
			released: release("0"),
		},
		"no shell": {
			states: []v0044.V0044JobInfoJobStateItem{running},
			args:   []string{"--no-shell"},
			want:   clitest.Run{Stderr: granted},
		},
		"refused": {
			refusal: "Requested node configuration is not available",
			args:    []string{"-N9", "true"},
			want:    clitest.Run{Code: 1, Stderr: "salloc: error: Job submit/allocate failed: Requested node configuration is not available\n"},
		},
		"cancelled while pending": {
			states: []v0044.V0044JobInfoJobStateItem{pending, pending, pending, pending, cancelled},
			args:   []string{"true"},
			want: clitest.Run{Code: 1, Stderr: "salloc: Pending job allocation 7\nsalloc: job 7 queued and waiting for resources\n" +
				"salloc: Job has been cancelled\nsalloc: error: Job submit/allocate failed: Job/step already completing or completed\n"},
		},
		"signal while pending": {
			states:   []v0044.V0044JobInfoJobStateItem{pending},
			queued:   syscall.SIGINT,
			args:     []string{"true"},
			want:     clitest.Run{Code: 1, Stderr: "salloc: Job aborted due to signal\n"},
			released: release("130"),
		},
		"immediate gives up": {
			states:   []v0044.V0044JobInfoJobStateItem{pending},
			args:     []string{"-I1", "true"},
			want:     clitest.Run{Code: 1, Stderr: "salloc: Pending job allocation 7\nsalloc: job 7 queued and waiting for resources\nsalloc: error: Unable to allocate resources: Connection timed out\n"},
			released: release("1"),
		},
		"missing command": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			args:     []string{"drover-no-such-command"},
			want:     clitest.Run{Code: 1, Stderr: granted + "salloc: error: _fork_command: Unable to find command \"drover-no-such-command\"\n" + relinquish},
			released: release("1"),
		},
		"command killed by a signal": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			args:     []string{"sh", "-c", "kill -TERM $$"},
			want:     clitest.Run{Code: 1, Stderr: granted + relinquish},
			released: release("143"),
		},
		"command hung up": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			args:     []string{"sh", "-c", "kill -HUP $$"},
			want:     clitest.Run{Stderr: granted + relinquish},
			released: release("129"),
		},
		"revoked, command left running": {
			states: []v0044.V0044JobInfoJobStateItem{running, cancelled},
			args:   []string{"sh", "-c", "sleep 0.5; exit 4"},
			want:   clitest.Run{Code: 4, Stderr: granted + "salloc: Job allocation 7 has been revoked.\n"},
		},
		"revoked, command killed": {
			states: []v0044.V0044JobInfoJobStateItem{running, cancelled},
			args:   []string{"-K", "sleep", "30"},
			want:   clitest.Run{Code: 1, Stderr: granted + "salloc: Job allocation 7 has been revoked.\n"},
		},
		"time limit": {
			states: []v0044.V0044JobInfoJobStateItem{running, timedOut},
			args:   []string{"--kill-command=INT", "sleep", "30"},
			want:   clitest.Run{Stderr: granted + "salloc: Job 7 has exceeded its time limit and its allocation has been revoked.\n"},
		},
		"SIGTERM while the command runs": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			signal:   syscall.SIGTERM,
			args:     []string{"-K", "sh", "-c", "touch started; sleep 30"},
			want:     clitest.Run{Code: 1, Stderr: granted + "salloc: Job allocation 7 has been revoked.\n"},
			released: release("143"),
		},
		"SIGHUP while the command runs": {
			states:   []v0044.V0044JobInfoJobStateItem{running},
			signal:   syscall.SIGHUP,
			args:     []string{"sh", "-c", "touch started; sleep 30"},
			want:     clitest.Run{Code: 1, Stderr: granted + relinquish},
			released: release("0"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.states...)
			f.ctl.refusal = tc.refusal
			if tc.queued != nil {
				f.sigs <- tc.queued
			}
			if tc.signal != nil {
				f.signalWhen(t, "started", tc.signal)
			}
			got := f.run(tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("salloc %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
			if diff := cmp.Diff(tc.released, f.ctl.releases()); diff != "" {
				t.Errorf("releases (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunRequest: the allocation request carries the job's name, the
// command and the working directory (--chdir's, where the command runs).
func TestRunRequest(t *testing.T) {
	f := newFixture(t, running)
	sub := filepath.Join(f.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	got := f.run("-D", sub, "-J", "probe", "sh", "-c", "pwd; echo $SLURM_SUBMIT_DIR")
	if got.Code != 0 || got.Stdout != sub+"\n"+f.dir+"\n" {
		t.Errorf("salloc -D: %+v", got)
	}
	d := f.ctl.desc
	if d.Name.Or("") != "probe" || d.CurrentWorkingDirectory.Or("") != sub || strings.Join(d.Argv, " ") != "sh -c pwd; echo $SLURM_SUBMIT_DIR" {
		t.Errorf("request: name %q, cwd %q, argv %q", d.Name.Or(""), d.CurrentWorkingDirectory.Or(""), d.Argv)
	}

	got = f.run("-D", filepath.Join(f.dir, "missing"), "true")
	want := clitest.Run{Code: 1, Stderr: "salloc: error: chdir(" + filepath.Join(f.dir, "missing") + "): No such file or directory\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("missing --chdir (-want +got):\n%s", diff)
	}
}
