package droverv1

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
	steplayout "github.com/droverhq/drover/internal/step/layout"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// maxStepBody caps a step request: an argv and a node list.
const maxStepBody = 1 << 20

// isSHA256Hex reports whether s is a SHA-256 in lowercase hex, as
// tlsconf.Fingerprint writes it.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// stepRoutes adds the job step paths (internal/step/proto) to mux.
func stepRoutes(mux *http.ServeMux, ctl *controller.Controller) {
	mux.HandleFunc("POST "+stepproto.PathCreate, func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_JOB_STEP_CREATE")
		caller, _ := authctx.From(r.Context())
		id, err := pathID(r, "job_id")
		if err != nil {
			ReplyError(w, err, "step create")
			return
		}
		var req stepproto.CreateRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, maxStepBody)).Decode(&req); err != nil {
			ReplyError(w, slurmerr.New(slurmerr.Unspecified, "malformed step request: %v", err), "step create")
			return
		}
		if req.SrunCert != "" && !isSHA256Hex(req.SrunCert) {
			ReplyError(w, slurmerr.New(slurmerr.Unspecified, "malformed step request: srun_cert is not a hex SHA-256"), "step create")
			return
		}
		// No -m: srun's default, which the layout chooses.
		var dist steplayout.Distribution
		if req.Distribution != "" {
			if dist, err = steplayout.ParseDistribution(req.Distribution); err != nil {
				ReplyError(w, err, "step create")
				return
			}
		}
		g, err := ctl.CreateStep(r.Context(), caller.Identity, controller.StepRequest{
			JobID: job.ID(id), Name: req.Name,
			Layout: steplayout.Request{
				MinNodes: req.MinNodes, MaxNodes: req.MaxNodes, Tasks: req.Tasks, TasksPerNode: req.TasksPerNode,
				CPUsPerTask: req.CPUsPerTask, Dist: dist, NodeList: req.NodeList, Exclude: req.Exclude,
				Relative: req.Relative, Arbitrary: req.Arbitrary, Overcommit: req.Overcommit,
				NodesFromEnv: req.NodesFromEnv, TasksFromEnv: req.TasksFromEnv,
			},
			Overlap: req.Overlap, Exact: req.Exact, GPUsPerNode: req.GPUsPerNode, GPUsPerTask: req.GPUsPerTask,
			MemPerNode: req.MemPerNode, MemPerCPU: req.MemPerCPU,
			TimeLimit: req.TimeLimit, SrunAddr: req.SrunAddr, SrunCert: req.SrunCert, SrunHost: req.SrunHost, SrunPID: req.SrunPID, Argv: req.Argv,
			HetStepID: req.HetStepID,
		})
		if err != nil {
			ReplyError(w, err, "step create")
			return
		}
		j := g.Job
		out := stepproto.Grant{
			JobID: uint32(j.ID), StepID: g.Step.ID, Nodes: g.Step.Nodes, NodeAddrs: g.NodeAddrs,
			Tasks: g.Layout.Tasks, CPUs: g.Step.CPUs, GPUs: g.Step.GPUs, MemMB: g.Step.MemMB, Cred: g.Cred, Distribution: g.Step.Distribution,
			Warnings: g.Layout.Warnings,
			JobName:  j.Req.Name, Cluster: ctl.ClusterName(), Partition: j.Req.Partition, Account: j.Req.Account, QOS: j.Req.QOS,
			JobNodes: j.Alloc.NodeNames(), JobNumTasks: j.Req.NumTasks,
			UID: j.Req.UserID, GID: j.Req.GroupID, User: j.Req.UserName,
			MemPerCPU: j.Req.MemPerCPU, MemPerNode: j.Req.MemPerNode, TimeLimit: j.Req.TimeLimit,
			KillWait: int(ctl.KillWait().Seconds()),
		}
		for _, na := range j.Alloc.Nodes {
			out.JobCPUsPerNode = append(out.JobCPUsPerNode, na.CPUs)
			out.JobTasks = append(out.JobTasks, na.Tasks)
		}
		replyJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST "+stepproto.PathEnd, func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_STEP_COMPLETE")
		caller, _ := authctx.From(r.Context())
		id, step, err := pathStep(r)
		var end stepproto.EndRequest
		if err == nil {
			// The body is optional: an older srun sends none.
			if derr := json.NewDecoder(io.LimitReader(r.Body, maxStepBody)).Decode(&end); derr != nil && derr != io.EOF {
				err = slurmerr.New(slurmerr.Unspecified, "malformed step end: %v", derr)
			}
		}
		if err == nil {
			err = ctl.EndStep(r.Context(), caller.Identity, job.ID(id), step, controller.StepEnd{ExitCode: end.ExitCode, Signal: end.Signal, Cancelled: end.Cancelled})
		}
		if err != nil {
			ReplyError(w, err, "step complete")
			return
		}
		replyJSON(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("POST "+stepproto.PathSignal, func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_CANCEL_JOB_STEP")
		caller, _ := authctx.From(r.Context())
		id, step, err := pathStep(r)
		sig := 0
		if err == nil {
			if v := r.URL.Query().Get("signal"); v != "" {
				if sig, err = strconv.Atoi(v); err != nil || sig < 0 || sig > 64 {
					err = slurmerr.New(slurmerr.Unspecified, "invalid signal %q", v)
				}
			}
		}
		if err == nil {
			err = ctl.SignalStep(r.Context(), caller.Identity, job.ID(id), step, int32(sig))
		}
		if err != nil {
			ReplyError(w, err, "step signal")
			return
		}
		replyJSON(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("POST "+stepproto.PathComplete, func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_COMPLETE_JOB_ALLOCATION")
		caller, _ := authctx.From(r.Context())
		id, err := pathID(r, "job_id")
		code := 0
		if err == nil {
			if v := r.URL.Query().Get("exit_code"); v != "" {
				if code, err = strconv.Atoi(v); err != nil {
					err = slurmerr.New(slurmerr.Unspecified, "invalid exit code %q", v)
				}
			}
		}
		if err == nil {
			err = ctl.CompleteAllocation(r.Context(), caller.Identity, job.ID(id), int32(code))
		}
		if err != nil {
			ReplyError(w, err, "complete job allocation")
			return
		}
		replyJSON(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("GET "+stepproto.PathStat, func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_JOB_STEP_STAT")
		caller, _ := authctx.From(r.Context())
		id, err := pathID(r, "job_id")
		var step *uint32
		if v := r.URL.Query().Get("step"); err == nil && v != "" {
			n, perr := strconv.ParseUint(v, 10, 32)
			switch {
			case v == "batch":
				n = uint64(stepproto.BatchStep)
			case perr != nil:
				err = slurmerr.New(slurmerr.InvalidJobID, "Invalid step id: %s", v)
			}
			s := uint32(n)
			step = &s
		}
		var stats []stepproto.StepStat
		if err == nil {
			stats, err = ctl.StepStats(r.Context(), caller.Identity, job.ID(id), step)
		}
		if err != nil {
			ReplyError(w, err, "step stat")
			return
		}
		replyJSON(w, http.StatusOK, stepproto.Stats{Steps: stats})
	})
	mux.HandleFunc("GET "+stepproto.PathList, func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_JOB_STEP_INFO")
		out := stepproto.List{Steps: []stepproto.Step{}}
		for _, s := range ctl.Steps() {
			out.Steps = append(out.Steps, stepproto.Step{
				JobID: uint32(s.JobID), StepID: s.ID, Name: s.Name, UserID: s.UserID, User: s.UserName,
				Partition: s.Partition, Nodes: s.Nodes, Tasks: s.Tasks, CPUs: s.CPUs, CPUsPerTask: s.CPUsPerTask,
				StartTime: s.StartTime, TimeLimit: s.TimeLimit, SrunHost: s.SrunHost, SrunPID: s.SrunPID,
				Distribution: s.Distribution, Argv: s.Argv,
			})
		}
		replyJSON(w, http.StatusOK, out)
	})
}

func pathID(r *http.Request, name string) (uint32, error) {
	v := r.PathValue(name)
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
	if err != nil || n == 0 {
		return 0, slurmerr.New(slurmerr.InvalidJobID, "Invalid job id: %s", v)
	}
	return uint32(n), nil
}

func pathStep(r *http.Request) (uint32, uint32, error) {
	id, err := pathID(r, "job_id")
	if err != nil {
		return 0, 0, err
	}
	v := r.PathValue("step_id")
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, 0, slurmerr.New(slurmerr.InvalidJobID, "Invalid step id: %s", v)
	}
	return id, uint32(n), nil
}

func replyJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprintf("encode answer: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}
