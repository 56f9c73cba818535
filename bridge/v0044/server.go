package v0044

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// Server implements api.Handler on top of a controller. Operations the
// domain does not offer yet are answered by the embedded
// UnimplementedHandler.
type Server struct {
	api.UnimplementedHandler
	ctl *controller.Controller
	now func() time.Time
}

// NewServer returns the v0.0.44 handler for ctl.
func NewServer(ctl *controller.Controller) *Server {
	return &Server{ctl: ctl, now: time.Now}
}

func (s *Server) count(ctx context.Context, kind string) { s.ctl.StatsRef().CountRPCCtx(ctx, kind) }

func asSlurm(err error, target **slurmerr.Error) bool { return errors.As(err, target) }

// SlurmV0044GetPing implements GET /ping/.
func (s *Server) SlurmV0044GetPing(ctx context.Context) (api.SlurmV0044GetPingRes, error) {
	s.count(ctx, "REQUEST_PING")
	// Every SlurmctldHost in order, as ping_all_controllers lists them:
	// the controller asked pings the others itself.
	list, _ := s.ctl.Controllers(ctx)
	pings := api.V0044ControllerPingArray{}
	for _, c := range list {
		pinged := "DOWN"
		if c.Responding {
			pinged = "UP"
		}
		pings = append(pings, api.V0044ControllerPing{
			Hostname:   api.NewOptString(c.Name),
			Pinged:     api.NewOptString(pinged),
			Latency:    api.NewOptInt64(c.Latency.Microseconds()),
			Mode:       api.NewOptString(droverapi.ControllerMode(c.Index, len(list))),
			Primary:    c.Index == 0,
			Responding: c.Responding,
		})
	}
	return &api.V0044OpenapiPingArrayResp{
		Pings: pings,
		Meta:  s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{},
	}, nil
}

// SlurmV0044GetDiag implements GET /diag/ with the controller's counters
// since its start or the last sdiag -r (controller.DiagStats).
func (s *Server) SlurmV0044GetDiag(ctx context.Context) (api.SlurmV0044GetDiagRes, error) {
	s.count(ctx, "REQUEST_STATS_INFO")
	// The same counters /metrics/scheduler reports, less what they were
	// at the last reset, so that sdiag and the metrics never disagree
	// about what happened since.
	ss := s.ctl.DiagStats()
	stats := api.V0044StatsMsg{
		ReqTime:      api.NewOptV0044Uint64NoValStruct(u64(ss.Time.Unix())),
		ReqTimeStart: api.NewOptV0044Uint64NoValStruct(u64(ss.Start.Unix())),
		// slurmctld counts the thread serving this request among its
		// server threads, so there is always at least one.
		ServerThreadCount:      api.NewOptInt32(int32(max(ss.Serving, 1))),
		JobsSubmitted:          api.NewOptInt32(int32(ss.Submitted)),
		JobsStarted:            api.NewOptInt32(int32(ss.Started)),
		JobsCompleted:          api.NewOptInt32(int32(ss.Completed)),
		JobsCanceled:           api.NewOptInt32(int32(ss.Cancelled)),
		JobsFailed:             api.NewOptInt32(int32(ss.Failed)),
		JobsPending:            api.NewOptInt32(int32(ss.Pending)),
		JobsRunning:            api.NewOptInt32(int32(ss.Running)),
		JobStatesTs:            api.NewOptV0044Uint64NoValStruct(u64(ss.Time.Unix())),
		ScheduleCycleLast:      api.NewOptInt32(int32(ss.LastCycleMicros)),
		ScheduleCycleMax:       api.NewOptInt32(int32(ss.MaxCycleMicros)),
		ScheduleCycleTotal:     api.NewOptInt32(int32(ss.Cycles)),
		ScheduleCycleSum:       api.NewOptInt64(int64(ss.TotalCycleMicros)),
		ScheduleCycleMean:      api.NewOptInt64(int64(meanOf(ss.TotalCycleMicros, ss.Cycles))),
		ScheduleCycleDepth:     api.NewOptInt32(int32(ss.CycleDepth)),
		ScheduleCycleMeanDepth: api.NewOptInt64(int64(meanOf(ss.CycleDepth, ss.Cycles))),
		ScheduleExit: api.NewOptV0044ScheduleExitFields(api.V0044ScheduleExitFields{
			EndJobQueue: api.NewOptInt32(int32(ss.ScheduleExits[0])), DefaultQueueDepth: api.NewOptInt32(int32(ss.ScheduleExits[1])),
			MaxJobStart: api.NewOptInt32(int32(ss.ScheduleExits[2])), Licenses: api.NewOptInt32(int32(ss.ScheduleExits[3])),
			MaxRPCCnt: api.NewOptInt32(int32(ss.ScheduleExits[4])), MaxSchedTime: api.NewOptInt32(int32(ss.ScheduleExits[5])),
		}),
		ScheduleQueueLength:   api.NewOptInt32(int32(ss.Pending)),
		BfActive:              api.NewOptBool(false),
		BfBackfilledJobs:      api.NewOptInt32(int32(ss.Backfilled)),
		BfCycleCounter:        api.NewOptInt32(int32(ss.BackfillCycles)),
		BfCycleLast:           api.NewOptInt32(int32(ss.BackfillLastMicros)),
		BfCycleMax:            api.NewOptInt32(int32(ss.BackfillMaxMicros)),
		BfCycleSum:            api.NewOptInt64(int64(ss.BackfillTotalMicros)),
		BfCycleMean:           api.NewOptInt64(int64(meanOf(ss.BackfillTotalMicros, ss.BackfillCycles))),
		DbdAgentQueueSize:     api.NewOptInt32(int32(ss.AcctQueued)),
		PendingRpcs:           api.V0044StatsMsgRpcsQueue{},
		PendingRpcsByHostlist: api.V0044StatsMsgRpcsDump{},
		RpcsByMessageType:     api.V0044StatsMsgRpcsByType{},
		RpcsByUser:            api.V0044StatsMsgRpcsByUser{},
	}
	if !ss.LastBackfill.IsZero() {
		stats.BfWhenLastCycle = api.NewOptV0044Uint64NoValStruct(u64(ss.LastBackfill.Unix()))
	}
	for _, r := range s.ctl.DiagRPCs() {
		// A name Slurm has no number for (Drover's own) reads 0.
		stats.RpcsByMessageType = append(stats.RpcsByMessageType, api.V0044StatsMsgRPCType{
			MessageType: r.Kind, TypeID: slurmMsgTypes[r.Kind], Count: int32(r.Count),
			TotalTime: int64(r.TotalMicros), AverageTime: u64(int64(meanOf(r.TotalMicros, r.Count))),
		})
	}
	for _, r := range s.ctl.DiagUsers() {
		stats.RpcsByUser = append(stats.RpcsByUser, api.V0044StatsMsgRPCUser{
			User: r.Kind, UserID: int32(r.UID), Count: int32(r.Count),
			TotalTime: int64(r.TotalMicros), AverageTime: u64(int64(meanOf(r.TotalMicros, r.Count))),
		})
	}
	return &api.V0044OpenapiDiagResp{Statistics: stats, Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// meanOf is sum/n, 0 before the first of n.
func meanOf(sum, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	return sum / n
}

// SlurmV0044GetNodes implements GET /nodes/.
func (s *Server) SlurmV0044GetNodes(ctx context.Context, params api.SlurmV0044GetNodesParams) (api.SlurmV0044GetNodesRes, error) {
	s.count(ctx, "REQUEST_NODE_INFO")
	if err := s.private(ctx, "nodes", "REQUEST_NODE_INFO"); err != nil {
		return &api.V0044OpenapiNodesRespStatusCode{StatusCode: httpStatus(err), Response: api.V0044OpenapiNodesResp{Nodes: api.V0044Nodes{}, LastUpdate: u64(0),
			Meta: s.meta(ctx), Errors: errorsOf(err, "slurm_load_node()"), Warnings: api.V0044OpenapiWarnings{}}}, nil
	}
	out := api.V0044Nodes{}
	for _, ni := range s.ctl.Nodes() {
		out = append(out, s.nodeToWire(ni))
	}
	return &api.V0044OpenapiNodesResp{Nodes: out, LastUpdate: u64(unix(s.ctl.LastNodeUpdate())), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmV0044GetNode implements GET /node/{name}; an unknown node is HTTP
// 200 with an error entry, as slurmrestd answers.
func (s *Server) SlurmV0044GetNode(ctx context.Context, params api.SlurmV0044GetNodeParams) (api.SlurmV0044GetNodeRes, error) {
	s.count(ctx, "REQUEST_NODE_INFO_SINGLE")
	if err := s.private(ctx, "nodes", "REQUEST_NODE_INFO_SINGLE"); err != nil {
		return &api.V0044OpenapiNodesRespStatusCode{StatusCode: httpStatus(err), Response: api.V0044OpenapiNodesResp{Nodes: api.V0044Nodes{}, LastUpdate: u64(0),
			Meta: s.meta(ctx), Errors: errorsOf(err, "slurm_load_node_single()"), Warnings: api.V0044OpenapiWarnings{}}}, nil
	}
	ni, err := s.ctl.Node(params.NodeName)
	if err != nil {
		e := api.V0044OpenapiError{Description: api.NewOptString("Failure to query node " + params.NodeName), ErrorNumber: api.NewOptInt32(0), Error: api.NewOptString("No error"), Source: api.NewOptString("_dump_nodes")}
		return &api.V0044OpenapiNodesResp{Nodes: api.V0044Nodes{}, LastUpdate: u64(0), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{}}, nil
	}
	return &api.V0044OpenapiNodesResp{Nodes: api.V0044Nodes{s.nodeToWire(ni)}, LastUpdate: u64(unix(s.ctl.LastNodeUpdate())), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// nodeTemplate and partitionTemplate are answers with every member present
// and empty; each answer starts from a copy (see fillUnset).
var (
	nodeTemplate      = sync.OnceValue(filled[api.V0044Node])
	partitionTemplate = sync.OnceValue(filled[api.V0044PartitionInfo])
)

func filled[T any]() T {
	var v T
	fillUnset(&v)
	return v
}

// private refuses what PrivateData keeps from ctx's caller with access
// denied, as slurmctld refuses the whole RPC rather than filtering it.
func (s *Server) private(ctx context.Context, what, rpc string) error {
	who := caller(ctx)
	if !s.ctl.Hides(what, who) {
		return nil
	}
	s.ctl.Logger().Error("security violation, "+rpc+" from", "uid", who.UID)
	return slurmerr.New(slurmerr.AccessDenied, "")
}

func (s *Server) nodeToWire(ni controller.NodeInfo) api.V0044Node {
	n := ni.Node
	flags := n.StateFlags(ni.Used, ni.Completing)
	states := make([]api.V0044NodeStateItem, len(flags))
	for i, f := range flags {
		states[i] = api.V0044NodeStateItem(f)
	}
	usedGPUs := 0
	for _, u := range ni.Used.GPUs {
		if u {
			usedGPUs++
		}
	}
	w := nodeTemplate()
	w.Name = api.NewOptString(n.Name)
	w.Address = api.NewOptString(n.Addr)
	w.Hostname = api.NewOptString(n.Hostname)
	w.Port = api.NewOptInt32(int32(n.Port))
	w.Architecture = api.NewOptString(n.Arch)
	w.OperatingSystem = api.NewOptString(n.OS)
	w.Version = api.NewOptString(n.Version)
	w.Boards = api.NewOptInt32(int32(max(n.Boards, 1)))
	w.Sockets = api.NewOptInt32(int32(n.Sockets))
	w.Cores = api.NewOptInt32(int32(n.CoresPerSocket))
	w.Threads = api.NewOptInt32(int32(n.ThreadsPerCore))
	w.Cpus = api.NewOptInt32(int32(n.CPUs))
	w.EffectiveCpus = api.NewOptInt32(int32(n.CPUs))
	w.CPULoad = api.NewOptInt32(int32(n.CPULoad * 100))
	w.RealMemory = api.NewOptInt64(int64(n.RealMemory))
	w.FreeMem = api.NewOptV0044Uint64NoValStruct(u64(int64(n.FreeMemMB)))
	w.AllocCpus = api.NewOptInt32(int32(ni.Used.CPUs))
	w.AllocIdleCpus = api.NewOptInt32(int32(n.CPUs - min(ni.Used.CPUs, n.CPUs)))
	w.AllocMemory = api.NewOptInt64(int64(ni.Used.MemMB))
	w.BootTime = api.NewOptV0044Uint64NoValStruct(u64(unix(n.BootTime)))
	w.SlurmdStartTime = api.NewOptV0044Uint64NoValStruct(u64(unix(n.SlurmdStart)))
	w.LastBusy = api.NewOptV0044Uint64NoValStruct(u64(0))
	w.Features = api.V0044CsvString(n.Features)
	w.ActiveFeatures = api.V0044CsvString(n.Features)
	w.Partitions = api.V0044CsvString(ni.Partitions)
	w.Gres = api.NewOptString(gresString(n))
	w.GresUsed = api.NewOptString(gresUsed(n, usedGPUs))
	w.GresDrained = api.NewOptString("N/A")
	w.State = states
	w.Reason = api.NewOptString(n.Reason)
	w.ReasonChangedAt = api.NewOptV0044Uint64NoValStruct(u64(unix(n.ReasonTime)))
	w.ReasonSetByUser = api.NewOptString(reasonUser(n))
	w.Weight = api.NewOptInt32(int32(max(n.Weight, 1)))
	w.Tres = api.NewOptString(nodeTRES(n))
	w.TresUsed = api.NewOptString(nodeTRESUsed(ni, usedGPUs))
	w.ClusterName = api.NewOptString("")
	w.CertFlags = []api.V0044NodeCertFlagsItem{}
	w.NextStateAfterReboot = []api.V0044NodeNextStateAfterRebootItem{api.V0044NodeNextStateAfterRebootItemINVALID}
	w.ResumeAfter = api.NewOptV0044Uint64NoValStruct(u64(0))
	return w
}

func reasonUser(n *node.Node) string {
	if n.Reason == "" {
		return ""
	}
	if n.ReasonUID == 0 {
		return "root"
	}
	return strconv.FormatUint(uint64(n.ReasonUID), 10)
}

// gresString is the node's GRES as sinfo %G shows it ("gpu:a100:8(S:0-1)"):
// a count per GPU type, and the sockets whose CPUs are near those GPUs
// when discovery or gres.conf said.
func gresString(n *node.Node) string {
	if len(n.GPUs) == 0 {
		return ""
	}
	counts := map[string]int{}
	sockets := map[string][]int{}
	var types []string
	for _, g := range n.GPUs {
		if counts[g.Type] == 0 {
			types = append(types, g.Type)
		}
		counts[g.Type]++
		sockets[g.Type] = append(sockets[g.Type], gpuSockets(n, g.Cores)...)
	}
	var parts []string
	for _, t := range types {
		p := "gpu:" + strconv.Itoa(counts[t])
		if t != "" {
			p = "gpu:" + t + ":" + strconv.Itoa(counts[t])
		}
		if socks := sockets[t]; len(socks) > 0 {
			slices.Sort(socks)
			p += "(S:" + gres.FormatIDList(slices.Compact(socks)) + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ",")
}

// gpuSockets are the node's sockets holding the CPUs of a GPU's Cores
// list, counting CPUs socket by socket as Slurm's block numbering does;
// CPUs the node does not have are ignored.
func gpuSockets(n *node.Node, cores string) []int {
	if cores == "" || n.Sockets == 0 {
		return nil
	}
	ids, err := gres.ParseIDList(cores)
	if err != nil {
		return nil
	}
	perSocket := int(n.CPUs / n.Sockets)
	if perSocket == 0 {
		return nil
	}
	var out []int
	for _, c := range ids {
		if c < int(n.CPUs) {
			out = append(out, c/perSocket)
		}
	}
	return out
}

func gresUsed(n *node.Node, used int) string {
	if len(n.GPUs) == 0 {
		return ""
	}
	t := n.GPUs[0].Type
	if t == "" {
		return "gpu:" + strconv.Itoa(used)
	}
	return "gpu:" + t + ":" + strconv.Itoa(used)
}

func nodeTRES(n *node.Node) string {
	s := "cpu=" + strconv.Itoa(int(n.CPUs)) + ",mem=" + job.FormatMemMB(n.RealMemory) + ",billing=" + strconv.Itoa(int(n.CPUs))
	if len(n.GPUs) > 0 {
		s += ",gres/gpu=" + strconv.Itoa(len(n.GPUs))
	}
	return s
}

func nodeTRESUsed(ni controller.NodeInfo, gpus int) string {
	if ni.Used.Jobs == 0 {
		return ""
	}
	s := "cpu=" + strconv.Itoa(int(ni.Used.CPUs)) + ",mem=" + job.FormatMemMB(ni.Used.MemMB)
	if gpus > 0 {
		s += ",gres/gpu=" + strconv.Itoa(gpus)
	}
	return s
}

// SlurmV0044PostNode implements POST /node/{name}: drain, resume, down.
func (s *Server) SlurmV0044PostNode(ctx context.Context, req api.OptV0044UpdateNodeMsg, params api.SlurmV0044PostNodeParams) (api.SlurmV0044PostNodeRes, error) {
	s.count(ctx, "REQUEST_UPDATE_NODE")
	m, _ := req.Get()
	names, err := hostlist.Expand(params.NodeName)
	if err == nil {
		err = s.updateNodes(ctx, names, &m)
	}
	if err != nil {
		r := s.plainResp(ctx, err, "_update_node")
		return &api.V0044OpenapiRespStatusCode{StatusCode: httpStatus(err), Response: r}, nil
	}
	r := s.plainResp(ctx, nil, "")
	return &r, nil
}

// SlurmV0044PostNodes implements POST /nodes/ (names in the body).
func (s *Server) SlurmV0044PostNodes(ctx context.Context, req api.OptV0044UpdateNodeMsg) (api.SlurmV0044PostNodesRes, error) {
	s.count(ctx, "REQUEST_UPDATE_NODE")
	m, _ := req.Get()
	var names []string
	for _, item := range m.Name {
		expanded, err := hostlist.Expand(item)
		if err != nil {
			r := s.plainResp(ctx, slurmerr.New(slurmerr.InvalidNodeName, "%v", err), "_update_nodes")
			return &api.V0044OpenapiRespStatusCode{StatusCode: 422, Response: r}, nil
		}
		names = append(names, expanded...)
	}
	if err := s.updateNodes(ctx, names, &m); err != nil {
		r := s.plainResp(ctx, err, "_update_nodes")
		return &api.V0044OpenapiRespStatusCode{StatusCode: httpStatus(err), Response: r}, nil
	}
	r := s.plainResp(ctx, nil, "")
	return &r, nil
}

func (s *Server) updateNodes(ctx context.Context, names []string, m *api.V0044UpdateNodeMsg) error {
	change := controller.NodeNoChange
	for _, st := range m.State {
		switch st {
		case api.V0044UpdateNodeMsgStateItemDRAIN:
			change = controller.NodeDrain
		case api.V0044UpdateNodeMsgStateItemRESUME:
			change = controller.NodeResume
		case api.V0044UpdateNodeMsgStateItemDOWN:
			change = controller.NodeDown
		case api.V0044UpdateNodeMsgStateItemIDLE:
			change = controller.NodeIdle
		case api.V0044UpdateNodeMsgStateItemUNDRAIN:
			change = controller.NodeUndrain
		default:
			return slurmerr.New(slurmerr.InvalidNodeState, "Invalid node state specified: %s", st)
		}
	}
	for _, name := range names {
		if err := s.ctl.UpdateNode(ctx, caller(ctx), name, change, m.Reason.Or("")); err != nil {
			return err
		}
	}
	return nil
}

// SlurmV0044GetPartitions implements GET /partitions/.
func (s *Server) SlurmV0044GetPartitions(ctx context.Context, params api.SlurmV0044GetPartitionsParams) (api.SlurmV0044GetPartitionsRes, error) {
	s.count(ctx, "REQUEST_PARTITION_INFO")
	if err := s.private(ctx, "partitions", "PARTITION_INFO"); err != nil {
		return &api.V0044OpenapiPartitionRespStatusCode{StatusCode: httpStatus(err), Response: api.V0044OpenapiPartitionResp{Partitions: api.V0044PartitionInfoMsg{}, LastUpdate: u64(0),
			Meta: s.meta(ctx), Errors: errorsOf(err, "slurm_load_partitions()"), Warnings: api.V0044OpenapiWarnings{}}}, nil
	}
	out := api.V0044PartitionInfoMsg{}
	for _, p := range s.ctl.Partitions() {
		out = append(out, s.partitionToWire(p))
	}
	return &api.V0044OpenapiPartitionResp{Partitions: out, LastUpdate: u64(s.ctl.StartTime().Unix()), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmV0044GetPartition implements GET /partition/{name}; unknown names
// are 422 with error 9000, as slurmrestd 25.11 answers.
func (s *Server) SlurmV0044GetPartition(ctx context.Context, params api.SlurmV0044GetPartitionParams) (api.SlurmV0044GetPartitionRes, error) {
	s.count(ctx, "REQUEST_PARTITION_INFO")
	if err := s.private(ctx, "partitions", "PARTITION_INFO"); err != nil {
		return &api.V0044OpenapiPartitionRespStatusCode{StatusCode: httpStatus(err), Response: api.V0044OpenapiPartitionResp{Partitions: api.V0044PartitionInfoMsg{}, LastUpdate: u64(0),
			Meta: s.meta(ctx), Errors: errorsOf(err, "slurm_load_partitions()"), Warnings: api.V0044OpenapiWarnings{}}}, nil
	}
	p, err := s.ctl.Partition(params.PartitionName)
	if err != nil {
		e := api.V0044OpenapiError{Description: api.NewOptString("Unable to find partition " + params.PartitionName), ErrorNumber: api.NewOptInt32(int32(slurmerr.InvalidQuery)), Error: api.NewOptString(slurmerr.InvalidQuery.Message()), Source: api.NewOptString("op_handler_partition")}
		return &api.V0044OpenapiPartitionRespStatusCode{StatusCode: 422, Response: api.V0044OpenapiPartitionResp{Partitions: api.V0044PartitionInfoMsg{}, LastUpdate: u64(0), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{}}}, nil
	}
	return &api.V0044OpenapiPartitionResp{Partitions: api.V0044PartitionInfoMsg{s.partitionToWire(p)}, LastUpdate: u64(s.ctl.StartTime().Unix()), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// memDefault encodes a partition memory setting as slurmrestd does: unset
// when 0, except where slurmctld reports an explicit 0 (per-node values
// when no per-CPU default is set).
func memDefault(mb uint64, zeroIsSet bool) api.V0044Uint64NoValStruct {
	if mb == 0 && !zeroIsSet {
		return u64Unset()
	}
	return u64(int64(mb))
}

// partitionTRES is the partition's configured TRES, summed over its nodes
// ("cpu=2,mem=4000M,node=1,billing=2,gres/gpu=2").
func partitionTRES(pi controller.PartitionInfo) string {
	return job.TRES{CPUs: pi.TotalCPUs, MemMB: pi.TotalMemMB, Nodes: uint32(pi.Nodes), GPUs: uint64(pi.TotalGPUs)}.String()
}

func minutes(v uint32) api.V0044Uint32NoValStruct {
	if v == partition.Infinite {
		return u32Inf()
	}
	return u32(v)
}

func (s *Server) partitionToWire(pi controller.PartitionInfo) api.V0044PartitionInfo {
	p := pi.Partition
	states := []api.V0044PartitionInfoPartitionStateItem{api.V0044PartitionInfoPartitionStateItem(p.State.String())}
	var flags []string
	if p.Default {
		flags = append(flags, "default")
	}
	defTime := u32Unset()
	if p.DefaultTime != 0 {
		defTime = minutes(p.DefaultTime)
	}
	maxNodes := u32Inf()
	if p.MaxNodes != 0 && p.MaxNodes != partition.Infinite {
		maxNodes = u32(p.MaxNodes)
	}
	w := partitionTemplate()
	w.Name = api.NewOptString(p.Name)
	w.Cluster = api.NewOptString(s.ctl.ClusterName())
	w.Nodes = api.NewOptV0044PartitionInfoNodes(api.V0044PartitionInfoNodes{
		AllowedAllocation: api.NewOptString(""),
		Configured:        api.NewOptString(hostlist.Compress(p.Nodes)),
		Total:             api.NewOptInt32(int32(pi.Nodes)),
	})
	w.Cpus = api.NewOptV0044PartitionInfoCpus(api.V0044PartitionInfoCpus{TaskBinding: api.NewOptInt32(0), Total: api.NewOptInt32(int32(pi.TotalCPUs))})
	w.Partition = api.NewOptV0044PartitionInfoPartition(api.V0044PartitionInfoPartition{State: states})
	w.Priority = api.NewOptV0044PartitionInfoPriority(api.V0044PartitionInfoPriority{JobFactor: api.NewOptInt32(int32(max(p.PriorityJobFactor, 1))), Tier: api.NewOptInt32(int32(max(p.PriorityTier, 1)))})
	w.Defaults = api.NewOptV0044PartitionInfoDefaults(api.V0044PartitionInfoDefaults{
		Time:                   api.NewOptV0044Uint32NoValStruct(defTime),
		MemoryPerCPU:           api.NewOptInt64(int64(p.DefMemPerCPU)),
		PartitionMemoryPerCPU:  api.NewOptV0044Uint64NoValStruct(memDefault(p.DefMemPerCPU, false)),
		PartitionMemoryPerNode: api.NewOptV0044Uint64NoValStruct(memDefault(p.DefMemPerNode, p.DefMemPerCPU == 0)),
		Job:                    api.NewOptString(""),
	})
	w.Maximums = api.NewOptV0044PartitionInfoMaximums(api.V0044PartitionInfoMaximums{
		Time:                   api.NewOptV0044Uint32NoValStruct(minutes(p.MaxTime)),
		Nodes:                  api.NewOptV0044Uint32NoValStruct(maxNodes),
		CpusPerNode:            api.NewOptV0044Uint32NoValStruct(u32Inf()),
		CpusPerSocket:          api.NewOptV0044Uint32NoValStruct(u32Inf()),
		PartitionMemoryPerNode: api.NewOptV0044Uint64NoValStruct(memDefault(p.MaxMemPerNode, true)),
		PartitionMemoryPerCPU:  api.NewOptV0044Uint64NoValStruct(u64Unset()),
		MemoryPerCPU:           api.NewOptInt64(0),
		Shares:                 api.NewOptInt32(1),
		Oversubscribe: api.NewOptV0044PartitionInfoMaximumsOversubscribe(api.V0044PartitionInfoMaximumsOversubscribe{
			Jobs: api.NewOptInt32(1), Flags: []api.V0044PartitionInfoMaximumsOversubscribeFlagsItem{},
		}),
		OverTimeLimit: api.NewOptV0044Uint16NoValStruct(u16Unset()),
	})
	w.Accounts = api.NewOptV0044PartitionInfoAccounts(api.V0044PartitionInfoAccounts{Allowed: api.NewOptString(""), Deny: api.NewOptString("")})
	w.Groups = api.NewOptV0044PartitionInfoGroups(api.V0044PartitionInfoGroups{Allowed: api.NewOptString("")})
	w.Qos = api.NewOptV0044PartitionInfoQos(api.V0044PartitionInfoQos{Allowed: api.NewOptString(""), Deny: api.NewOptString(""), Assigned: api.NewOptString(p.QOS)})
	w.Alternate = api.NewOptString("")
	w.Tres = api.NewOptV0044PartitionInfoTres(api.V0044PartitionInfoTres{BillingWeights: api.NewOptString(p.BillingWeightsText), Configured: api.NewOptString(partitionTRES(pi))})
	w.Timeouts = api.NewOptV0044PartitionInfoTimeouts(api.V0044PartitionInfoTimeouts{
		Resume: api.NewOptV0044Uint16NoValStruct(u16Unset()), Suspend: api.NewOptV0044Uint16NoValStruct(u16Unset()),
	})
	w.SuspendTime = api.NewOptV0044Uint32NoValStruct(u32Unset())
	w.NodeSets = api.NewOptString("")
	w.Topology = api.NewOptString("")
	w.Minimums = api.NewOptV0044PartitionInfoMinimums(api.V0044PartitionInfoMinimums{Nodes: api.NewOptInt32(int32(p.MinNodes))})
	w.SelectType = []api.V0044PartitionInfoSelectTypeItem{}
	w.GraceTime = api.NewOptInt32(0)
	_ = flags
	return w
}
