package slurmconf

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
)

// finish fills the typed global fields from the last value of each key,
// with Slurm's defaults, and resolves what depends on the whole file
// (controllers, node ports, partition node lists). mainFile names the
// configuration in errors that belong to no line.
func (p *parser) finish(mainFile string) {
	c := p.cfg
	get := func(key string) (Entry, bool) {
		e, ok := p.globals[strings.ToLower(key)]
		return e, ok
	}
	str := func(key string, dst *string, def string) {
		*dst = def
		if e, ok := get(key); ok {
			*dst = e.Value
		}
	}
	num := func(key string, bits int, def uint64) uint64 {
		if e, ok := get(key); ok {
			return uintOf(e, bits)
		}
		return def
	}
	secs := func(key string, bits int, def time.Duration) time.Duration {
		if e, ok := get(key); ok {
			return time.Duration(uintOf(e, bits)) * time.Second
		}
		return def
	}
	bad := func(e Entry, format string, args ...any) {
		p.reportf(e.File, e.Line, e.Key+"="+e.Value, format, args...)
	}

	if e, ok := get("ClusterName"); ok && e.Value != "" {
		// Slurm lower-cases the name: databases compare it that way.
		c.ClusterName = strings.ToLower(e.Value)
	} else {
		p.reportf(mainFile, 0, "", "ClusterName needs to be specified")
	}

	c.SlurmctldPort, c.SlurmctldPortCount = DefaultSlurmctldPort, 1
	if e, ok := get("SlurmctldPort"); ok {
		first, count, err := parsePortRange(e.Value)
		if err != nil {
			bad(e, "%w", err)
		}
		c.SlurmctldPort, c.SlurmctldPortCount = first, count
	}
	c.SlurmdPort = DefaultSlurmdPort
	if e, ok := get("SlurmdPort"); ok {
		v := uintOf(e, 32)
		if v == 0 || v > 65535 {
			bad(e, "invalid SlurmdPort")
		}
		c.SlurmdPort = uint16(v)
	}

	str("StateSaveLocation", &c.StateSaveLocation, DefaultStateSaveLocation)
	str("SlurmdSpoolDir", &c.SlurmdSpoolDir, DefaultSlurmdSpoolDir)
	str("TmpFS", &c.TmpFS, DefaultTmpFS)
	c.SlurmdTimeout = secs("SlurmdTimeout", 16, DefaultSlurmdTimeout)
	c.SlurmctldTimeout = secs("SlurmctldTimeout", 16, DefaultSlurmctldTimeout)
	c.KillWait = secs("KillWait", 16, DefaultKillWait)
	c.MinJobAge = secs("MinJobAge", 32, DefaultMinJobAge)
	c.InactiveLimit = secs("InactiveLimit", 16, 0)
	c.MessageTimeout = secs("MessageTimeout", 16, DefaultMessageTimeout)
	c.BatchStartTimeout = secs("BatchStartTimeout", 16, DefaultBatchStartTimeout)
	c.OverTimeLimit = uint16(num("OverTimeLimit", 16, 0))

	c.MaxJobCount = uint32(num("MaxJobCount", 32, DefaultMaxJobCount))
	c.FirstJobID = uint32(num("FirstJobId", 32, DefaultFirstJobID))
	if e, ok := get("FirstJobId"); ok && c.FirstJobID == 0 {
		bad(e, "FirstJobId must be larger than 0")
	}
	c.MaxJobID = uint32(num("MaxJobId", 32, DefaultMaxJobID))
	c.MaxArraySize = uint32(num("MaxArraySize", 32, DefaultMaxArraySize))
	c.MaxStepCount = uint32(num("MaxStepCount", 32, DefaultMaxStepCount))
	c.MaxTasksPerNode = uint16(num("MaxTasksPerNode", 16, DefaultMaxTasksPerNode))
	c.TreeWidth = uint16(num("TreeWidth", 16, DefaultTreeWidth))

	if e, ok := get("GresTypes"); ok {
		c.GresTypes = splitList(e.Value)
	}
	str("SelectType", &c.SelectType, DefaultSelectType)
	str("SelectTypeParameters", &c.SelectTypeParameters, "")
	if c.SelectTypeParameters == "" && strings.Contains(c.SelectType, "cons_tres") {
		c.SelectTypeParameters = DefaultSelectTypeParameters
	}
	str("SchedulerType", &c.SchedulerType, DefaultSchedulerType)
	str("SchedulerParameters", &c.SchedulerParameters, "")
	str("PriorityType", &c.PriorityType, DefaultPriorityType)

	if e, ok := get("DefMemPerNode"); ok {
		c.DefMemPerNode = memOf(e)
		if e, ok := get("DefMemPerCPU"); ok {
			p.warnf(e.File, e.Line, "DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode")
		}
	} else if e, ok := get("DefMemPerCPU"); ok {
		c.DefMemPerCPU = memOf(e)
	}
	if e, ok := get("MaxMemPerNode"); ok {
		c.MaxMemPerNode = memOf(e)
		if e, ok := get("MaxMemPerCPU"); ok {
			p.warnf(e.File, e.Line, "MaxMemPerCPU ignored, since it's mutually exclusive with MaxMemPerNode")
		}
	} else if e, ok := get("MaxMemPerCPU"); ok {
		c.MaxMemPerCPU = memOf(e)
	}

	str("AuthType", &c.AuthType, DefaultAuthType)
	str("AuthAltTypes", &c.AuthAltTypes, "")
	str("CredType", &c.CredType, DefaultCredType)
	str("ProctrackType", &c.ProctrackType, DefaultProctrackType)
	str("TaskPlugin", &c.TaskPlugin, "")
	str("MpiDefault", &c.MpiDefault, "")
	str("SwitchType", &c.SwitchType, "")
	str("AccountingStorageType", &c.AccountingStorageType, "")
	str("JobCompType", &c.JobCompType, "")
	str("JobAcctGatherType", &c.JobAcctGatherType, "")
	c.JobAcctGatherFrequency = DefaultJobAcctGatherFrequency
	if e, ok := get("JobAcctGatherFrequency"); ok {
		d, err := ParseAcctGatherFrequency(e.Value)
		if err != nil {
			bad(e, "%s", err)
		}
		c.JobAcctGatherFrequency = d
	}
	str("Licenses", &c.Licenses, "")
	// Any non-zero JobRequeue means 1, as in Slurm.
	c.JobRequeue = num("JobRequeue", 16, 1) != 0
	c.ReturnToService = uint16(num("ReturnToService", 16, 0))
	if e, ok := get("DisableRootJobs"); ok {
		c.DisableRootJobs = boolOf(e)
	}
	str("SlurmUser", &c.SlurmUser, DefaultSlurmUser)
	str("SlurmdUser", &c.SlurmdUser, DefaultSlurmUser)
	str("PrivateData", &c.PrivateData, "")
	str("EnforcePartLimits", &c.EnforcePartLimits, "NO")
	str("SlurmctldParameters", &c.SlurmctldParameters, "")
	str("SlurmdParameters", &c.SlurmdParameters, "")
	for _, e := range c.Entries {
		switch e.Key {
		case "Prolog":
			c.Prolog = append(c.Prolog, e.Value)
		case "Epilog":
			c.Epilog = append(c.Epilog, e.Value)
		}
	}

	p.controllers(mainFile)

	for i := range c.Nodes {
		if !p.portSet[i] {
			c.Nodes[i].Port = c.SlurmdPort
		}
	}
	for _, i := range p.inheritRootJobs {
		c.Partitions[i].DisableRootJobs = c.DisableRootJobs
	}
	p.resolveNodeSets()
	p.resolvePartitions()
	p.resolveDownNodes()
}

// parsePortRange reads SlurmctldPort: a port or a range "first-last".
func parsePortRange(s string) (first, count uint16, err error) {
	lo, hi, isRange := strings.Cut(s, "-")
	a, err := strconv.ParseUint(lo, 10, 16)
	if err != nil || a == 0 {
		return 0, 0, errors.New("invalid SlurmctldPort")
	}
	if !isRange {
		return uint16(a), 1, nil
	}
	b, err := strconv.ParseUint(hi, 10, 16)
	if err != nil || b <= a {
		return 0, 0, errors.New("invalid SlurmctldPort")
	}
	return uint16(a), uint16(b - a + 1), nil
}

// controllers fills SlurmctldHosts from SlurmctldHost lines, or from the
// legacy ControlMachine/ControlAddr/BackupController/BackupAddr keys.
func (p *parser) controllers(mainFile string) {
	c := p.cfg
	legacy := []string{"ControlMachine", "ControlAddr", "BackupController", "BackupAddr"}
	if len(p.hosts) > 0 {
		for _, e := range p.hosts {
			name, addr := e.Value, e.Value
			if open := strings.IndexByte(e.Value, '('); open >= 0 {
				name, addr = e.Value[:open], e.Value[open+1:len(e.Value)-1]
			}
			for _, h := range c.SlurmctldHosts {
				if h.Name == name {
					p.reportf(e.File, e.Line, e.Key+"="+e.Value, "Duplicate SlurmctldHost records: %s", name)
				}
			}
			c.SlurmctldHosts = append(c.SlurmctldHosts, ControllerHost{Name: name, Addr: addr})
		}
		for _, k := range legacy {
			if e, ok := p.globals[strings.ToLower(k)]; ok {
				p.warnf(e.File, e.Line, "Ignoring %s since SlurmctldHost is set.", k)
			}
		}
		return
	}
	machine, ok := p.globals["controlmachine"]
	if !ok {
		p.reportf(mainFile, 0, "", "No SlurmctldHost defined.")
		return
	}
	primary := ControllerHost{Name: machine.Value, Addr: machine.Value}
	if e, ok := p.globals["controladdr"]; ok {
		primary.Addr = e.Value
	} else if strings.Contains(machine.Value, ",") {
		p.reportf(machine.File, machine.Line, machine.Key+"="+machine.Value, "ControlMachine has multiple host names, so ControlAddr must be specified.")
	}
	c.SlurmctldHosts = append(c.SlurmctldHosts, primary)
	if e, ok := p.globals["backupcontroller"]; ok {
		backup := ControllerHost{Name: e.Value, Addr: e.Value}
		if a, ok := p.globals["backupaddr"]; ok {
			backup.Addr = a.Value
		}
		c.SlurmctldHosts = append(c.SlurmctldHosts, backup)
	} else if e, ok := p.globals["backupaddr"]; ok {
		p.reportf(e.File, e.Line, e.Key+"="+e.Value, "BackupAddr specified without BackupController")
	}
}

// allNodeNames returns every node name in configuration order.
func (p *parser) allNodeNames() []string {
	out := make([]string, len(p.cfg.Nodes))
	for i, n := range p.cfg.Nodes {
		out[i] = n.Name
	}
	return out
}

// resolveNodeSets expands NodeSet lines into node names: the named nodes
// ("ALL" for every node) plus the nodes that have the Feature.
func (p *parser) resolveNodeSets() {
	for i := range p.cfg.NodeSets {
		ns := &p.cfg.NodeSets[i]
		if _, clash := p.nodeIndex[ns.Name]; clash {
			p.reportf(ns.File, ns.Line, "NodeSet="+ns.Name, "NodeSet name conflicts with a NodeName")
			continue
		}
		want := make(map[string]bool)
		for _, name := range ns.Nodes {
			if name == "ALL" && len(ns.Nodes) == 1 {
				p.members += len(p.cfg.Nodes)
				if p.members > p.lim.members {
					p.reportf(ns.File, ns.Line, "NodeSet="+ns.Name, "more than %d node names in partitions, NodeSets and DownNodes", p.lim.members)
					return
				}
				for _, n := range p.cfg.Nodes {
					want[n.Name] = true
				}
				continue
			}
			if _, ok := p.nodeIndex[name]; !ok {
				p.reportf(ns.File, ns.Line, "NodeSet="+ns.Name, "invalid node name %q in NodeSet", name)
				continue
			}
			want[name] = true
		}
		if ns.Feature != "" {
			for _, n := range p.cfg.Nodes {
				if slices.Contains(n.Features, ns.Feature) {
					want[n.Name] = true
				}
			}
		}
		ns.Nodes = p.inNodeOrder(want)
	}
}

// inNodeOrder lists the wanted names in configuration order, each once.
func (p *parser) inNodeOrder(want map[string]bool) []string {
	var out []string
	for _, n := range p.cfg.Nodes {
		if want[n.Name] {
			out = append(out, n.Name)
		}
	}
	return out
}

// resolvePartitions turns each partition's Nodes= into node names. As in
// slurmctld, the list is a set kept in node table order: "ALL" is every
// node, a NodeSet name stands for its nodes, and any other name must be a
// configured node.
func (p *parser) resolvePartitions() {
	sets := make(map[string][]string, len(p.cfg.NodeSets))
	for _, ns := range p.cfg.NodeSets {
		sets[ns.Name] = ns.Nodes
	}
	for i := range p.cfg.Partitions {
		pt := &p.cfg.Partitions[i]
		if pt.NodesExpr == "" {
			continue
		}
		if strings.EqualFold(pt.NodesExpr, "ALL") {
			// Counted as one name when read; count the nodes now.
			p.members += len(p.cfg.Nodes)
			if p.members > p.lim.members {
				p.reportf(pt.File, pt.Line, "Nodes="+pt.NodesExpr, "more than %d node names in partitions, NodeSets and DownNodes", p.lim.members)
				return
			}
			pt.Nodes = p.allNodeNames()
			continue
		}
		names, err := hostlist.Expand(pt.NodesExpr)
		if err != nil { // checked when the line was read
			continue
		}
		want := make(map[string]bool, len(names))
		for _, name := range names {
			if members, ok := sets[name]; ok {
				p.members += len(members)
				if p.members > p.lim.members {
					p.reportf(pt.File, pt.Line, "Nodes="+pt.NodesExpr, "more than %d node names in partitions, NodeSets and DownNodes", p.lim.members)
					return
				}
				for _, m := range members {
					want[m] = true
				}
				continue
			}
			if _, ok := p.nodeIndex[name]; !ok {
				p.reportf(pt.File, pt.Line, "Nodes="+pt.NodesExpr, "invalid node name %q in partition %s", name, pt.Name)
				continue
			}
			want[name] = true
		}
		pt.Nodes = p.inNodeOrder(want)
	}
}

// resolveDownNodes checks that DownNodes lines name configured nodes.
func (p *parser) resolveDownNodes() {
	for _, d := range p.cfg.DownNodes {
		for _, name := range d.Nodes {
			if _, ok := p.nodeIndex[name]; !ok {
				p.reportf(d.File, d.Line, "DownNodes="+hostlist.Compress(d.Nodes), "invalid node name %q in DownNodes", name)
			}
		}
	}
}
