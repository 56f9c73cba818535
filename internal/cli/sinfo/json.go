package sinfo

import (
	"strings"

	"github.com/go-faster/jx"

	"github.com/droverhq/drover/internal/cli/slurmjson"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// The JSON tree types are slurmjson's, under the names this package
// grew up with.
type (
	jsonField  = slurmjson.Field
	jsonObject = slurmjson.Object
	jsonArray  = slurmjson.Array
	jsonRaw    = slurmjson.Raw
)

func num[T int | int32 | int64 | uint64](v T) jsonRaw { return slurmjson.Num(v) }

func jbool(b bool) jsonRaw { return slurmjson.Bool(b) }

// partitionJSON renders a partition as slurmrestd's data parser dumps it:
// the generated encoder writes the values, slurmjson restores Slurm's
// member order.
func partitionJSON(p *v0044.V0044PartitionInfo) any {
	if p == nil {
		return jsonRaw("null")
	}
	var e jx.Encoder
	p.Encode(&e)
	tree, err := slurmjson.Decode(jx.DecodeBytes(e.Bytes()))
	if err != nil {
		// The generated encoder wrote it; it always parses.
		return jsonRaw("null")
	}
	return slurmjson.Reorder(tree, "", slurmjson.PartitionInfo())
}

// noValJSON renders a number struct as slurmrestd does.
func noValJSON(set, inf bool, n int64) jsonObject {
	return jsonObject{{Key: "set", Val: jbool(set)}, {Key: "infinite", Val: jbool(inf)}, {Key: "number", Val: num(n)}}
}

func u32JSON(o v0044.OptV0044Uint32NoValStruct) jsonObject {
	v := o.Or(v0044.V0044Uint32NoValStruct{})
	return noValJSON(v.Set.Or(false), v.Infinite.Or(false), int64(v.Number.Or(0)))
}

func u64JSON(o v0044.OptV0044Uint64NoValStruct) jsonObject {
	v := o.Or(v0044.V0044Uint64NoValStruct{})
	return noValJSON(v.Set.Or(false), v.Infinite.Or(false), v.Number.Or(0))
}

func strArray(ss []string) jsonArray {
	out := jsonArray{}
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}

// expandedHosts lists a record's hosts one by one, sorted, as the data
// parser's HOSTLIST dump does.
func expandedHosts(names []string) jsonArray {
	sorted := append([]string(nil), names...)
	sortHosts(sorted)
	return strArray(sorted)
}

// answers are the controller's records as slurmrestd gave them, which
// --json dumps where sinfo's C original dumps its own copies: a record's
// partition, its first node's state list, its free memory bounds.
type answers struct {
	parts v0044.V0044PartitionInfoMsg
	nodes v0044.V0044Nodes
}

// recordJSON renders one record as an element of sinfo --json's "sinfo"
// list (data parser SINFO_DATA).
func recordJSON(r *record, a answers) jsonObject {
	var part any = jsonRaw("null")
	maxPerNode := jsonObject(noValJSON(true, false, 0))
	if r.part != nil {
		p := &a.parts[r.part.inx]
		part = partitionJSON(p)
		if r.nodesTotal > 0 {
			maxPerNode = u32JSON(p.Maximums.Or(v0044.V0044PartitionInfoMaximums{}).CpusPerNode)
		}
	}
	// An empty partition's record holds zeros, which dump as set numbers.
	freeMin, freeMax := noValJSON(true, false, 0), noValJSON(true, false, 0)
	state := jsonArray{}
	if r.nodesTotal > 0 {
		freeMin, freeMax = u64JSON(a.nodes[r.freeMinNode].FreeMem), u64JSON(a.nodes[r.freeMaxNode].FreeMem)
		for _, s := range a.nodes[r.firstNode].State {
			state = append(state, string(s))
		}
	}
	return jsonObject{
		{Key: "port", Val: num(r.port)},
		{Key: "node", Val: jsonObject{{Key: "state", Val: state}}},
		{Key: "nodes", Val: jsonObject{
			{Key: "allocated", Val: num(r.nodesAlloc)},
			{Key: "idle", Val: num(r.nodesIdle)},
			{Key: "other", Val: num(r.nodesOther)},
			{Key: "total", Val: num(r.nodesTotal)},
			{Key: "hostnames", Val: expandedHosts(r.hostnms)},
			{Key: "addresses", Val: expandedHosts(r.nodeAddr)},
			{Key: "nodes", Val: expandedHosts(r.nodes)},
		}},
		{Key: "cpus", Val: jsonObject{
			{Key: "allocated", Val: num(r.cpusAlloc)},
			{Key: "idle", Val: num(r.cpusIdle)},
			{Key: "other", Val: num(r.cpusOther)},
			{Key: "total", Val: num(r.cpusTotal)},
			{Key: "minimum", Val: num(r.minCPUs)},
			{Key: "maximum", Val: num(r.maxCPUs)},
			{Key: "load", Val: jsonObject{{Key: "minimum", Val: num(r.minCPULoad)}, {Key: "maximum", Val: num(r.maxCPULoad)}}},
			{Key: "per_node", Val: jsonObject{{Key: "max", Val: maxPerNode}}},
		}},
		{Key: "sockets", Val: jsonObject{{Key: "minimum", Val: num(r.minSockets)}, {Key: "maximum", Val: num(r.maxSockets)}}},
		{Key: "cores", Val: jsonObject{{Key: "minimum", Val: num(r.minCores)}, {Key: "maximum", Val: num(r.maxCores)}}},
		{Key: "threads", Val: jsonObject{{Key: "minimum", Val: num(r.minThreads)}, {Key: "maximum", Val: num(r.maxThreads)}}},
		{Key: "disk", Val: jsonObject{{Key: "minimum", Val: num(r.minDisk)}, {Key: "maximum", Val: num(r.maxDisk)}}},
		{Key: "memory", Val: jsonObject{
			{Key: "minimum", Val: num(r.minMem)},
			{Key: "maximum", Val: num(r.maxMem)},
			{Key: "free", Val: jsonObject{{Key: "minimum", Val: freeMin}, {Key: "maximum", Val: freeMax}}},
			{Key: "allocated", Val: num(r.allocMem)},
		}},
		{Key: "weight", Val: jsonObject{{Key: "minimum", Val: num(r.minWeight)}, {Key: "maximum", Val: num(r.maxWeight)}}},
		{Key: "features", Val: jsonObject{{Key: "total", Val: r.features}, {Key: "active", Val: r.featuresAct}}},
		{Key: "gres", Val: jsonObject{{Key: "total", Val: r.gres}, {Key: "used", Val: r.gresUsed}}},
		{Key: "cluster", Val: ""},
		{Key: "comment", Val: r.comment},
		{Key: "extra", Val: r.extra},
		{Key: "reason", Val: jsonObject{
			{Key: "description", Val: r.reason},
			{Key: "time", Val: num(r.reasonTime)},
			{Key: "user", Val: r.reasonUser},
		}},
		{Key: "reservation", Val: r.resvName},
		{Key: "resource_spec", Val: jsonObject{{Key: "cpus", Val: r.cpuSpecList}, {Key: "memory", Val: num(r.memSpecLimit)}}},
		{Key: "partition", Val: part},
	}
}

// jsonMeta is the "meta" member of sinfo --json. The Slurm version and
// cluster are the controller's, taken from its answer's meta.
type jsonMeta struct {
	command           []string
	accountingStorage string
	user, group       string
	major, micro      string
	minor, release    string
	cluster           string
}

func (m jsonMeta) tree() jsonObject {
	return jsonObject{
		{Key: "plugin", Val: jsonObject{
			{Key: "type", Val: ""},
			{Key: "name", Val: ""},
			{Key: "data_parser", Val: "data_parser/v0.0.44"},
			{Key: "accounting_storage", Val: m.accountingStorage},
		}},
		{Key: "client", Val: jsonObject{{Key: "source", Val: ""}, {Key: "user", Val: m.user}, {Key: "group", Val: m.group}}},
		{Key: "command", Val: strArray(m.command)},
		{Key: "slurm", Val: jsonObject{
			{Key: "version", Val: jsonObject{{Key: "major", Val: m.major}, {Key: "micro", Val: m.micro}, {Key: "minor", Val: m.minor}}},
			{Key: "release", Val: m.release},
			{Key: "cluster", Val: m.cluster},
		}},
	}
}

// sinfoJSON renders the whole sinfo --json document.
func sinfoJSON(recs []*record, meta jsonMeta, a answers) string {
	list := jsonArray{}
	for _, r := range recs {
		list = append(list, recordJSON(r, a))
	}
	doc := jsonObject{
		{Key: "sinfo", Val: list},
		{Key: "meta", Val: meta.tree()},
		{Key: "errors", Val: jsonArray{}},
		{Key: "warnings", Val: jsonArray{}},
	}
	var b strings.Builder
	slurmjson.Write(&b, doc, 0)
	b.WriteString("\n")
	return b.String()
}

// metaFrom fills the version and cluster of sinfo's meta from the
// controller's answer.
func metaFrom(m v0044.OptV0044OpenapiMeta, version string) jsonMeta {
	out := jsonMeta{release: version}
	parts := strings.SplitN(version, ".", 3)
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	out.major, out.minor, out.micro = parts[0], parts[1], parts[2]
	v, ok := m.Get()
	if !ok {
		return out
	}
	if p, ok := v.Plugin.Get(); ok {
		out.accountingStorage = p.AccountingStorage.Or("")
	}
	if c, ok := v.Client.Get(); ok {
		out.user, out.group = c.User.Or(""), c.Group.Or("")
	}
	if s, ok := v.Slurm.Get(); ok {
		out.cluster = s.Cluster.Or("")
		if s.Release.Or("") != "" {
			out.release = s.Release.Or("")
		}
		if ver, ok := s.Version.Get(); ok {
			out.major = ver.Major.Or(out.major)
			out.minor = ver.Minor.Or(out.minor)
			out.micro = ver.Micro.Or(out.micro)
		}
	}
	return out
}
