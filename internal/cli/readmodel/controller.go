package readmodel

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/hostlist"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Ping is one slurmctld's answer to a ping (GET /ping) as scontrol
// reads it.
type Ping struct {
	Hostname string
	// Pinged is the ping's result ("UP", "DOWN"); Responding whether
	// the controller answered.
	Pinged     string
	Responding bool
	// Mode is "primary", "backup"... "" when not given; Primary whether
	// the controller is the primary.
	Mode    string
	Primary bool
}

// FromV0044Pings reads a REST ping list, in its order.
func FromV0044Pings(ws []v0044.V0044ControllerPing) []Ping {
	out := make([]Ping, len(ws))
	for i, w := range ws {
		out[i] = Ping{Hostname: w.Hostname.Or(""), Pinged: w.Pinged.Or(""), Responding: w.Responding, Mode: w.Mode.Or(""), Primary: w.Primary}
	}
	return out
}

// GetPings is GET /ping: every slurmctld, primary first.
func GetPings(ctx context.Context, api clienv.API) (Answer[Ping], error) {
	res, err := api.SlurmV0044GetPing(ctx)
	if err != nil {
		return Answer[Ping]{}, fmt.Errorf("GET /ping: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiPingArrayResp:
		return Answer[Ping]{Records: FromV0044Pings(r.Pings), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiPingArrayRespStatusCode:
		return Answer[Ping]{Records: FromV0044Pings(r.Response.Pings), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[Ping]{Status: -1}, nil
}

// Diag is what the commands read of the controller's statistics (GET
// /diag): when they were taken and since when, the Slurm release that
// answered (scontrol), and the counters sdiag prints. Times are seconds
// since the epoch (0 when unset, int64(Infinite) when infinite); a counter
// the answer leaves out reads 0, as sdiag prints it.
type Diag struct {
	// StartTime is req_time_start: when the counters were last reset.
	StartTime int64
	// Release is the answer's meta.slurm.release, "" when not given.
	Release string

	// ReqTime is when the controller answered.
	ReqTime int64
	// RPCQueueEnabled is slurmctld's rpc_queue_enabled; v0.0.44 does not
	// carry it, so it is false unless a later reading fills it.
	RPCQueueEnabled bool

	ServerThreadCount, AgentQueueSize, AgentCount, AgentThreadCount, DBDAgentQueueSize int32

	JobsSubmitted, JobsStarted, JobsCompleted, JobsCanceled, JobsFailed int32
	JobStatesTime                                                       int64
	JobsPending, JobsRunning                                            int32

	// The main scheduler: the last and longest cycle (microseconds),
	// how many cycles, their summed time and depth, and the queue length
	// of the last one.
	ScheduleCycleLast, ScheduleCycleMax, ScheduleCycleCounter int32
	ScheduleCycleSum                                          int64
	ScheduleCycleDepth, ScheduleQueueLen                      int32
	// ScheduleExit counts why the main scheduler's cycles ended, in
	// Slurm's order of schedule_exit2string: end of queue,
	// default_queue_depth, sched_max_job_start, licenses, max_rpc_cnt,
	// max_sched_time.
	ScheduleExit [6]int32

	BFActive                                                    bool
	BFBackfilledJobs, BFLastBackfilledJobs, BFBackfilledHetJobs int32
	BFCycleCounter                                              int32
	BFWhenLastCycle                                             int64
	BFCycleLast, BFCycleMax                                     int32
	BFCycleSum                                                  int64
	BFLastDepth, BFLastDepthTry, BFDepthSum, BFDepthTrySum      int32
	BFQueueLen, BFQueueLenSum, BFTableSize, BFTableSizeSum      int32
	// BFExit counts why backfill cycles ended, in Slurm's order of
	// bf_exit2string: end of queue, bf_max_job_start, bf_max_job_test,
	// state changed, bf_node_space_size, bf_max_time.
	BFExit [6]int32

	GettimeofdayLatency int32

	// RPCsByType, RPCsByUser, PendingRPCs and PendingRPCHosts are the
	// RPC tables, in the answer's order.
	RPCsByType      []RPCStat
	RPCsByUser      []RPCStat
	PendingRPCs     []RPCStat
	PendingRPCHosts []PendingRPCHosts
}

// RPCStat is one row of sdiag's RPC tables: a message type (ID its
// number, Name its name) or a user (ID the uid, Name the user's name).
// TotalTime is in microseconds; Queued, Dropped and the cycles are
// filled only for message types.
type RPCStat struct {
	ID                  uint32
	Name                string
	Count               uint32
	TotalTime           uint64
	Queued              uint32
	Dropped             uint64
	CycleLast, CycleMax uint32
}

// AverageTime is the RPCs' mean time, as sdiag computes it (integer
// division, 0 before the first).
func (r RPCStat) AverageTime() uint64 {
	if r.Count == 0 {
		return 0
	}
	return r.TotalTime / uint64(r.Count)
}

// PendingRPCHosts is one pending RPC of sdiag's "Pending RPCs": its
// message type and the hosts it is bound for, a hostlist expression as
// slurmctld keeps it (the answer carries the names expanded).
type PendingRPCHosts struct {
	ID       uint32
	Name     string
	Hostlist string
}

// FromV0044Diag reads a slurmrestd v0.0.44 statistics answer.
func FromV0044Diag(w *v0044.V0044OpenapiDiagResp) Diag {
	st := &w.Statistics
	d := Diag{
		StartTime: slurmTime(st.ReqTimeStart),
		ReqTime:   slurmTime(st.ReqTime),

		ServerThreadCount: st.ServerThreadCount.Or(0),
		AgentQueueSize:    st.AgentQueueSize.Or(0),
		AgentCount:        st.AgentCount.Or(0),
		AgentThreadCount:  st.AgentThreadCount.Or(0),
		DBDAgentQueueSize: st.DbdAgentQueueSize.Or(0),

		JobsSubmitted: st.JobsSubmitted.Or(0),
		JobsStarted:   st.JobsStarted.Or(0),
		JobsCompleted: st.JobsCompleted.Or(0),
		JobsCanceled:  st.JobsCanceled.Or(0),
		JobsFailed:    st.JobsFailed.Or(0),
		JobStatesTime: slurmTime(st.JobStatesTs),
		JobsPending:   st.JobsPending.Or(0),
		JobsRunning:   st.JobsRunning.Or(0),

		ScheduleCycleLast:    st.ScheduleCycleLast.Or(0),
		ScheduleCycleMax:     st.ScheduleCycleMax.Or(0),
		ScheduleCycleCounter: st.ScheduleCycleTotal.Or(0),
		ScheduleCycleSum:     st.ScheduleCycleSum.Or(0),
		ScheduleCycleDepth:   st.ScheduleCycleDepth.Or(0),
		ScheduleQueueLen:     st.ScheduleQueueLength.Or(0),

		BFActive:             st.BfActive.Or(false),
		BFBackfilledJobs:     st.BfBackfilledJobs.Or(0),
		BFLastBackfilledJobs: st.BfLastBackfilledJobs.Or(0),
		BFBackfilledHetJobs:  st.BfBackfilledHetJobs.Or(0),
		BFCycleCounter:       st.BfCycleCounter.Or(0),
		BFWhenLastCycle:      slurmTime(st.BfWhenLastCycle),
		BFCycleLast:          st.BfCycleLast.Or(0),
		BFCycleMax:           st.BfCycleMax.Or(0),
		BFCycleSum:           st.BfCycleSum.Or(0),
		BFLastDepth:          st.BfLastDepth.Or(0),
		BFLastDepthTry:       st.BfLastDepthTry.Or(0),
		BFDepthSum:           st.BfDepthSum.Or(0),
		BFDepthTrySum:        st.BfDepthTrySum.Or(0),
		BFQueueLen:           st.BfQueueLen.Or(0),
		BFQueueLenSum:        st.BfQueueLenSum.Or(0),
		BFTableSize:          st.BfTableSize.Or(0),
		BFTableSizeSum:       st.BfTableSizeSum.Or(0),

		GettimeofdayLatency: st.GettimeofdayLatency.Or(0),
	}
	if e, ok := st.ScheduleExit.Get(); ok {
		d.ScheduleExit = [6]int32{e.EndJobQueue.Or(0), e.DefaultQueueDepth.Or(0), e.MaxJobStart.Or(0),
			e.Licenses.Or(0), e.MaxRPCCnt.Or(0), e.MaxSchedTime.Or(0)}
	}
	if e, ok := st.BfExit.Get(); ok {
		d.BFExit = [6]int32{e.EndJobQueue.Or(0), e.BfMaxJobStart.Or(0), e.BfMaxJobTest.Or(0),
			e.StateChanged.Or(0), e.BfNodeSpaceSize.Or(0), e.BfMaxTime.Or(0)}
	}
	for _, r := range st.RpcsByMessageType {
		d.RPCsByType = append(d.RPCsByType, RPCStat{ID: uint32(r.TypeID), Name: r.MessageType, Count: uint32(r.Count),
			TotalTime: uint64(r.TotalTime), Queued: uint32(r.Queued), Dropped: uint64(r.Dropped),
			CycleLast: uint32(r.CycleLast), CycleMax: uint32(r.CycleMax)})
	}
	for _, r := range st.RpcsByUser {
		d.RPCsByUser = append(d.RPCsByUser, RPCStat{ID: uint32(r.UserID), Name: r.User, Count: uint32(r.Count), TotalTime: uint64(r.TotalTime)})
	}
	for _, r := range st.PendingRpcs {
		d.PendingRPCs = append(d.PendingRPCs, RPCStat{ID: uint32(r.TypeID), Name: r.MessageType, Count: uint32(r.Count)})
	}
	for _, r := range st.PendingRpcsByHostlist {
		d.PendingRPCHosts = append(d.PendingRPCHosts, PendingRPCHosts{ID: uint32(r.TypeID), Name: r.MessageType, Hostlist: hostlist.Compress(r.Count)})
	}
	if m, ok := w.Meta.Get(); ok {
		if s, ok := m.Slurm.Get(); ok {
			d.Release = s.Release.Or("")
		}
	}
	return d
}

// GetDiagResp is GET /diag as the controller answered it, for the
// commands that print the answer itself (sdiag --json), and the answer's
// HTTP status (0 for success, -1 for an answer of no known shape).
func GetDiagResp(ctx context.Context, api clienv.API) (*v0044.V0044OpenapiDiagResp, int, error) {
	res, err := api.SlurmV0044GetDiag(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("GET /diag: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiDiagResp:
		return r, 0, nil
	case *v0044.V0044OpenapiDiagRespStatusCode:
		return &r.Response, r.StatusCode, nil
	}
	return nil, -1, nil
}

// GetDiag is GET /diag: the controller's statistics, one record.
func GetDiag(ctx context.Context, api clienv.API) (Answer[Diag], error) {
	r, status, err := GetDiagResp(ctx, api)
	if err != nil || r == nil {
		return Answer[Diag]{Status: status}, err
	}
	return Answer[Diag]{Records: []Diag{FromV0044Diag(r)}, Errors: problems(r.Errors), Status: status}, nil
}
