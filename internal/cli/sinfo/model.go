package sinfo

import (
	"slices"
	"strings"

	"github.com/droverhq/drover/internal/cli/wireval"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/slurmconf"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Slurm's sentinel values, as the v0.0.44 number structs stand for them.
const (
	noVal      = wireval.NoVal
	infinite   = wireval.Infinite
	noVal64    = wireval.NoVal64
	infinite64 = wireval.Infinite64
)

// u32 and u64 read number structs as Slurm's raw values, widened for the
// printers.
func u32(o v0044.OptV0044Uint32NoValStruct) uint64 { return uint64(wireval.U32(o)) }
func u64(o v0044.OptV0044Uint64NoValStruct) uint64 { return wireval.U64(o) }

// node is the part of a slurmrestd node sinfo reports.
type node struct {
	rest *v0044.V0044Node
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

func newNode(n *v0044.V0044Node) *node {
	cpuLoad := uint64(noVal)
	if v, ok := n.CPULoad.Get(); ok && v >= 0 {
		cpuLoad = uint64(v)
	}
	reasonTime := int64(0)
	if t := u64(n.ReasonChangedAt); t != noVal64 && t != infinite64 {
		reasonTime = int64(t)
	}
	return &node{
		rest:         n,
		name:         n.Name.Or(""),
		state:        stateFromREST(n.State),
		allocCPUs:    int64(n.AllocCpus.Or(0)),
		cpus:         uint64(n.Cpus.Or(0)),
		sockets:      uint64(n.Sockets.Or(0)),
		cores:        uint64(n.Cores.Or(0)),
		threads:      uint64(n.Threads.Or(0)),
		disk:         uint64(uint32(n.TemporaryDisk.Or(0))),
		weight:       uint64(uint32(n.Weight.Or(0))),
		port:         uint64(uint16(n.Port.Or(0))),
		mem:          uint64(n.RealMemory.Or(0)),
		allocMem:     uint64(n.AllocMemory.Or(0)),
		cpuLoad:      cpuLoad,
		freeMem:      u64(n.FreeMem),
		features:     strings.Join(n.Features, ","),
		featuresAct:  strings.Join(n.ActiveFeatures, ","),
		gres:         n.Gres.Or(""),
		gresUsed:     n.GresUsed.Or(""),
		comment:      n.Comment.Or(""),
		extra:        n.Extra.Or(""),
		reason:       n.Reason.Or(""),
		resvName:     n.Reservation.Or(""),
		version:      n.Version.Or(""),
		hostname:     n.Hostname.Or(""),
		addr:         n.Address.Or(""),
		cpuSpecList:  n.SpecializedCpus.Or(""),
		memSpecLimit: uint64(n.SpecializedMemory.Or(0)),
		reasonTime:   reasonTime,
		reasonUser:   n.ReasonSetByUser.Or(""),
		partitions:   n.Partitions,
	}
}

// partition is the part of a slurmrestd partition sinfo reports, with the
// flags only slurm.conf knows (v0.0.44 leaves partition flags out).
type partition struct {
	rest *v0044.V0044PartitionInfo
	name string
	// inx is the partition's position in the controller's table, which
	// "#P" sorting follows.
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
	maxCPUsPerNodeRaw       v0044.OptV0044Uint32NoValStruct
	members                 map[string]bool
	membersKnown            bool
}

func newPartition(p *v0044.V0044PartitionInfo, inx int, conf *slurmconf.Config) *partition {
	out := &partition{rest: p, name: p.Name.Or(""), inx: inx, stateUp: "UNKNOWN"}
	if st, ok := p.Partition.Get(); ok && len(st.State) > 0 {
		out.stateUp = string(st.State[0])
	}
	max := p.Maximums.Or(v0044.V0044PartitionInfoMaximums{})
	out.maxTime = u32(max.Time)
	if out.maxTime == noVal {
		out.maxTime = infinite
	}
	out.defaultTime = u32(p.Defaults.Or(v0044.V0044PartitionInfoDefaults{}).Time)
	out.minNodes = uint64(p.Minimums.Or(v0044.V0044PartitionInfoMinimums{}).Nodes.Or(0))
	out.maxNodes = u32(max.Nodes)
	if out.maxNodes == noVal {
		out.maxNodes = infinite
	}
	os := max.Oversubscribe.Or(v0044.V0044PartitionInfoMaximumsOversubscribe{})
	out.maxShare = uint64(os.Jobs.Or(1))
	for _, f := range os.Flags {
		if f == v0044.V0044PartitionInfoMaximumsOversubscribeFlagsItemForce {
			out.forceShare = true
		}
	}
	out.allowGroups = p.Groups.Or(v0044.V0044PartitionInfoGroups{}).Allowed.Or("")
	nodes := p.Nodes.Or(v0044.V0044PartitionInfoNodes{})
	out.allowAlloc = nodes.AllowedAllocation.Or("")
	prio := p.Priority.Or(v0044.V0044PartitionInfoPriority{})
	out.prioTier = uint64(prio.Tier.Or(0))
	out.prioJobFactor = uint64(prio.JobFactor.Or(0))
	out.maxCPUsPerNodeRaw = max.CpusPerNode
	out.maxCPUsPerNode = u32(max.CpusPerNode)
	if names, err := hostlist.Expand(nodes.Configured.Or("")); err == nil {
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

	state     nodeState
	restState []string

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
	freeMinRaw, freeMaxRaw   v0044.OptV0044Uint64NoValStruct
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
		r.restState = restStateList(n.rest.State)
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
		r.freeMinRaw, r.freeMaxRaw = n.rest.FreeMem, n.rest.FreeMem
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
			r.minFreeMem, r.freeMinRaw = n.freeMem, n.rest.FreeMem
		}
		if n.freeMem > r.maxFreeMem {
			r.maxFreeMem, r.freeMaxRaw = n.freeMem, n.rest.FreeMem
		}
	}
	r.nodes = append(r.nodes, n.name)
	if flags&matchNodeAddr != 0 && !slices.Contains(r.nodeAddr, n.addr) {
		r.nodeAddr = append(r.nodeAddr, n.addr)
	}
	if flags&matchHostnames != 0 && !slices.Contains(r.hostnms, n.hostname) {
		r.hostnms = append(r.hostnms, n.hostname)
	}

	base := n.state.base()
	switch {
	case base == stateAllocated || base == stateMixed || n.state.has(flagCompleting):
		r.nodesAlloc++
	case n.state.drain() || base == stateDown:
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
	if n.state.drain() || base == stateDown {
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
