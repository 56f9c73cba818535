// Package nodeproto is the internal protocol between the controller and the
// node daemons (Slurm's slurmctld <-> slurmd RPCs): JSON messages over HTTP
// under /drover/v1/. It is not a public API; the slurmrestd wire format is.
package nodeproto

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/msgauth"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// Paths served by the controller (node -> controller).
const (
	PathRegister   = "/drover/v1/node/register"
	PathHeartbeat  = "/drover/v1/node/heartbeat"
	PathJobDone    = "/drover/v1/node/jobdone"
	PathStepDone   = "/drover/v1/node/stepdone"
	PathNodeHealth = "/drover/v1/node/health"
	// PathConfig asks for the controller's configuration files
	// (REQUEST_CONFIG, SlurmctldParameters=enable_configless): node
	// daemons and login hosts' credential services ask it.
	PathConfig = "/drover/v1/node/config"
)

// Paths served by a node daemon (controller -> node; srun -> node for
// PathStepLaunch).
const (
	PathLaunch     = "/drover/v1/launch"
	PathSignal     = "/drover/v1/signal"
	PathStepLaunch = "/drover/v1/step/launch"
	// PathStepStat asks what a running step's tasks use now (sstat;
	// Slurm's REQUEST_JOB_STEP_STAT).
	PathStepStat = "/drover/v1/step/stat"
	// PathReconfigure asks the daemon to read its files again (scontrol
	// reconfigure, as slurmctld sends REQUEST_RECONFIGURE to slurmds).
	PathReconfigure = "/drover/v1/reconfigure"
)

// GPU is a GPU a node daemon found.
type GPU struct {
	Index int    `json:"index"`
	Type  string `json:"type"`
	Minor int    `json:"minor"`
	File  string `json:"file"`
	UUID  string `json:"uuid"`
	Cores string `json:"cores,omitempty"`
	// Links is the NVLink vector in gres.conf's Links= form ("-1,2,0").
	Links string `json:"links,omitempty"`
}

// NodeHealth reports a hardware failure on a node (a GPU's XID): the
// controller drains the node with Reason, as a health check program's
// scontrol update would.
type NodeHealth struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Register is a node daemon's registration (REQUEST_NODE_REGISTRATION_STATUS).
type Register struct {
	Name string `json:"name"`
	// Addr is where the daemon serves launches (host:port).
	Addr       string    `json:"addr"`
	CPUs       uint32    `json:"cpus"`
	RealMemory uint64    `json:"real_memory"`
	FreeMemMB  uint64    `json:"free_mem"`
	GPUs       []GPU     `json:"gpus"`
	GPUSource  string    `json:"gpu_source"`
	BootTime   time.Time `json:"boot_time"`
	Started    time.Time `json:"started"`
	Version    string    `json:"version"`
	Arch       string    `json:"arch"`
	OS         string    `json:"os"`
	// Jobs are every job the daemon still knows: running, or finished but
	// not yet acknowledged.
	Jobs []JobStatus `json:"jobs"`
	// Dynamic is the node's own definition ("CPUs=8 RealMemory=16000
	// Features=x"), for a node slurm.conf does not list (slurmd -Z):
	// the controller makes it a dynamic node.
	Dynamic string `json:"dynamic,omitempty"`
}

// RegisterReply tells a node daemon what the controller expects.
type RegisterReply struct {
	// Kill lists jobs the node runs that the controller no longer wants.
	Kill []uint32 `json:"kill,omitempty"`
	// HeartbeatEvery is how often to send heartbeats.
	HeartbeatEvery time.Duration `json:"heartbeat_every"`
}

// Heartbeat is a node daemon's periodic liveness report (ping).
type Heartbeat struct {
	Name      string   `json:"name"`
	FreeMemMB uint64   `json:"free_mem"`
	Load      float64  `json:"load"`
	Running   []uint32 `json:"running"`
}

// JobStatus is what a node knows of a job.
type JobStatus struct {
	JobID uint32 `json:"job_id"`
	// Running is true while the batch script runs.
	Running bool `json:"running"`
	// Lost is true when the daemon restarted while the job ran: its
	// processes are gone and no exit status is known.
	Lost bool `json:"lost,omitempty"`
	// Done describes a finished job.
	Done *JobDone `json:"done,omitempty"`
}

// EndKind says why a job's processes ended.
type EndKind string

// End kinds.
const (
	EndExited    EndKind = "exited"    // the script ended by itself
	EndCancelled EndKind = "cancelled" // killed on request
	EndTimeout   EndKind = "timeout"   // killed at its time limit
	EndFailed    EndKind = "failed"    // could not be started
)

// JobDone reports the end of a batch job (REQUEST_COMPLETE_BATCH_SCRIPT).
type JobDone struct {
	Node  string `json:"node"`
	JobID uint32 `json:"job_id"`
	// Run is the launch's RestartCount: a report of a run that was since
	// requeued must not end the next one.
	Run  uint32  `json:"run,omitempty"`
	Kind EndKind `json:"kind"`
	// ExitCode is the script's exit status; Signal the signal that ended it.
	ExitCode int32     `json:"exit_code"`
	Signal   int32     `json:"signal"`
	EndTime  time.Time `json:"end_time"`
	// Error explains EndFailed.
	Error string `json:"error,omitempty"`
	// Usage is what the script's processes used (nil: unknown).
	Usage *job.Usage `json:"usage,omitempty"`
}

// StepDone reports what a node's tasks of a job step used, once they all
// ended (slurmstepd's jobacct data at REQUEST_STEP_COMPLETE): CPU times
// summed, the largest resident set and the task it was in, the tasks'
// average, the most one task read and wrote.
type StepDone struct {
	Node       string    `json:"node"`
	JobID      uint32    `json:"job_id"`
	StepID     uint32    `json:"step_id"`
	Tasks      uint32    `json:"tasks"`
	Usage      job.Usage `json:"usage"`
	MaxRSSTask uint32    `json:"max_rss_task"`
	AveRSS     uint64    `json:"ave_rss"`
	// Stats are the node's tasks' measures, task by task.
	Stats job.UsageStats `json:"stats,omitzero"`
}

// StepStatRequest names the step PathStepStat asks about; StepID is
// stepproto.BatchStep for the batch script.
type StepStatRequest struct {
	JobID  uint32 `json:"job_id"`
	StepID uint32 `json:"step_id"`
}

// StepStat is what a node's tasks of a running step use: each task's
// peaks so far and its live processes.
type StepStat struct {
	Node  string               `json:"node"`
	Tasks []stepproto.TaskStat `json:"tasks"`
}

// Launch asks a node daemon to run a batch job (REQUEST_BATCH_JOB_LAUNCH).
// It carries everything needed to build the job's environment without a
// round trip.
type Launch struct {
	JobID       uint32   `json:"job_id"`
	ArrayJobID  uint32   `json:"array_job_id"`
	ArrayTaskID uint32   `json:"array_task_id"`
	ArrayMin    uint32   `json:"array_min,omitempty"`
	ArrayMax    uint32   `json:"array_max,omitempty"`
	ArrayStep   uint32   `json:"array_step,omitempty"`
	ArrayCount  uint32   `json:"array_count,omitempty"`
	Name        string   `json:"name"`
	Cluster     string   `json:"cluster"`
	Partition   string   `json:"partition"`
	Account     string   `json:"account"`
	QOS         string   `json:"qos"`
	UserName    string   `json:"user_name"`
	UID         uint32   `json:"uid"`
	GID         uint32   `json:"gid"`
	WorkDir     string   `json:"work_dir"`
	Script      string   `json:"script"`
	Argv        []string `json:"argv"`
	Environment []string `json:"environment"`
	StdOut      string   `json:"stdout"`
	StdErr      string   `json:"stderr"`
	StdIn       string   `json:"stdin"`
	OpenAppend  bool     `json:"open_append"`
	SubmitHost  string   `json:"submit_host"`
	SubmitDir   string   `json:"submit_dir"`
	// Nodes lists every node of the allocation in order, with per-node
	// CPUs and task counts.
	Nodes        []string `json:"nodes"`
	CPUsPerNode  []uint32 `json:"cpus_per_node"`
	TasksPerNode []uint32 `json:"tasks_per_node"`
	NumTasks     uint32   `json:"num_tasks"`
	CPUsPerTask  uint32   `json:"cpus_per_task"`
	// TasksPerNodeReq is --ntasks-per-node (0: not given).
	TasksPerNodeReq uint32 `json:"ntasks_per_node_req"`
	// MemPerNode / MemPerCPU (MB) as requested, for SLURM_MEM_PER_*.
	MemPerNode uint64 `json:"mem_per_node"`
	MemPerCPU  uint64 `json:"mem_per_cpu"`
	// GPUs are the device indices on this (batch) node.
	GPUs         []int     `json:"gpus"`
	TimeLimitMin uint32    `json:"time_limit"`
	StartTime    time.Time `json:"start_time"`
	RestartCount uint32    `json:"restart_count"`
	// TopologyAddr and TopologyPattern are the batch host's place in the
	// switch tree ("spine.s0.n1", "switch.switch.node"); empty without a
	// topology.
	TopologyAddr    string `json:"topology_addr,omitempty"`
	TopologyPattern string `json:"topology_pattern,omitempty"`
	Nice            int32  `json:"nice"`
	Exclusive       bool   `json:"exclusive"`
	// ControllerHost/Port are for SLURM_WORKING_CLUSTER and SLURM_CONF.
	ConfPath string `json:"conf_path"`
	// HetEnv describes a heterogeneous job's components to its batch
	// script (SLURM_*_HET_GROUP_n, SLURM_HET_SIZE), as the controller
	// writes them.
	HetEnv []string `json:"het_env,omitempty"`
}

// Signal asks a node daemon to signal or end a job.
type Signal struct {
	JobID  uint32 `json:"job_id"`
	Signal int32  `json:"signal"`
	// Terminate ends the job: SIGCONT+SIGTERM, then SIGKILL after KillWait.
	Terminate bool          `json:"terminate"`
	Kind      EndKind       `json:"kind"`
	KillWait  time.Duration `json:"kill_wait"`
	// StepsOnly reaches only the job's steps on this node (its batch
	// script, if any, is spared), as a job's non-batch nodes hold none;
	// with StepID set, only that step (scancel JOB.STEP).
	StepsOnly bool    `json:"steps_only,omitempty"`
	StepID    *uint32 `json:"step_id,omitempty"`
	// ShellOnly reaches the batch script's shell alone, not the
	// processes it started (scancel --batch).
	ShellOnly bool `json:"shell_only,omitempty"`
}

// StepLaunch asks a node daemon to start its tasks of a job step
// (REQUEST_LAUNCH_TASKS): srun sends it to every node of the step, with
// the credential the controller signed for the step. The daemon then
// dials srun back at Cred's address and speaks internal/step/stream.
type StepLaunch struct {
	Cred   string `json:"cred"`
	JobID  uint32 `json:"job_id"`
	StepID uint32 `json:"step_id"`
	// NodeIndex is this node's place among Nodes (SLURM_NODEID); Tasks
	// are the global task ids (SLURM_PROCID) it runs, ascending.
	NodeIndex int   `json:"node_index"`
	Tasks     []int `json:"tasks"`
	// Nodes and TasksPerNode are the whole step's layout; NodeAddrs the
	// nodes' addresses (for launch hooks such as the NCCL plugin's
	// MASTER_ADDR).
	Nodes        []string `json:"nodes"`
	NodeAddrs    []string `json:"node_addrs,omitempty"`
	TasksPerNode []int    `json:"tasks_per_node"`
	Argv         []string `json:"argv"`
	// Env is srun's environment, with what srun sets for the step
	// (SLURM_STEP_*, SLURM_NTASKS...); the daemon adds each task's own.
	Env  []string `json:"env"`
	Cwd  string   `json:"cwd"`
	UID  uint32   `json:"uid"`
	GID  uint32   `json:"gid"`
	User string   `json:"user"`
	// CPUsPerTask is -c; CPUs are the node's CPU ids the step may use
	// (for --cpu-bind); CPUBind is --cpu-bind (none, cores, map_cpu:...).
	CPUsPerTask int    `json:"cpus_per_task"`
	CPUs        []int  `json:"cpus,omitempty"`
	CPUBind     string `json:"cpu_bind,omitempty"`
	// GPUs are the device indices the step may use on this node;
	// GPUsPerTask splits them between its tasks (--gpus-per-task), and
	// GPUBind is --gpu-bind.
	GPUs        []int  `json:"gpus,omitempty"`
	GPUsPerTask int    `json:"gpus_per_task,omitempty"`
	GPUBind     string `json:"gpu_bind,omitempty"`
	// StdOut, StdErr and StdIn are file name patterns (-o, -e, -i with
	// %t, %n, ...) written or read on the node; empty: through srun.
	// StdinTask is the task that gets srun's stdin (-1: none, -2: all).
	StdOut    string `json:"stdout,omitempty"`
	StdErr    string `json:"stderr,omitempty"`
	StdIn     string `json:"stdin,omitempty"`
	StdinTask int    `json:"stdin_task"`
	// JobName and the rest describe the job for output patterns.
	JobName   string `json:"job_name"`
	MemPerCPU uint64 `json:"mem_per_cpu,omitempty"`
	// MemLimitMB bounds the memory of the step's tasks on this node
	// (MB, 0: no limit), as task/cgroup's ConstrainRAMSpace does.
	MemLimitMB uint64 `json:"mem_limit_mb,omitempty"`
	// KillWait is how long tasks get between SIGTERM and SIGKILL.
	KillWait time.Duration `json:"kill_wait"`
	// MPI is the step's MPI type ("pmi2": the daemon serves PMI to its
	// tasks; "" or "none": nothing), with the step's PMI job id
	// (PMI_JOBID, "JOB.STEP") and PMI_process_mapping.
	MPI        string `json:"mpi,omitempty"`
	PMIJobID   string `json:"pmi_job_id,omitempty"`
	PMIMapping string `json:"pmi_mapping,omitempty"`
	// PMIRanks are every node's ranks, in node order (pmix only).
	PMIRanks [][]int `json:"pmi_ranks,omitempty"`
}

// ConfigFile is one of the controller's configuration files as
// RESPONSE_CONFIG carries it. A file the controller does not have is
// sent with Exists false, so that a cache drops its old copy.
type ConfigFile struct {
	Name    string `json:"name"`
	Content string `json:"content,omitempty"`
	Exists  bool   `json:"exists"`
	// Execute marks a script (Prolog, Epilog...), written mode 0755.
	Execute bool `json:"execute,omitempty"`
}

// ConfigReply answers PathConfig (RESPONSE_CONFIG): the files, and for a
// node daemon the SlurmdSpoolDir they hold, where its cache goes.
type ConfigReply struct {
	Files          []ConfigFile `json:"files"`
	SlurmdSpoolDir string       `json:"slurmd_spooldir,omitempty"`
}

// ReplyMethod is the method a signed reply's token names: a reply is
// signed by the controller for the daemon that asked, bound to its body
// and to the request (ReplyURI), so that whoever answers in the
// controller's place (a spoofed DNS record, a host on the path) cannot
// hand a node a configuration, and an old reply cannot be replayed.
const ReplyMethod = "REPLY"

// ReplyURI names the request a signed reply answers: its path and the
// SHA-256 of the request's own token.
func ReplyURI(path, requestToken string) string {
	return path + "?request=" + msgauth.BodyHash([]byte(requestToken))
}

// Error is an error answer.
type Error struct {
	Error string `json:"error"`
}

// ErrUnregistered is the controller's answer to a heartbeat of a node it
// does not hold registered, sent with 409 Conflict: the daemon registers
// again (and reports its jobs) before it heartbeats.
var ErrUnregistered = errors.New("node must register")

// MaxBody caps request bodies on both sides (a batch script is at most a
// few MB in Slurm too).
const MaxBody = 16 << 20

// Client sends the protocol's messages, each signed for its receiver
// with the cluster key (internal/msgauth).
type Client struct {
	HTTP *http.Client
	// Signer signs each request (nil: unsigned, for srun's step
	// launches, which carry the controller's step credential instead).
	Signer *msgauth.Signer
	// Scheme is http, or https with TLS.
	Scheme string
}

// NewClient returns the client both sides use: connections are kept and
// reused per peer (a controller launching hundreds of jobs a second to
// the same node daemon would otherwise open, and leave in TIME_WAIT, a
// connection per request).
//
// With tlsClient (TLSType=tls/s2n) the peers are reached over TLS, and
// Scheme says so.
func NewClient(s *msgauth.Signer, tlsClient *tls.Config) *Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 64
	scheme := "http"
	if tlsClient != nil {
		t.TLSClientConfig = tlsClient.Clone()
		scheme = "https"
	}
	return &Client{HTTP: &http.Client{Timeout: 10 * time.Second, Transport: t}, Signer: s, Scheme: scheme}
}

// URL is the address of path on the daemon at host:port.
func (c *Client) URL(addr, path string) string {
	scheme := c.Scheme
	if scheme == "" {
		scheme = "http"
	}
	return scheme + "://" + addr + path
}

// Post sends v as JSON to url, signed for aud (msgauth.Controller or
// msgauth.Node(name)), and decodes the answer into out (if non-nil). A
// non-2xx answer becomes an error carrying the status and message.
func (c *Client) Post(ctx context.Context, aud, url string, v, out any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Signer != nil {
		if err := c.Signer.SignRequest(req, aud, body); err != nil {
			return err
		}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var e Error
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return &StatusError{Code: resp.StatusCode, Msg: e.Error}
		}
		return &StatusError{Code: resp.StatusCode, Msg: string(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode answer: %w", err)
		}
	}
	return nil
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Code int
	Msg  string
}

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Code, e.Msg) }

// Decode reads a JSON request body into v with the size cap.
func Decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, MaxBody))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w", r.URL.Path, err)
	}
	return nil
}

// Reply writes v as JSON with status.
func Reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Fail writes an error answer.
func Fail(w http.ResponseWriter, status int, err error) {
	Reply(w, status, Error{Error: err.Error()})
}

// SignTransport signs each request it sends for Audience with Signer. A
// token is single use (the receiver refuses a nonce seen before), so
// under a transport that sends a request again (internal/failover) every
// attempt must be signed here, below it, not once by Client.Post.
type SignTransport struct {
	Next     http.RoundTripper
	Signer   *msgauth.Signer
	Audience string
}

// RoundTrip implements http.RoundTripper.
func (t *SignTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(req.Body, MaxBody+1))
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		if len(b) > MaxBody {
			return nil, fmt.Errorf("request body over %d bytes", MaxBody)
		}
		body = b
	}
	out := req.Clone(req.Context())
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if err := t.Signer.SignRequest(out, t.Audience, body); err != nil {
		return nil, fmt.Errorf("sign request to %s: %w", t.Audience, err)
	}
	return t.Next.RoundTrip(out)
}

// NewControllerClient returns the client a daemon sends its messages to
// the controllers with: each goes to whichever of controllers (base
// URLs, SlurmctldHost order) is up (internal/failover), signed by s for
// msgauth.Controller afresh on every attempt. Post it URLs under base,
// the first controller.
func NewControllerClient(s *msgauth.Signer, tlsClient *tls.Config, controllers []string, o failover.Options) (c *Client, base string, err error) {
	plain := NewClient(nil, tlsClient)
	ft, err := failover.New(&SignTransport{Next: plain.HTTP.Transport, Signer: s, Audience: msgauth.Controller}, controllers, o)
	if err != nil {
		return nil, "", err
	}
	plain.HTTP.Transport = ft
	return plain, ft.Controllers()[0], nil
}
