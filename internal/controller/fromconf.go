package controller

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/jobcomp"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/timefmt"
	"github.com/droverhq/drover/internal/topology"
	"github.com/droverhq/drover/internal/usercred"
)

// ConfigFromSlurm derives the controller's configuration from slurm.conf.
func ConfigFromSlurm(sc *slurmconf.Config, confPath string) (Config, error) {
	cfg := Config{
		ClusterName:     sc.ClusterName,
		Port:            int(sc.SlurmctldPort),
		SlurmConfPath:   confPath,
		SlurmConf:       sc,
		StateDir:        sc.StateSaveLocation,
		SlurmdTimeout:   sc.SlurmdTimeout,
		KillWait:        sc.KillWait,
		MinJobAge:       sc.MinJobAge,
		FirstJobID:      sc.FirstJobID,
		MaxArraySize:    sc.MaxArraySize,
		ReturnToService: int(sc.ReturnToService),
		NoJobRequeue:    !sc.JobRequeue,
		Defaults:        sched.Defaults{DefMemPerCPU: sc.DefMemPerCPU, DefMemPerNode: sc.DefMemPerNode},
	}
	if v, ok := sc.Value("MaxNodeCount"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Config{}, fmt.Errorf("MaxNodeCount=%s: not a node count", v)
		}
		cfg.MaxNodeCount = n
	}
	if sc.SlurmUser != "" && sc.SlurmUser != "root" {
		// SlurmUser may act on every job, as root may; a name that is no
		// user is refused, as slurmctld refuses it.
		id, err := usercred.LookupName(sc.SlurmUser)
		if err != nil {
			return Config{}, fmt.Errorf("invalid user for SlurmUser %s: %w", sc.SlurmUser, err)
		}
		cfg.SlurmUserID = id.UID
	}
	switch sc.SchedulerType {
	case "sched/backfill", "sched/builtin":
		cfg.Scheduler = sc.SchedulerType
	default:
		return Config{}, fmt.Errorf("SchedulerType=%s: not supported (sched/backfill or sched/builtin)", sc.SchedulerType)
	}
	cfg.Backfill, cfg.Warnings = sched.ParseBackfillParams(sc.SchedulerParameters)
	ai, err := sc.AuthInfo()
	if err != nil {
		return Config{}, err
	}
	// A requeued job waits for the credentials of its last run to
	// expire, as slurmctld has it wait.
	cfg.RequeueDelay = ai.CredExpire + time.Second
	cfg.AuthTTL = ai.TTL
	storageTRES, _ := sc.Value("AccountingStorageTRES")
	cfg.TRES = slurmconf.AccountingTRES(storageTRES)
	// slurmctld stops when it cannot load the metrics plugin named.
	mt, _ := sc.Value("MetricsType")
	if mt != "" && mt != "metrics/openmetrics" {
		return Config{}, fmt.Errorf("MetricsType=%s: not supported (metrics/openmetrics)", mt)
	}
	cfg.MetricsType = mt
	for _, w := range strings.Split(sc.PrivateData, ",") {
		if w = strings.ToLower(strings.TrimSpace(w)); w != "" {
			cfg.PrivateData = append(cfg.PrivateData, w)
		}
	}
	if v, ok := sc.Value("Licenses"); ok {
		lics, err := slurmconf.ParseLicenses(v)
		if err != nil {
			return Config{}, err
		}
		cfg.Licenses = lics
	}
	loc, _ := sc.Value("JobCompLoc")
	jc, err := jobcomp.New(sc.JobCompType, loc, sc.ClusterName)
	if err != nil {
		return Config{}, err
	}
	cfg.JobComp = jc
	preemptType, _ := sc.Value("PreemptType")
	switch preemptType {
	case "", "preempt/none":
	case "preempt/partition_prio":
		cfg.PreemptByPartition = true
	case "preempt/qos":
		cfg.PreemptByQOS = true
	default:
		return Config{}, fmt.Errorf("PreemptType=%s: not supported (preempt/none, preempt/partition_prio or preempt/qos)", preemptType)
	}
	enforce, _ := sc.Value("AccountingStorageEnforce")
	if cfg.Enforce, err = assoc.ParseEnforce(enforce); err != nil {
		return Config{}, err
	}
	switch plugin, _ := sc.Value("TopologyPlugin"); plugin {
	case "", "topology/flat", "topology/none", "topology/default":
	case "topology/tree", "topology/block":
		t, err := topology.Load(filepath.Join(filepath.Dir(confPath), "topology.conf"))
		if err != nil {
			return Config{}, fmt.Errorf("TopologyPlugin=%s: %w", plugin, err)
		}
		if (plugin == "topology/block") != (len(t.Blocks) > 0) {
			return Config{}, fmt.Errorf("TopologyPlugin=%s does not match topology.conf (%d switches, %d blocks)", plugin, len(t.Switches), len(t.Blocks))
		}
		cfg.Topology = t
	default:
		return Config{}, fmt.Errorf("TopologyPlugin=%s: not supported (topology/tree, topology/block or topology/flat)", plugin)
	}
	pc, err := priority.FromSlurm(sc)
	if err != nil {
		return Config{}, err
	}
	cfg.Priority = pc
	clusterMode := partition.PreemptOff
	if v, ok := sc.Value("PreemptMode"); ok {
		m, err := preemptMode(v)
		if err != nil {
			return Config{}, err
		}
		clusterMode = m
	}
	if v, ok := sc.Value("DependencyParameters"); ok {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), "kill_invalid_depend") {
				cfg.KillInvalidDepend = true
			}
		}
	}
	if len(sc.SlurmctldHosts) > 0 {
		cfg.ControlHost = sc.SlurmctldHosts[0].Name
		cfg.ControlAddr = sc.SlurmctldHosts[0].Addr
	}
	for i := range sc.Nodes {
		nd, err := nodeFromConf(&sc.Nodes[i])
		if err != nil {
			return Config{}, err
		}
		cfg.Nodes = append(cfg.Nodes, nd)
	}
	for _, p := range sc.Partitions {
		pt := partition.Partition{
			Name: p.Name, Nodes: p.Nodes, Default: p.Default,
			MaxTime:           limitMinutes(p.MaxTime),
			PriorityTier:      uint32(p.PriorityTier),
			PriorityJobFactor: uint32(p.PriorityJobFactor),
			MaxNodes:          p.MaxNodes,
			MinNodes:          p.MinNodes,
			Hidden:            p.Hidden,
			ExclusiveUser:     p.ExclusiveUser,
			OverSubscribe:     strings.ToUpper(p.OverSubscribe.String()),
		}
		pt.AllNodes, pt.NodeFeatures = dynamicMembership(sc, p.NodesExpr)
		// A partition without memory settings takes the cluster's, as
		// slurmctld fills part_record from slurm.conf's globals.
		pt.DefMemPerCPU, pt.DefMemPerNode = p.DefMemPerCPU, p.DefMemPerNode
		if pt.DefMemPerCPU == 0 && pt.DefMemPerNode == 0 {
			pt.DefMemPerCPU, pt.DefMemPerNode = sc.DefMemPerCPU, sc.DefMemPerNode
		}
		pt.PreemptMode, pt.GraceTime = clusterMode, p.GraceTime
		if p.PreemptMode != "" {
			m, err := preemptMode(p.PreemptMode)
			if err != nil {
				return Config{}, fmt.Errorf("%s:%d: partition %s: %w", p.File, p.Line, p.Name, err)
			}
			pt.PreemptMode = m
		}
		if p.TRESBillingWeights != "" {
			w, err := partition.ParseBillingWeights(p.TRESBillingWeights)
			if err != nil {
				return Config{}, fmt.Errorf("%s:%d: partition %s: %w", p.File, p.Line, p.Name, err)
			}
			pt.BillingWeights, pt.BillingWeightsText = w, p.TRESBillingWeights
		}
		pt.QOS = p.QOS
		pt.MaxMemPerNode = p.MaxMemPerNode
		if pt.MaxMemPerNode == 0 {
			pt.MaxMemPerNode = sc.MaxMemPerNode
		}
		if p.HasDefaultTime {
			pt.DefaultTime = limitMinutes(p.DefaultTime)
		}
		switch p.State {
		case slurmconf.PartitionDown:
			pt.State = partition.Down
		case slurmconf.PartitionDrain:
			pt.State = partition.Drain
		case slurmconf.PartitionInactive:
			pt.State = partition.Inactive
		}
		cfg.Partitions = append(cfg.Partitions, pt)
	}
	return cfg, nil
}

// nodeFromConf is the controller's node for a NodeName line.
func nodeFromConf(n *slurmconf.Node) (node.Node, error) {
	nd := node.Node{
		Name: n.Name, Addr: n.Addr, Hostname: n.Hostname, Port: int(n.Port),
		CPUs: uint32(n.CPUs), Boards: uint32(n.Boards), Sockets: uint32(n.Sockets),
		CoresPerSocket: uint32(n.CoresPerSocket), ThreadsPerCore: uint32(n.ThreadsPerCore),
		RealMemory: n.RealMemory, Features: n.Features, Weight: n.Weight, GresConf: n.Gres,
		Future: n.State == slurmconf.NodeStateFuture,
	}
	if nd.Addr == "" {
		nd.Addr = n.Name
	}
	if nd.Hostname == "" {
		nd.Hostname = nd.Addr
	}
	// Until the node daemon reports its devices, the configured GRES
	// stand for them, so that submissions can be checked.
	for _, g := range n.Gres {
		parsed, err := gres.ParseNodeGres(g)
		if err != nil {
			return node.Node{}, fmt.Errorf("%s:%d: node %s: Gres=%s: %w", n.File, n.Line, n.Name, g, err)
		}
		for _, pg := range parsed {
			if pg.Name != "gpu" {
				continue
			}
			for i := uint64(0); i < pg.Count; i++ {
				nd.GPUs = append(nd.GPUs, node.GPU{Index: len(nd.GPUs), Type: pg.Type, Minor: len(nd.GPUs)})
			}
		}
	}
	return nd, nil
}

// dynamicMembership reads which nodes made at run time a partition's
// Nodes= takes: all of them for ALL, those with a NodeSet's Feature for
// each NodeSet named.
func dynamicMembership(sc *slurmconf.Config, expr string) (all bool, features []string) {
	if strings.EqualFold(strings.TrimSpace(expr), "ALL") {
		return true, nil
	}
	for _, name := range strings.Split(expr, ",") {
		for _, ns := range sc.NodeSets {
			if ns.Name == name && ns.Feature != "" {
				features = append(features, ns.Feature)
			}
		}
	}
	return false, features
}

func limitMinutes(l timefmt.Limit) uint32 {
	if l.Infinite {
		return partition.Infinite
	}
	return l.Minutes
}

// preemptMode reads PreemptMode: OFF, CANCEL or REQUEUE (with GANG or
// WITHIN, which change nothing here). SUSPEND would need jobs stopped and
// resumed on their nodes, which Drover does not do: it is refused.
func preemptMode(v string) (string, error) {
	mode := partition.PreemptOff
	for _, w := range strings.Split(strings.ToUpper(v), ",") {
		switch w = strings.TrimSpace(w); w {
		case "OFF", "GANG", "WITHIN", "":
		case partition.PreemptCancel, partition.PreemptRequeue:
			mode = w
		case "SUSPEND":
			return "", fmt.Errorf("PreemptMode=%s: SUSPEND is not supported (CANCEL or REQUEUE)", v)
		default:
			return "", fmt.Errorf("PreemptMode=%s: unknown mode %q", v, w)
		}
	}
	return mode, nil
}
