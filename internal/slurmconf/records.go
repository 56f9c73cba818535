package slurmconf

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/timefmt"
)

// limits bound what one configuration may hold, so that a small hostile
// file (many lines of large hostlists) cannot exhaust memory or time.
type limits struct {
	// nodes bounds the nodes of all NodeName lines.
	nodes int
	// members bounds the node names listed by partitions, NodeSets and
	// DownNodes lines together (before duplicates are removed).
	members int
}

// defaultLimits allow 256Ki nodes, more than ten times the largest Slurm
// clusters, and 8Mi partition memberships (32 partitions of Nodes=ALL at
// that size), while keeping a parsed configuration within a few hundred
// megabytes at worst.
var defaultLimits = limits{nodes: 1 << 18, members: 1 << 23}

// parser holds the state of one Parse or Load.
type parser struct {
	cfg  *Config
	errs Errors
	lim  limits
	// members counts node names listed by partitions, NodeSets and
	// DownNodes lines so far, against lim.members.
	members int

	// baseDir anchors relative Include paths: the main file's folder,
	// as Slurm's get_extra_conf_path does for every included file.
	baseDir  string
	readFile func(string) ([]byte, error)
	depth    int
	active   map[string]bool

	// globals maps lower-cased global keys to their last entry.
	globals map[string]Entry
	hosts   []Entry // SlurmctldHost lines

	// nodeDefaults and partDefaults hold the NodeName=DEFAULT and
	// PartitionName=DEFAULT values in effect, by lower-cased key.
	nodeDefaults map[string]Entry
	partDefaults map[string]Entry

	nodeIndex map[string]int
	// inheritRootJobs lists partitions without DisableRootJobs=, which
	// take the global value.
	inheritRootJobs []int
	// portSet tells, per node, whether Port= was given; other nodes get
	// SlurmdPort once the whole file is read.
	portSet []bool
}

func newParser(filename string, readFile func(string) ([]byte, error), lim limits) *parser {
	return &parser{
		cfg:          &Config{},
		lim:          lim,
		baseDir:      filepath.Dir(filename),
		readFile:     readFile,
		active:       make(map[string]bool),
		globals:      make(map[string]Entry),
		nodeDefaults: make(map[string]Entry),
		partDefaults: make(map[string]Entry),
		nodeIndex:    make(map[string]int),
	}
}

// record handles a line starting with a record key (NodeName,
// PartitionName, DownNodes, NodeSet, SlurmctldHost).
func (p *parser) record(file string, line int, name string, kv pair, rest string) error {
	if kv.op != 0 {
		p.warnf(file, line, "%s: operator %q ignored", kv.text, string(kv.op)+"=")
	}
	var table keyTable
	switch name {
	case "NodeName":
		table = nodeKeys
	case "PartitionName":
		table = partitionKeys
	case "DownNodes":
		table = downNodesKeys
	case "NodeSet":
		table = nodeSetKeys
	case "SlurmctldHost":
		table = keyTable{}
	}
	vals, all, err := p.recordPairs(file, line, name, table, rest)
	if err != nil {
		return err
	}
	head := Entry{Key: name, Value: kv.value, File: file, Line: line}
	switch name {
	case "NodeName":
		return p.nodeLine(head, kv.text, vals)
	case "PartitionName":
		return p.partitionLine(head, kv.text, vals, all)
	case "DownNodes":
		return p.downNodesLine(head, vals)
	case "NodeSet":
		return p.nodeSetLine(head, vals)
	default:
		return p.controllerLine(head, kv.text)
	}
}

// lookup returns the value of key on the line, else from the defaults.
func lookup(line, defaults map[string]Entry, key string) (Entry, bool) {
	lower := strings.ToLower(key)
	if e, ok := line[lower]; ok {
		return e, true
	}
	e, ok := defaults[lower]
	return e, ok
}

// uintOf reads a checked numeric value (checkValue accepted it).
func uintOf(e Entry, bits int) uint64 {
	v, _, _ := parseUint(e.Value, bits)
	return v
}

// boolOf reads a checked boolean value.
func boolOf(e Entry) bool {
	b, _ := parseBool(e.Value)
	return b
}

// expand expands a hostlist-valued entry; on error it reports it
// against "Key=Value".
func (p *parser) expand(e Entry) ([]string, error) {
	names, err := hostlist.Expand(e.Value)
	if err != nil {
		return nil, p.errorf(e.File, e.Line, e.Key+"="+e.Value, "%w", err)
	}
	return names, nil
}

// nodeLine handles a NodeName line as Slurm's _parse_nodename and
// expand_nodeline_info do.
func (p *parser) nodeLine(head Entry, text string, vals map[string]Entry) error {
	file, line := head.File, head.Line
	if strings.EqualFold(head.Value, "DEFAULT") {
		for _, k := range []string{"NodeHostname", "BcastAddr", "NodeAddr"} {
			if _, ok := vals[strings.ToLower(k)]; ok {
				return p.errorf(file, line, text, "%s not allowed with NodeName=DEFAULT", k)
			}
		}
		// A DEFAULT line adds to and replaces earlier defaults.
		for k, e := range vals {
			p.nodeDefaults[k] = e
		}
		return nil
	}
	if strings.EqualFold(head.Value, "ALL") {
		return p.errorf(file, line, text, "'%s' is a reserved word disallowed for use with NodeName", head.Value)
	}
	if n, err := hostlist.Count(head.Value); err == nil && len(p.cfg.Nodes)+n > p.lim.nodes {
		return p.errorf(file, line, text, "more than %d nodes in the configuration", p.lim.nodes)
	}
	names, err := p.expand(head)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return p.errorf(file, line, text, "empty NodeName")
	}
	get := func(key string) (Entry, bool) { return lookup(vals, p.nodeDefaults, key) }

	// Host names and addresses are hostlists matched one to one with the
	// names, or a single value for all of them.
	hostnamesE := Entry{Key: "NodeHostname", Value: head.Value, File: file, Line: line}
	if e, ok := vals["nodehostname"]; ok {
		hostnamesE = e
	}
	addrsE := Entry{Key: "NodeAddr", Value: hostnamesE.Value, File: file, Line: line}
	if e, ok := vals["nodeaddr"]; ok {
		addrsE = e
	}
	hostnames, err := p.matched(hostnamesE, len(names), false)
	if err != nil {
		return err
	}
	addrs, err := p.matched(addrsE, len(names), false)
	if err != nil {
		return err
	}
	var bcast []string
	if e, ok := vals["bcastaddr"]; ok {
		if bcast, err = p.matched(e, len(names), false); err != nil {
			return err
		}
	}
	var ports []uint16
	if e, ok := get("Port"); ok {
		if ports, err = p.ports(e, len(names)); err != nil {
			return err
		}
	}

	state := NodeStateUnknown
	if e, ok := get("State"); ok {
		s, ok := parseNodeState(e.Value)
		if !ok {
			return p.errorf(file, line, e.Key+"="+e.Value, "invalid node state %q", e.Value)
		}
		state = s
	}

	tmpl := Node{RealMemory: 1, Weight: 1, State: state, File: file, Line: line}
	if err := p.nodeTopology(&tmpl, head.Value, get); err != nil {
		return p.errorf(file, line, text, "%w", err)
	}
	if e, ok := get("RealMemory"); ok {
		tmpl.RealMemory = uintOf(e, 64)
	}
	if e, ok := get("TmpDisk"); ok {
		tmpl.TmpDisk = uint32(uintOf(e, 32))
	}
	if e, ok := get("MemSpecLimit"); ok {
		tmpl.MemSpecLimit = uintOf(e, 64)
	}
	if e, ok := get("Weight"); ok {
		tmpl.Weight = uint32(uintOf(e, 32))
		if tmpl.Weight == Infinite {
			// Slurm keeps INFINITE for "not set": the largest weight is one less.
			tmpl.Weight--
		}
	}
	if e, ok := get("Gres"); ok {
		tmpl.Gres = splitList(e.Value)
	}
	// Slurm's order: the line's Feature, its Features, then the defaults'.
	for _, e := range []struct {
		m   map[string]Entry
		key string
	}{{vals, "feature"}, {vals, "features"}, {p.nodeDefaults, "feature"}, {p.nodeDefaults, "features"}} {
		if v, ok := e.m[e.key]; ok {
			tmpl.Features = splitList(v.Value)
			break
		}
	}
	strs := []struct {
		key string
		dst *string
	}{
		{"Reason", &tmpl.Reason}, {"CPUSpecList", &tmpl.CPUSpecList}, {"Parameters", &tmpl.Parameters},
		{"CpuBind", &tmpl.CpuBind}, {"Topology", &tmpl.Topology}, {"TRESWeights", &tmpl.TRESWeights},
	}
	for _, s := range strs {
		if e, ok := get(s.key); ok {
			*s.dst = e.Value
		}
	}

	for i, name := range names {
		if prev, dup := p.nodeIndex[name]; dup {
			first := p.cfg.Nodes[prev]
			if err := p.errorf(file, line, text, "duplicated NodeName %s (first defined at %s:%d)", name, first.File, first.Line); errors.Is(err, errTooManyErrors) {
				return err
			}
			continue
		}
		n := tmpl
		// Each node gets its own lists, so that changing one node never
		// changes its siblings.
		n.Gres, n.Features = slices.Clone(tmpl.Gres), slices.Clone(tmpl.Features)
		n.Name = name
		n.Hostname = pick(hostnames, i)
		n.Addr = pick(addrs, i)
		n.BcastAddr = pick(bcast, i)
		if len(ports) > 0 {
			n.Port = ports[min(i, len(ports)-1)]
		}
		p.nodeIndex[name] = len(p.cfg.Nodes)
		p.cfg.Nodes = append(p.cfg.Nodes, n)
		p.portSet = append(p.portSet, len(ports) > 0)
	}
	return nil
}

// pick returns the i-th value of a matched list: the single value when
// there is one, none when the list is empty.
func pick(vals []string, i int) string {
	switch len(vals) {
	case 0:
		return ""
	case 1:
		return vals[0]
	}
	return vals[i]
}

// matched expands a hostlist-valued entry that must have one value or as
// many as the node names (exactly, unless zero values are allowed).
func (p *parser) matched(e Entry, n int, allowNone bool) ([]string, error) {
	// Count first: a mismatched list is refused before it is built.
	if count, err := hostlist.Count(e.Value); err == nil && count != 1 && count != n && !(allowNone && count == 0) {
		return nil, p.errorf(e.File, e.Line, e.Key+"="+e.Value, "%s count (%d) must equal that of NodeName records (%d) or there must be no more than one", e.Key, count, n)
	}
	vals, err := p.expand(e)
	if err != nil {
		return nil, err
	}
	if len(vals) == 1 || len(vals) == n || (allowNone && len(vals) == 0) {
		return vals, nil
	}
	return nil, p.errorf(e.File, e.Line, e.Key+"="+e.Value, "%s count (%d) must equal that of NodeName records (%d) or there must be no more than one", e.Key, len(vals), n)
}

// ports reads a node line's Port=: a port, or a range or list of ports
// ("17001-17004", "[17001-17004]") matched one to one with the names.
func (p *parser) ports(e Entry, n int) ([]uint16, error) {
	expr := e.Value
	if expr != "" && expr[0] != '[' && strings.ContainsAny(expr, "-,") {
		expr = "[" + expr + "]"
	}
	vals, err := hostlist.Expand(expr)
	if err != nil {
		return nil, p.errorf(e.File, e.Line, e.Key+"="+e.Value, "%w", err)
	}
	if len(vals) == 0 {
		return nil, nil
	}
	if len(vals) != 1 && len(vals) != n {
		return nil, p.errorf(e.File, e.Line, e.Key+"="+e.Value, "Port count (%d) must equal that of NodeName records (%d) or there must be no more than one", len(vals), n)
	}
	out := make([]uint16, len(vals))
	for i, v := range vals {
		port, err := strconv.ParseUint(v, 10, 16)
		if err != nil || port == 0 {
			return nil, p.errorf(e.File, e.Line, e.Key+"="+e.Value, "invalid port %q", v)
		}
		out[i] = uint16(port)
	}
	return out, nil
}

// nodeTopology sets CPUs, Boards, Sockets, CoresPerSocket and
// ThreadsPerCore as Slurm's _parse_nodename derives them: missing values
// are inferred from the others, zeros are reset to 1 and inconsistent CPU
// counts are recomputed, each with the warning Slurm logs. A CPU count
// beyond 65535 (which Slurm would silently truncate) is an error.
func (p *parser) nodeTopology(n *Node, names string, get func(string) (Entry, bool)) error {
	warn := func(format string, args ...any) {
		p.warnf(n.File, n.Line, "NodeNames=%s "+format, append([]any{names}, args...)...)
	}
	u16 := func(key string) (uint16, bool) {
		e, ok := get(key)
		if !ok {
			return 0, false
		}
		return uint16(uintOf(e, 16)), true
	}
	boards, ok := u16("Boards")
	if !ok {
		boards = 1
	}
	cores, ok := u16("CoresPerSocket")
	if !ok {
		cores = 1
	}
	threads, ok := u16("ThreadsPerCore")
	if !ok {
		threads = 1
	}
	cpus, haveCPUs := u16("CPUs")
	if !haveCPUs {
		cpus, haveCPUs = u16("Procs")
	}
	if !haveCPUs {
		cpus = 1
	}
	sockets, haveSockets := u16("Sockets")
	if !haveSockets {
		sockets = 1
	}
	perBoard, havePerBoard := u16("SocketsPerBoard")
	if !havePerBoard {
		perBoard = 1
	}
	coreSpec, _ := u16("CoreSpecCount")

	if cores == 0 {
		warn("CoresPerSocket=0 is invalid, reset to 1")
		cores = 1
	}
	if cpus == 0 {
		warn("CPUs=0 is invalid, reset to 1")
		cpus = 1
	}
	if threads == 0 {
		warn("ThreadsPerCore=0 is invalid, reset to 1")
		threads = 1
	}
	if perBoard == 0 {
		warn("SocketsPerBoards=0 is invalid, reset to 1")
		perBoard = 1
	}
	if sockets == 0 {
		warn("Sockets=0 is invalid, reset to 1")
		sockets = 1
	}
	if havePerBoard && haveSockets {
		warn("Sockets=# and SocketsPerBoard=# is invalid , using SocketsPerBoard")
		haveSockets = false
	}
	if boards == 0 {
		warn("Boards=0 is invalid, reset to 1")
		boards = 1
	}
	perCore := uint32(cores) * uint32(threads)
	tooMany := func(v uint32) error {
		return fmt.Errorf("%d CPUs (Sockets*CoresPerSocket*ThreadsPerCore) is more than 65535", v)
	}
	if !haveSockets {
		switch {
		case havePerBoard:
			if v := uint32(boards) * uint32(perBoard); v > Infinite16 {
				return fmt.Errorf("%d sockets (Boards*SocketsPerBoard) is more than 65535", v)
			}
			sockets = boards * perBoard
		case haveCPUs && uint32(cpus)/perCore > 0 && uint32(cpus)%perCore == 0:
			sockets = uint16(uint32(cpus) / perCore)
		default:
			sockets = boards
		}
	}
	all := uint32(sockets) * perCore
	if !haveCPUs {
		if all > Infinite16 {
			return tooMany(all)
		}
		cpus = uint16(all)
	}
	if sockets < boards {
		warn("Sockets(%d) < Boards(%d) resetting Boards=1", sockets, boards)
		boards = 1
	}
	if c := uint32(cpus); c != uint32(sockets) && c != uint32(sockets)*uint32(cores) && c != uint32(sockets)*perCore {
		warn("CPUs=%d match no Sockets, Sockets*CoresPerSocket or Sockets*CoresPerSocket*ThreadsPerCore. Resetting CPUs.", cpus)
		if all > Infinite16 {
			return tooMany(all)
		}
		cpus = uint16(all)
	}
	if uint32(coreSpec) >= uint32(sockets)*uint32(cores) {
		if _, ok := get("CoreSpecCount"); ok {
			warn("CoreSpecCount=%d is invalid, reset to 1", coreSpec)
			coreSpec = 1
		}
	}
	n.CPUs, n.Boards, n.Sockets, n.CoresPerSocket, n.ThreadsPerCore = cpus, boards, sockets, cores, threads
	n.CoreSpecCount = coreSpec
	return nil
}

// parseNodeState reads a node State= as Slurm's state_str2int does: a base
// state by name, or a word starting with CLOUD, EXTERNAL, DRAIN or FAIL
// (so FAILING is FAIL).
func parseNodeState(s string) (NodeState, bool) {
	for st := NodeStateUnknown; st <= NodeStateFuture; st++ {
		if strings.EqualFold(s, st.String()) {
			return st, true
		}
	}
	for _, st := range []NodeState{NodeStateCloud, NodeStateExternal, NodeStateDrain, NodeStateFail} {
		if hasPrefixFold(s, st.String()) {
			return st, true
		}
	}
	return 0, false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// partitionLine handles a PartitionName line as Slurm's
// _parse_partitionname does.
func (p *parser) partitionLine(head Entry, text string, vals map[string]Entry, all []Entry) error {
	file, line := head.File, head.Line
	if strings.EqualFold(head.Value, "DEFAULT") {
		for k, e := range vals {
			p.partDefaults[k] = e
		}
		return nil
	}
	for i := range p.cfg.Partitions {
		if prev := p.cfg.Partitions[i]; prev.Name == head.Value {
			return p.errorf(file, line, text, "duplicated PartitionName %s (first defined at %s:%d)", head.Value, prev.File, prev.Line)
		}
	}
	get := func(key string) (Entry, bool) { return lookup(vals, p.partDefaults, key) }
	// Slurm reads these from the line itself, never from the defaults.
	own := func(key string) (Entry, bool) { e, ok := vals[strings.ToLower(key)]; return e, ok }
	bad := func(e Entry, format string, args ...any) error {
		return p.errorf(e.File, e.Line, e.Key+"="+e.Value, format, args...)
	}

	pt := Partition{
		Name:              head.Value,
		MaxTime:           timefmt.Unlimited,
		PriorityTier:      1,
		PriorityJobFactor: 1,
		MaxNodes:          Infinite,
		MaxCPUsPerNode:    Infinite,
		MaxCPUsPerSocket:  Infinite,
		Options:           all,
		File:              file,
		Line:              line,
	}
	if e, ok := get("Nodes"); ok {
		// Blanks in a quoted list separate names, as commas do.
		pt.NodesExpr = strings.Map(func(r rune) rune {
			if r < 0x80 && isSpace(byte(r)) {
				return ','
			}
			return r
		}, e.Value)
		n, err := hostlist.Count(pt.NodesExpr)
		if err != nil {
			return bad(e, "%w", err)
		}
		if err := p.spend(n, e); err != nil {
			return err
		}
	}
	access := func(key string, lower bool) string {
		e, ok := get(key)
		if !ok || strings.EqualFold(e.Value, "ALL") {
			return ""
		}
		if lower {
			return strings.ToLower(e.Value)
		}
		return e.Value
	}
	pt.AllowAccounts = access("AllowAccounts", true)
	pt.AllowGroups = access("AllowGroups", false)
	pt.AllowQos = access("AllowQos", true)
	pt.DenyAccounts = access("DenyAccounts", true)
	pt.DenyQos = access("DenyQos", true)
	pt.AllocNodes = access("AllocNodes", false)
	if pt.AllowAccounts != "" && pt.DenyAccounts != "" {
		p.warnf(file, line, "Both AllowAccounts and DenyAccounts are defined, DenyAccounts will be ignored")
		pt.DenyAccounts = ""
	}
	if pt.AllowQos != "" && pt.DenyQos != "" {
		p.warnf(file, line, "Both AllowQos and DenyQos are defined, DenyQos will be ignored")
		pt.DenyQos = ""
	}
	for _, s := range []struct {
		key string
		dst *string
	}{
		{"QOS", &pt.QOS}, {"Alternate", &pt.Alternate}, {"TRESBillingWeights", &pt.TRESBillingWeights},
		{"PreemptMode", &pt.PreemptMode}, {"CpuBind", &pt.CpuBind},
	} {
		if e, ok := get(s.key); ok {
			*s.dst = e.Value
		}
	}
	for _, b := range []struct {
		key string
		dst *bool
		fn  func(string) (Entry, bool)
	}{
		{"Default", &pt.Default, get}, {"Hidden", &pt.Hidden, get}, {"RootOnly", &pt.RootOnly, get},
		{"ReqResv", &pt.ReqResv, get}, {"LLN", &pt.LLN, get},
		{"ExclusiveUser", &pt.ExclusiveUser, own}, {"ExclusiveTopo", &pt.ExclusiveTopo, own},
		{"PowerDownOnIdle", &pt.PowerDownOnIdle, own},
	} {
		if e, ok := b.fn(b.key); ok {
			*b.dst = boolOf(e)
		}
	}
	rootJobs, ownRootJobs := own("DisableRootJobs")
	if ownRootJobs {
		pt.DisableRootJobs = boolOf(rootJobs)
	}
	for _, u := range []struct {
		key string
		dst *uint32
	}{
		{"MaxNodes", &pt.MaxNodes}, {"MinNodes", &pt.MinNodes},
		{"MaxCPUsPerNode", &pt.MaxCPUsPerNode}, {"MaxCPUsPerSocket", &pt.MaxCPUsPerSocket},
	} {
		if e, ok := get(u.key); ok {
			*u.dst = uint32(uintOf(e, 32))
		}
	}
	if e, ok := get("GraceTime"); ok {
		pt.GraceTime = time.Duration(uintOf(e, 32)) * time.Second
	}
	if e, ok := get("PriorityJobFactor"); ok {
		pt.PriorityJobFactor = uint16(uintOf(e, 16))
	}
	if e, ok := get("PriorityTier"); ok {
		pt.PriorityTier = uint16(uintOf(e, 16))
	}
	if e, ok := get("Priority"); ok {
		// The old Priority= sets both.
		pt.PriorityJobFactor = uint16(uintOf(e, 16))
		pt.PriorityTier = pt.PriorityJobFactor
	}
	if e, ok := get("MaxTime"); ok {
		l, err := timefmt.ParseLimit(e.Value)
		if err != nil {
			return bad(e, "bad value %q for MaxTime", e.Value)
		}
		pt.MaxTime = l
	}
	if e, ok := get("DefaultTime"); ok {
		l, err := timefmt.ParseLimit(e.Value)
		if err != nil {
			return bad(e, "bad value %q for DefaultTime", e.Value)
		}
		pt.DefaultTime, pt.HasDefaultTime = l, true
	}
	if e, ok := get("DefMemPerNode"); ok {
		pt.DefMemPerNode = memOf(e)
		if _, ok := get("DefMemPerCPU"); ok {
			p.warnf(file, line, "DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode")
		}
	} else if e, ok := get("DefMemPerCPU"); ok {
		pt.DefMemPerCPU = memOf(e)
	}
	if e, ok := get("MaxMemPerNode"); ok {
		pt.MaxMemPerNode = memOf(e)
		if _, ok := get("MaxMemPerCPU"); ok {
			p.warnf(file, line, "MaxMemPerCPU ignored, since it's mutually exclusive with MaxMemPerNode")
		}
	} else if e, ok := get("MaxMemPerCPU"); ok {
		pt.MaxMemPerCPU = memOf(e)
	}
	if e, ok := own("SelectTypeParameters"); ok {
		v := e.Value
		if !hasPrefixFold(v, "CR_Core") && !hasPrefixFold(v, "CR_Socket") {
			return bad(e, "bad value for SelectTypeParameters: %s", v)
		}
		pt.SelectTypeParameters = v
	}
	osub, hasOS := get("OverSubscribe")
	if !hasOS {
		osub, hasOS = get("Shared")
	}
	if hasOS {
		o, warn, err := parseOverSubscribe(osub.Value)
		if err != nil {
			return bad(osub, "%w", err)
		}
		if warn != "" {
			p.warnf(file, line, "%s", warn)
		}
		pt.OverSubscribe = o
	}
	if e, ok := get("State"); ok {
		st, ok := parsePartitionState(e.Value)
		if !ok {
			return bad(e, "bad value %q for State", e.Value)
		}
		pt.State = st
	}
	if e, ok := get("PreemptMode"); ok && strings.Contains(strings.ToUpper(e.Value), "GANG") {
		p.warnf(file, line, "PreemptMode=GANG is a cluster-wide option and cannot be set at partition level, option ignored.")
	}
	if !ownRootJobs {
		p.inheritRootJobs = append(p.inheritRootJobs, len(p.cfg.Partitions))
	}
	p.cfg.Partitions = append(p.cfg.Partitions, pt)
	return nil
}

// memOf reads a memory size in MB; UNLIMITED is 0, "no limit".
func memOf(e Entry) uint64 {
	v, inf, _ := parseUint(e.Value, 64)
	if inf {
		return 0
	}
	return v
}

// parsePartitionState reads State= as Slurm does: the value must start
// with UP, DOWN, DRAIN or INACTIVE.
func parsePartitionState(s string) (PartitionState, bool) {
	for _, st := range []PartitionState{PartitionDown, PartitionUp, PartitionDrain, PartitionInactive} {
		if hasPrefixFold(s, st.String()) {
			return st, true
		}
	}
	return 0, false
}

// parseOverSubscribe reads OverSubscribe= (or the older Shared=): NO,
// EXCLUSIVE, YES[:n] or FORCE[:n]. A bad count falls back to NO with a
// warning, as in Slurm.
func parseOverSubscribe(s string) (OverSubscribe, string, error) {
	count := func(v string) int {
		n, _ := strconv.Atoi(leadingInt(v))
		return n
	}
	switch {
	case strings.EqualFold(s, "NO"):
		return OverSubscribe{Mode: OverSubscribeNo}, "", nil
	case strings.EqualFold(s, "EXCLUSIVE"):
		return OverSubscribe{Mode: OverSubscribeExclusive}, "", nil
	case hasPrefixFold(s, "YES:"):
		n := count(s[4:])
		if n <= 1 || n > Infinite16 {
			return OverSubscribe{}, "Ignoring bad OverSubscribe value: " + s, nil
		}
		return OverSubscribe{Mode: OverSubscribeYes, Jobs: uint16(n)}, "", nil
	case strings.EqualFold(s, "YES"):
		return OverSubscribe{Mode: OverSubscribeYes, Jobs: 4}, "", nil
	case hasPrefixFold(s, "FORCE:"):
		n := count(s[6:])
		if n < 1 || n > Infinite16 {
			return OverSubscribe{}, "Ignoring bad OverSubscribe value: " + s, nil
		}
		return OverSubscribe{Mode: OverSubscribeForce, Jobs: uint16(n)}, "", nil
	case strings.EqualFold(s, "FORCE"):
		return OverSubscribe{Mode: OverSubscribeForce, Jobs: 4}, "", nil
	}
	return OverSubscribe{}, "", errors.New("bad value for OverSubscribe (NO, EXCLUSIVE, YES[:n] or FORCE[:n])")
}

// leadingInt returns the optionally signed decimal prefix of s, as strtol
// would read it.
func leadingInt(s string) string {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 12 {
		i++
	}
	return s[:i]
}

// downNodesLine handles a DownNodes line.
func (p *parser) downNodesLine(head Entry, vals map[string]Entry) error {
	if n, err := hostlist.Count(head.Value); err == nil {
		if err := p.spend(n, head); err != nil {
			return err
		}
	}
	names, err := p.expand(head)
	if err != nil {
		return err
	}
	d := DownNodes{Nodes: names, State: NodeStateDown, File: head.File, Line: head.Line}
	if e, ok := vals["state"]; ok {
		st, ok := parseNodeState(e.Value)
		if !ok {
			return p.errorf(e.File, e.Line, e.Key+"="+e.Value, "invalid node state %q", e.Value)
		}
		d.State = st
	}
	if e, ok := vals["reason"]; ok {
		d.Reason = e.Value
	}
	p.cfg.DownNodes = append(p.cfg.DownNodes, d)
	return nil
}

// nodeSetLine handles a NodeSet line.
func (p *parser) nodeSetLine(head Entry, vals map[string]Entry) error {
	ns := NodeSet{Name: head.Value, File: head.File, Line: head.Line}
	if e, ok := vals["feature"]; ok {
		ns.Feature = e.Value
	}
	if e, ok := vals["nodes"]; ok {
		if strings.EqualFold(e.Value, "ALL") {
			ns.Nodes = []string{"ALL"}
		} else {
			if n, err := hostlist.Count(e.Value); err == nil {
				if err := p.spend(n, e); err != nil {
					return err
				}
			}
			names, err := p.expand(e)
			if err != nil {
				return err
			}
			ns.Nodes = names
		}
	}
	p.cfg.NodeSets = append(p.cfg.NodeSets, ns)
	return nil
}

// controllerLine handles a SlurmctldHost line: "name" or "name(addr)".
func (p *parser) controllerLine(head Entry, text string) error {
	v := head.Value
	open, closing := strings.IndexByte(v, '('), strings.IndexByte(v, ')')
	if (open < 0) != (closing < 0) || (closing >= 0 && (closing != len(v)-1 || closing < open || strings.Count(v, ")") > 1)) {
		return p.errorf(head.File, head.Line, text, "bad value %q for SlurmctldHost", v)
	}
	p.hosts = append(p.hosts, head)
	p.cfg.Entries = append(p.cfg.Entries, head)
	return nil
}

// spend counts n node names listed by the entry e against lim.members.
func (p *parser) spend(n int, e Entry) error {
	p.members += n
	if p.members > p.lim.members {
		return p.errorf(e.File, e.Line, e.Key+"="+e.Value, "more than %d node names in partitions, NodeSets and DownNodes", p.lim.members)
	}
	return nil
}
