package sinfo

import (
	"fmt"
	"strings"

	"github.com/go-faster/jx"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// jsonField is one member of a JSON object, kept in order: Slurm's
// serializer writes members in its data parser's order, which the output
// must follow byte for byte.
type jsonField struct {
	key string
	val any
}

// jsonObject is an ordered JSON object; jsonArray a JSON array; jsonRaw a
// number, boolean or null literal; a Go string a JSON string.
type (
	jsonObject []jsonField
	jsonArray  []any
	jsonRaw    string
)

func num[T int | int32 | int64 | uint64](v T) jsonRaw { return jsonRaw(fmt.Sprint(v)) }

func jbool(b bool) jsonRaw {
	if b {
		return "true"
	}
	return "false"
}

// writeJSON prints v as Slurm's JSON serializer does: two-space
// indentation, "key": value, "/" escaped as "\/", and empty arrays and
// objects with their closing bracket on its own line.
func writeJSON(b *strings.Builder, v any, indent int) {
	pad := strings.Repeat("  ", indent)
	switch t := v.(type) {
	case jsonObject:
		b.WriteString("{\n")
		for i, f := range t {
			b.WriteString(pad + "  ")
			writeString(b, f.key)
			b.WriteString(": ")
			writeJSON(b, f.val, indent+1)
			if i < len(t)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(pad + "}")
	case jsonArray:
		b.WriteString("[\n")
		for i, e := range t {
			b.WriteString(pad + "  ")
			writeJSON(b, e, indent+1)
			if i < len(t)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(pad + "]")
	case string:
		writeString(b, t)
	case jsonRaw:
		b.WriteString(string(t))
	default:
		b.WriteString("null")
	}
}

// writeString escapes s as Slurm's serializer does.
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// decodeTree reads JSON into the ordered tree types.
func decodeTree(d *jx.Decoder) (any, error) {
	switch d.Next() {
	case jx.Object:
		var obj jsonObject
		err := d.Obj(func(d *jx.Decoder, key string) error {
			v, err := decodeTree(d)
			if err != nil {
				return err
			}
			obj = append(obj, jsonField{key: key, val: v})
			return nil
		})
		if obj == nil {
			obj = jsonObject{}
		}
		return obj, err
	case jx.Array:
		arr := jsonArray{}
		err := d.Arr(func(d *jx.Decoder) error {
			v, err := decodeTree(d)
			if err != nil {
				return err
			}
			arr = append(arr, v)
			return nil
		})
		return arr, err
	case jx.String:
		return d.Str()
	default:
		raw, err := d.Raw()
		return jsonRaw(strings.TrimSpace(raw.String())), err
	}
}

// partitionKeyOrder is the member order of slurmrestd's partition_info
// (data parser v0.0.44), by path; the generated encoder writes members
// alphabetically.
var partitionKeyOrder = map[string][]string{
	"": {"nodes", "accounts", "groups", "qos", "alternate", "tres", "cluster",
		"select_type", "cpus", "defaults", "grace_time", "maximums", "minimums",
		"name", "node_sets", "priority", "timeouts", "topology", "partition",
		"suspend_time"},
	"nodes":    {"allowed_allocation", "configured", "total"},
	"accounts": {"allowed", "deny"},
	"groups":   {"allowed"},
	"qos":      {"allowed", "deny", "assigned"},
	"tres":     {"billing_weights", "configured"},
	"cpus":     {"task_binding", "total"},
	"defaults": {"memory_per_cpu", "partition_memory_per_cpu", "partition_memory_per_node", "time", "job"},
	"maximums": {"cpus_per_node", "cpus_per_socket", "memory_per_cpu", "partition_memory_per_cpu",
		"partition_memory_per_node", "nodes", "shares", "oversubscribe", "time", "over_time_limit"},
	"maximums/oversubscribe": {"jobs", "flags"},
	"minimums":               {"nodes"},
	"priority":               {"job_factor", "tier"},
	"timeouts":               {"resume", "suspend"},
	"partition":              {"state"},
}

// noValOrder is the member order of the v0.0.44 number structs.
var noValOrder = []string{"set", "infinite", "number"}

// reorder sorts the members of v's objects by order (per path); number
// structs get set/infinite/number; unknown members keep their place after
// the known ones.
func reorder(v any, path string, order map[string][]string) any {
	switch t := v.(type) {
	case jsonObject:
		want, ok := order[path]
		if !ok && isNoValStruct(t) {
			want, ok = noValOrder, true
		}
		out := make(jsonObject, 0, len(t))
		if ok {
			for _, k := range want {
				for _, f := range t {
					if f.key == k {
						out = append(out, f)
					}
				}
			}
		}
		for _, f := range t {
			if ok && contains(want, f.key) {
				continue
			}
			out = append(out, f)
		}
		for i := range out {
			p := out[i].key
			if path != "" {
				p = path + "/" + p
			}
			out[i].val = reorder(out[i].val, p, order)
		}
		return out
	case jsonArray:
		for i := range t {
			t[i] = reorder(t[i], path, order)
		}
		return t
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isNoValStruct(o jsonObject) bool {
	if len(o) == 0 || len(o) > 3 {
		return false
	}
	for _, f := range o {
		if !contains(noValOrder, f.key) {
			return false
		}
	}
	return true
}

// partitionJSON renders a partition as slurmrestd's data parser dumps it:
// the generated encoder writes the values, reorder restores Slurm's member
// order.
func partitionJSON(p *v0044.V0044PartitionInfo) any {
	if p == nil {
		return jsonRaw("null")
	}
	var e jx.Encoder
	p.Encode(&e)
	tree, err := decodeTree(jx.DecodeBytes(e.Bytes()))
	if err != nil {
		// The generated encoder wrote it; it always parses.
		return jsonRaw("null")
	}
	return reorder(tree, "", partitionKeyOrder)
}

// noValJSON renders a number struct as slurmrestd does.
func noValJSON(set, inf bool, n int64) jsonObject {
	return jsonObject{{"set", jbool(set)}, {"infinite", jbool(inf)}, {"number", num(n)}}
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

// recordJSON renders one record as an element of sinfo --json's "sinfo"
// list (data parser SINFO_DATA).
func recordJSON(r *record) jsonObject {
	var part any = jsonRaw("null")
	maxPerNode := jsonObject(noValJSON(true, false, 0))
	if r.part != nil {
		part = partitionJSON(r.part.rest)
		if r.nodesTotal > 0 {
			maxPerNode = u32JSON(r.part.maxCPUsPerNodeRaw)
		}
	}
	// An empty partition's record holds zeros, which dump as set numbers.
	freeMin, freeMax := noValJSON(true, false, 0), noValJSON(true, false, 0)
	if r.nodesTotal > 0 {
		freeMin, freeMax = u64JSON(r.freeMinRaw), u64JSON(r.freeMaxRaw)
	}
	state := strArray(r.restState)
	return jsonObject{
		{"port", num(r.port)},
		{"node", jsonObject{{"state", state}}},
		{"nodes", jsonObject{
			{"allocated", num(r.nodesAlloc)},
			{"idle", num(r.nodesIdle)},
			{"other", num(r.nodesOther)},
			{"total", num(r.nodesTotal)},
			{"hostnames", expandedHosts(r.hostnms)},
			{"addresses", expandedHosts(r.nodeAddr)},
			{"nodes", expandedHosts(r.nodes)},
		}},
		{"cpus", jsonObject{
			{"allocated", num(r.cpusAlloc)},
			{"idle", num(r.cpusIdle)},
			{"other", num(r.cpusOther)},
			{"total", num(r.cpusTotal)},
			{"minimum", num(r.minCPUs)},
			{"maximum", num(r.maxCPUs)},
			{"load", jsonObject{{"minimum", num(r.minCPULoad)}, {"maximum", num(r.maxCPULoad)}}},
			{"per_node", jsonObject{{"max", maxPerNode}}},
		}},
		{"sockets", jsonObject{{"minimum", num(r.minSockets)}, {"maximum", num(r.maxSockets)}}},
		{"cores", jsonObject{{"minimum", num(r.minCores)}, {"maximum", num(r.maxCores)}}},
		{"threads", jsonObject{{"minimum", num(r.minThreads)}, {"maximum", num(r.maxThreads)}}},
		{"disk", jsonObject{{"minimum", num(r.minDisk)}, {"maximum", num(r.maxDisk)}}},
		{"memory", jsonObject{
			{"minimum", num(r.minMem)},
			{"maximum", num(r.maxMem)},
			{"free", jsonObject{{"minimum", freeMin}, {"maximum", freeMax}}},
			{"allocated", num(r.allocMem)},
		}},
		{"weight", jsonObject{{"minimum", num(r.minWeight)}, {"maximum", num(r.maxWeight)}}},
		{"features", jsonObject{{"total", r.features}, {"active", r.featuresAct}}},
		{"gres", jsonObject{{"total", r.gres}, {"used", r.gresUsed}}},
		{"cluster", ""},
		{"comment", r.comment},
		{"extra", r.extra},
		{"reason", jsonObject{
			{"description", r.reason},
			{"time", num(r.reasonTime)},
			{"user", r.reasonUser},
		}},
		{"reservation", r.resvName},
		{"resource_spec", jsonObject{{"cpus", r.cpuSpecList}, {"memory", num(r.memSpecLimit)}}},
		{"partition", part},
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
		{"plugin", jsonObject{
			{"type", ""},
			{"name", ""},
			{"data_parser", "data_parser/v0.0.44"},
			{"accounting_storage", m.accountingStorage},
		}},
		{"client", jsonObject{{"source", ""}, {"user", m.user}, {"group", m.group}}},
		{"command", strArray(m.command)},
		{"slurm", jsonObject{
			{"version", jsonObject{{"major", m.major}, {"micro", m.micro}, {"minor", m.minor}}},
			{"release", m.release},
			{"cluster", m.cluster},
		}},
	}
}

// sinfoJSON renders the whole sinfo --json document.
func sinfoJSON(recs []*record, meta jsonMeta) string {
	list := jsonArray{}
	for _, r := range recs {
		list = append(list, recordJSON(r))
	}
	doc := jsonObject{
		{"sinfo", list},
		{"meta", meta.tree()},
		{"errors", jsonArray{}},
		{"warnings", jsonArray{}},
	}
	var b strings.Builder
	writeJSON(&b, doc, 0)
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
