package sinfo

import (
	"slices"

	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cli/wireval"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/slurmconf"
)

// Slurm's sentinel values, as the read model holds them.
const (
	noVal      = wireval.NoVal
	infinite   = wireval.Infinite
	noVal64    = wireval.NoVal64
	infinite64 = wireval.Infinite64
)

// node is the part of a node sinfo reports, widened as sinfo's C
// original holds it.
type node struct {
	// inx is the node's place in the controller's answer, where --json
	// finds the record as slurmrestd gave it.
	inx  int
	name string

	state     nodeState
	allocCPUs int64

	cpus, sockets, cores, threads uint64
	disk, weight, port            uint64
	mem, allocMem                 uint64
	cpuLoad, freeMem              uint64

	// Strings are "" where Slurm has NULL, which its printf shows as
	// "(null)".
	features, featuresAct, gres, gresUsed string
	comment, extra, reason, resvName      string
	version, hostname, addr, cpuSpecList  string
	memSpecLimit                          uint64

	reasonTime int64
	// reasonUser is the name of the user who set the reason; "" stands
	// for Slurm's NO_VAL uid.
	reasonUser string

	partitions []string
}

func newNode(n *readmodel.Node, inx int) *node {
	cpuLoad := uint64(noVal)
	if n.CPULoadSet && n.CPULoad >= 0 {
		cpuLoad = uint64(n.CPULoad)
	}
	// sinfo shows an INFINITE reason time as none, as it does an unset
	// one.
	reasonTime := n.ReasonTime
	if reasonTime == infinite {
		reasonTime = 0
	}
	return &node{
		inx:          inx,
		name:         n.Name,
		state:        n.State,
		allocCPUs:    int64(n.AllocCPUs),
		cpus:         uint64(n.CPUs),
		sockets:      uint64(n.Sockets),
		cores:        uint64(n.Cores),
		threads:      uint64(n.Threads),
		disk:         uint64(uint32(n.TmpDisk)),
		weight:       uint64(uint32(n.Weight)),
		port:         uint64(uint16(n.Port)),
		mem:          uint64(n.RealMemory),
		allocMem:     uint64(n.AllocMemory),
		cpuLoad:      cpuLoad,
		freeMem:      n.FreeMem,
		features:     n.Features,
		featuresAct:  n.ActiveFeatures,
		gres:         n.Gres,
		gresUsed:     n.GresUsed,
		comment:      n.Comment,
		extra:        n.Extra,
		reason:       n.Reason,
		resvName:     n.Reservation,
		version:      n.Version,
		hostname:     n.Hostname,
		addr:         n.Address,
		cpuSpecList:  n.SpecCPUs,
		memSpecLimit: uint64(n.SpecMemory),
		reasonTime:   reasonTime,
		reasonUser:   n.ReasonUser,
		partitions:   n.Partitions,
	}
}

// partition is the part of a partition sinfo reports, with the flags only
// slurm.conf knows (v0.0.44 leaves partition flags out).
type partition struct {
	name string
	// inx is the partition's position in the controller's table, which
	// "#P" sorting follows and where --json finds the record.
	inx int

	isDefault, hidden, rootOnly bool
	preemptMode                 string

	stateUp                 string
	maxTime, defaultTime    uint64
	minNodes, maxNodes      uint64
	maxShare                uint64
	forceShare              bool
	allowGroups, allowAlloc string
	prioTier, prioJobFactor uint64
	maxCPUsPerNode          uint64
	members                 map[string]bool
	membersKnown            bool
}

func newPartition(p *readmodel.Partition, inx int, conf *slurmconf.Config) *partition {
	out := &partition{name: p.Name, inx: inx, stateUp: p.State}
	out.maxTime = uint64(p.MaxTime)
	if out.maxTime == noVal {
		out.maxTime = infinite
	}
	out.defaultTime = uint64(p.DefaultTime)
	out.minNodes = uint64(p.MinNodes)
	out.maxNodes = uint64(p.MaxNodes)
	if out.maxNodes == noVal {
		out.maxNodes = infinite
	}
	out.maxShare = uint64(p.MaxShare)
	out.forceShare = p.ForceShare
	out.allowGroups = p.AllowGroups
	out.allowAlloc = p.AllowAlloc
	out.prioTier = uint64(p.Tier)
	out.prioJobFactor = uint64(p.JobFactor)
	out.maxCPUsPerNode = uint64(p.MaxCPUsPerNode)
	if names, err := hostlist.Expand(p.Nodes); err == nil {
		out.members = map[string]bool{}
		for _, n := range names {
			out.members[n] = true
		}
		out.membersKnown = true
	}
	if conf != nil {
		if cp := conf.Partition(out.name); cp != nil {
			out.isDefault, out.hidden, out.rootOnly = cp.Default, cp.Hidden, cp.RootOnly
			out.preemptMode = cp.PreemptMode
		}
	}
	return out
}

// contains reports whether the partition holds n: by the partition's node
// list, or by the node's own partition list when the former is unusable.
func (p *partition) contains(n *node) bool {
	if p.membersKnown && p.members[n.name] {
		return true
	}
	return slices.Contains(n.partitions, p.name)
}

// record is sinfo's sinfo_data_t: the nodes of one partition that print
// as one line, with their aggregated numbers.
type record struct {
	part    *partition
	partInx int

	state nodeState
	// firstNode, freeMinNode and freeMaxNode are the nodes (by place in
	// the controller's answer) whose state list and free memory --json
	// dumps as slurmrestd gave them.
	firstNode, freeMinNode, freeMaxNode int

	nodesAlloc, nodesIdle, nodesOther, nodesTotal uint64
	cpusAlloc, cpusIdle, cpusOther, cpusTotal     uint64

	minCPUs, maxCPUs         uint64
	minSockets, maxSockets   uint64
	minCores, maxCores       uint64
	minThreads, maxThreads   uint64
	minDisk, maxDisk         uint64
	minMem, maxMem           uint64
	minWeight, maxWeight     uint64
	minCPULoad, maxCPULoad   uint64
	minFreeMem, maxFreeMem   uint64
	port, allocMem           uint64
	maxCPUsPerNode           uint64
	features, featuresAct    string
	gres, gresUsed           string
	comment, extra, reason   string
	resvName, version        string
	cpuSpecList              string
	memSpecLimit             uint64
	reasonTime               int64
	reasonUser               string
	nodes, nodeAddr, hostnms []string
}

func (r *record) hasNode(name string) bool { return slices.Contains(r.nodes, name) }

// add is sinfo's _update_sinfo: fold a node's numbers into the record.
func (r *record) add(n *node, flags matchFlags) {
	if r.nodesTotal == 0 {
		r.state = n.state
		r.firstNode = n.inx
		r.features, r.featuresAct = n.features, n.featuresAct
		r.gres, r.gresUsed = n.gres, n.gresUsed
		r.comment, r.extra, r.reason = n.comment, n.extra, n.reason
		r.reasonTime, r.reasonUser = n.reasonTime, n.reasonUser
		r.resvName = n.resvName
		r.minCPUs, r.maxCPUs = n.cpus, n.cpus
		r.minSockets, r.maxSockets = n.sockets, n.sockets
		r.minCores, r.maxCores = n.cores, n.cores
		r.minThreads, r.maxThreads = n.threads, n.threads
		r.minDisk, r.maxDisk = n.disk, n.disk
		r.minMem, r.maxMem = n.mem, n.mem
		r.port = n.port
		r.minWeight, r.maxWeight = n.weight, n.weight
		r.minCPULoad, r.maxCPULoad = n.cpuLoad, n.cpuLoad
		r.minFreeMem, r.maxFreeMem = n.freeMem, n.freeMem
		r.freeMinNode, r.freeMaxNode = n.inx, n.inx
		if r.part != nil {
			r.maxCPUsPerNode = r.part.maxCPUsPerNode
		}
		r.version = n.version
		r.cpuSpecList, r.memSpecLimit = n.cpuSpecList, n.memSpecLimit
	} else if r.hasNode(n.name) {
		return
	} else {
		minMax(&r.minCPUs, &r.maxCPUs, n.cpus)
		minMax(&r.minSockets, &r.maxSockets, n.sockets)
		minMax(&r.minCores, &r.maxCores, n.cores)
		minMax(&r.minThreads, &r.maxThreads, n.threads)
		minMax(&r.minDisk, &r.maxDisk, n.disk)
		minMax(&r.minMem, &r.maxMem, n.mem)
		minMax(&r.minWeight, &r.maxWeight, n.weight)
		minMax(&r.minCPULoad, &r.maxCPULoad, n.cpuLoad)
		if n.freeMem < r.minFreeMem {
			r.minFreeMem, r.freeMinNode = n.freeMem, n.inx
		}
		if n.freeMem > r.maxFreeMem {
			r.maxFreeMem, r.freeMaxNode = n.freeMem, n.inx
		}
	}
	r.nodes = append(r.nodes, n.name)
	if flags&matchNodeAddr != 0 && !slices.Contains(r.nodeAddr, n.addr) {
		r.nodeAddr = append(r.nodeAddr, n.addr)
	}
	if flags&matchHostnames != 0 && !slices.Contains(r.hostnms, n.hostname) {
		r.hostnms = append(r.hostnms, n.hostname)
	}

	base := n.state.Base()
	switch {
	case base == stateAllocated || base == stateMixed || n.state.Has(flagCompleting):
		r.nodesAlloc++
	case n.state.Drain() || base == stateDown:
		r.nodesOther++
	default:
		r.nodesIdle++
	}
	r.nodesTotal++
	used := uint64(max(n.allocCPUs, 0))
	r.cpusAlloc += used
	r.cpusTotal += n.cpus
	free := uint64(0)
	if n.cpus > used {
		free = n.cpus - used
	}
	r.allocMem = n.allocMem
	if n.state.Drain() || base == stateDown {
		r.cpusOther += free
	} else {
		r.cpusIdle += free
	}
}

func minMax(lo, hi *uint64, v uint64) {
	if v < *lo {
		*lo = v
	}
	if v > *hi {
		*hi = v
	}
}

// matchFlags are sinfo's MATCH_FLAG_*: the attributes nodes of one record
// must share, set by the fields the output format uses.
type matchFlags uint64

const (
	matchAllocMem matchFlags = 1 << iota
	matchAvail
	matchComment
	matchCores
	matchCPUs
	matchCPULoad
	matchDefaultTime
	matchDisk
	matchExtra
	matchFeatures
	matchFeaturesAct
	matchFreeMem
	matchGroups
	matchGres
	matchGresUsed
	matchHostnames
	matchJobSize
	matchMaxCPUsPerNode
	matchMaxTime
	matchMemory
	matchNodeAddr
	matchNodesAI
	matchOversubscribe
	matchPartition
	matchPreemptMode
	matchPriorityJobFactor
	matchPriorityTier
	matchPort
	matchReason
	matchReasonTimestamp
	matchReasonUser
	matchRoot
	matchResvName
	matchSCT
	matchSockets
	matchState
	matchStateComplete
	matchThreads
	matchVersion
	matchWeight
)

// builder groups nodes into records as sinfo's _build_sinfo_data does.
type builder struct {
	flags      matchFlags
	nodeFlag   bool
	exact      bool
	listReason bool
	records    []*record
}

// matchPart is sinfo's _match_part_data.
func (b *builder) matchPart(r *record, p *partition) bool {
	if b.listReason || r.part == p {
		return true
	}
	if r.part == nil || p == nil {
		return false
	}
	q := r.part
	f := b.flags
	switch {
	case f&matchPartition != 0 && q.name != p.name,
		f&matchAvail != 0 && q.stateUp != p.stateUp,
		f&matchGroups != 0 && q.allowGroups != p.allowGroups,
		f&matchJobSize != 0 && (q.minNodes != p.minNodes || q.maxNodes != p.maxNodes),
		f&matchDefaultTime != 0 && q.defaultTime != p.defaultTime,
		f&matchMaxTime != 0 && q.maxTime != p.maxTime,
		f&matchRoot != 0 && q.rootOnly != p.rootOnly,
		f&matchOversubscribe != 0 && (q.maxShare != p.maxShare || q.forceShare != p.forceShare),
		f&matchPreemptMode != 0 && q.preemptMode != p.preemptMode,
		f&matchPriorityTier != 0 && q.prioTier != p.prioTier,
		f&matchPriorityJobFactor != 0 && q.prioJobFactor != p.prioJobFactor,
		f&matchMaxCPUsPerNode != 0 && q.maxCPUsPerNode != p.maxCPUsPerNode:
		return false
	}
	return true
}

// matchNode is sinfo's _match_node_data: whether n may join record r.
func (b *builder) matchNode(r *record, n *node) bool {
	if b.nodeFlag {
		return false
	}
	f := b.flags
	if f&matchHostnames != 0 && !slices.Contains(r.hostnms, n.hostname) {
		return false
	}
	if f&matchNodeAddr != 0 && !slices.Contains(r.nodeAddr, n.addr) {
		return false
	}
	has := len(r.nodes) > 0
	switch {
	case has && f&matchExtra != 0 && n.extra != r.extra,
		has && f&matchFeatures != 0 && n.features != r.features,
		has && f&matchFeaturesAct != 0 && n.featuresAct != r.featuresAct,
		has && f&matchGres != 0 && n.gres != r.gres,
		has && f&matchGresUsed != 0 && n.gresUsed != r.gresUsed,
		has && f&matchComment != 0 && n.comment != r.comment,
		has && f&matchReason != 0 && n.reason != r.reason,
		has && f&matchReasonTimestamp != 0 && n.reasonTime != r.reasonTime,
		has && f&matchReasonUser != 0 && n.reasonUser != r.reasonUser,
		has && f&matchResvName != 0 && n.resvName != r.resvName,
		f&matchState != 0 && n.state.String() != r.state.String(),
		f&matchStateComplete != 0 && n.state.Complete() != r.state.Complete(),
		f&matchAllocMem != 0 && n.allocMem != r.allocMem:
		return false
	}
	if !b.exact {
		return true
	}
	switch {
	case f&matchCPUs != 0 && n.cpus != r.minCPUs,
		f&matchSockets != 0 && n.sockets != r.minSockets,
		f&matchCores != 0 && n.cores != r.minCores,
		f&matchThreads != 0 && n.threads != r.minThreads,
		f&matchSCT != 0 && (n.sockets != r.minSockets || n.cores != r.minCores || n.threads != r.minThreads),
		f&matchDisk != 0 && n.disk != r.minDisk,
		f&matchMemory != 0 && n.mem != r.minMem,
		f&matchWeight != 0 && n.weight != r.minWeight,
		f&matchCPULoad != 0 && n.cpuLoad != r.minCPULoad,
		f&matchFreeMem != 0 && n.freeMem != r.minFreeMem,
		f&matchPort != 0 && n.port != r.port,
		f&matchVersion != 0 && n.version != r.version:
		return false
	}
	return true
}

// insert is sinfo's _insert_node_ptr: add the node to the first record it
// matches, or to a new one.
func (b *builder) insert(p *partition, n *node) {
	for _, r := range b.records {
		if !b.matchPart(r, p) {
			continue
		}
		if r.nodesTotal > 0 && !b.matchNode(r, n) {
			continue
		}
		r.add(n, b.flags)
		return
	}
	r := &record{part: p}
	if p != nil {
		r.partInx = p.inx
	}
	r.add(n, b.flags)
	b.records = append(b.records, r)
}

// hostlistString prints names as sinfo's sorted hostlists print.
func hostlistString(names []string) string {
	return hostlist.CompressSorted(names)
}

// sortHosts sorts host names in Slurm's hostlist order.
func sortHosts(names []string) { hostlist.Sort(names) }
