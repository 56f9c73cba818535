package scontrol

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/hostlist"
)

// show runs "show <entity> [<id>]" (argv[0] is the "show" keyword).
func (c *cmd) show(ctx context.Context, argv []string) {
	if len(argv) < 2 {
		c.printfError("too few arguments for keyword:%s", argv[0])
		return
	}
	if len(argv) > 3 {
		c.printfError("too many arguments for keyword:%s", argv[0])
		return
	}
	tag := argv[1]
	var val *string
	if k, v, ok := strings.Cut(tag, "="); ok {
		tag = k
		val = &v
	} else if len(argv) == 3 {
		val = &argv[2]
	}
	if c.doc != docNone {
		entity := ""
		switch {
		case abbrev(tag, "jobs", 1), abbrev(tag, "jobid", 1):
			entity = "jobs"
		case abbrev(tag, "nodes", 1):
			entity = "nodes"
		case abbrev(tag, "partitions", 2), abbrev(tag, "partitionname", 2):
			entity = "partitions"
		case abbrev(tag, "reservations", 1), abbrev(tag, "reservationname", 1):
			entity = "reservations"
		}
		if entity != "" && c.showDoc(ctx, entity, val) {
			return
		}
	}
	switch {
	case abbrev(tag, "config", 1):
		c.showConfig(ctx, val)
	case abbrev(tag, "hostnames", 5):
		list := ""
		if val != nil {
			list = *val
		} else {
			list = c.getenv("SLURM_NODELIST")
		}
		c.showHostnames(list, val != nil || list != "")
	case abbrev(tag, "hostlist", 5):
		c.encodeHostlist(val, false)
	case abbrev(tag, "hostlistsorted", 9):
		c.encodeHostlist(val, true)
	case abbrev(tag, "jobs", 1), abbrev(tag, "jobid", 1):
		c.showJob(ctx, val)
	case abbrev(tag, "licenses", 2):
		c.showLicenses(ctx, val)
	case abbrev(tag, "nodes", 1):
		c.showNodes(ctx, val)
	case abbrev(tag, "partitions", 2), abbrev(tag, "partitionname", 2):
		c.showPartitions(ctx, val)
	case abbrev(tag, "reservations", 1), abbrev(tag, "reservationname", 1):
		c.showReservations(ctx, val)
	case abbrev(tag, "steps", 2):
		c.showSteps(ctx, val)
	case abbrev(tag, "topology", 1):
		c.showTopology(val)
	default:
		c.printfError("invalid entity:%s for keyword:%s", tag, argv[0])
	}
}

// perror reports a failed controller request as slurm_perror does:
// "<what>: <Slurm's message>".
func (c *cmd) perror(what string, re *restError) {
	c.exitCode = 1
	if c.quiet != 1 {
		fmt.Fprintf(c.env.Stderr, "%s: %s\n", what, re.Message)
	}
}

// ---- jobs ----

// parseJobSelector splits "123", "123_4" or "123+1" as scontrol_print_job
// does. ok is false for anything else.
func parseJobSelector(s string) (jobID uint64, arrayID, hetOffset *uint32, ok bool) {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '_' && s[i] != '+' {
			return 0, nil, nil, false
		}
	}
	num := func(p string) (uint64, string) {
		i := 0
		for i < len(p) && p[i] >= '0' && p[i] <= '9' {
			i++
		}
		v, _ := strconv.ParseUint(p[:i], 10, 32)
		return v, p[i:]
	}
	jobID, rest := num(s)
	if strings.HasPrefix(rest, "_") {
		var a uint64
		a, rest = num(rest[1:])
		v := uint32(a)
		arrayID = &v
	}
	if strings.HasPrefix(rest, "+") {
		var h uint64
		h, _ = num(rest[1:])
		v := uint32(h)
		hetOffset = &v
	}
	return jobID, arrayID, hetOffset, true
}

// loadJobs fetches one job (all records of an array or heterogeneous job)
// or, with id 0, every job.
func (c *cmd) loadJobs(ctx context.Context, id uint64) ([]readmodel.JobInfo, *restError) {
	flags := readmodel.JobsDefault
	if c.detail {
		flags = readmodel.JobsDetail
	} else if c.all {
		flags = readmodel.JobsAll
	}
	var ans readmodel.Answer[readmodel.JobInfo]
	var err error
	if id == 0 {
		ans, err = readmodel.GetJobs(ctx, c.env.Client, flags)
	} else {
		ans, err = readmodel.GetJob(ctx, c.env.Client, id, flags)
	}
	if err != nil {
		re, _ := fromTransport(err)
		return nil, re
	}
	if re := fromAnswer(ans.Errors, ans.Status); re != nil {
		return nil, re
	}
	return ans.Records, nil
}

// showJob is scontrol_print_job.
func (c *cmd) showJob(ctx context.Context, val *string) {
	var (
		jobID     uint64
		arrayID   *uint32
		hetOffset *uint32
	)
	if val != nil {
		var ok bool
		jobID, arrayID, hetOffset, ok = parseJobSelector(*val)
		if !ok {
			c.perror("scontrol_print_job error", &restError{Message: "Invalid job id specified"})
			return
		}
	}
	jobs, re := c.loadJobs(ctx, jobID)
	if re != nil {
		c.perror("slurm_load_jobs error", re)
		return
	}
	view := c.jobView()
	if c.detail {
		view.threadsPerCore = c.threadsLookup(ctx)
	}
	printed := 0
	for i := range jobs {
		j := &jobs[i]
		if hetOffset != nil && j.Unfolded.HetJobOffset != *hetOffset {
			continue
		}
		if arrayID != nil && !j.HoldsTask(*arrayID) {
			continue
		}
		v := view
		if arrayID != nil && j.ArrayTaskStr != "" {
			v.arrayTask = arrayID
		}
		fmt.Fprint(c.env.Stdout, formatJob(j, v))
		printed++
	}
	if printed > 0 {
		return
	}
	if val != nil {
		c.exitCode = 1
		if c.quiet == 1 {
			return
		}
		switch {
		case arrayID != nil:
			fmt.Fprintf(c.env.Stdout, "Job %d_%d not found\n", jobID, *arrayID)
		case hetOffset != nil:
			fmt.Fprintf(c.env.Stdout, "Job %d+%d not found\n", jobID, *hetOffset)
		default:
			fmt.Fprintf(c.env.Stdout, "Job %d not found\n", jobID)
		}
		return
	}
	if c.quiet != 1 {
		fmt.Fprintln(c.env.Stdout, "No jobs in the system")
	}
}

func (c *cmd) jobView() jobView {
	conf := c.localConf()
	return jobView{
		oneLiner:   c.oneLiner,
		detail:     c.detail,
		now:        c.now(),
		timeStr:    c.timeStr,
		trackWCKey: conf.bool("TrackWCKey"),
	}
}

// threadsLookup returns the threads per core of each node, fetched once,
// for the CPU_IDs of the -d layout.
func (c *cmd) threadsLookup(ctx context.Context) func(string) int {
	var threads map[string]int
	return func(name string) int {
		if threads == nil {
			threads = map[string]int{}
			if nodes, re := c.loadNodes(ctx); re == nil {
				for _, n := range nodes {
					threads[n.Name] = int(n.Threads)
				}
			}
		}
		if t, ok := threads[name]; ok {
			return t
		}
		return 1
	}
}

// ---- nodes ----

// nodeFlags asks for the nodes -d, --future or -a show.
func (c *cmd) nodeFlags() readmodel.NodeFlags {
	switch {
	case c.detail:
		return readmodel.NodesDetail
	case c.future:
		return readmodel.NodesFuture
	case c.all:
		return readmodel.NodesAll
	}
	return readmodel.NodesDefault
}

func (c *cmd) loadNodes(ctx context.Context) ([]readmodel.Node, *restError) {
	ans, err := readmodel.GetNodes(ctx, c.env.Client, c.nodeFlags())
	if err != nil {
		re, _ := fromTransport(err)
		return nil, re
	}
	if re := fromAnswer(ans.Errors, ans.Status); re != nil {
		return nil, re
	}
	return ans.Records, nil
}

// showNodes is scontrol_print_node_list: every node, or the nodes of a
// hostlist in its order, each looked up by name.
func (c *cmd) showNodes(ctx context.Context, val *string) {
	nodes, re := c.loadNodes(ctx)
	if re != nil {
		c.perror("slurm_load_node error", re)
		return
	}
	view := c.nodeView()
	if val == nil {
		if len(nodes) == 0 {
			if c.quiet != 1 {
				fmt.Fprintln(c.env.Stdout, "No nodes in the system")
			}
			return
		}
		for i := range nodes {
			fmt.Fprint(c.env.Stdout, formatNode(&nodes[i], view))
		}
		return
	}
	names, err := hostlist.Expand(*val)
	if err != nil {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stderr, "unable to parse node list %s\n", *val)
		}
		return
	}
	for _, name := range names {
		found := false
		for i := range nodes {
			if nodes[i].Name == name {
				fmt.Fprint(c.env.Stdout, formatNode(&nodes[i], view))
				found = true
				break
			}
		}
		if !found {
			c.exitCode = 1
			if c.quiet != 1 {
				fmt.Fprintf(c.env.Stdout, "Node %s not found\n", name)
			}
		}
	}
}

func (c *cmd) nodeView() nodeView {
	conf := c.localConf()
	port := 6818
	if p, err := strconv.Atoi(conf.get("SlurmdPort")); err == nil {
		port = p
	}
	return nodeView{
		oneLiner:   c.oneLiner,
		detail:     c.detail,
		timeStr:    c.timeStr,
		slurmdPort: port,
		knownPort:  conf.loaded,
	}
}

// ---- partitions ----

func (c *cmd) loadPartitions(ctx context.Context) ([]readmodel.Partition, *restError) {
	ans, err := readmodel.GetPartitions(ctx, c.env.Client, c.all)
	if err != nil {
		re, _ := fromTransport(err)
		return nil, re
	}
	if re := fromAnswer(ans.Errors, ans.Status); re != nil {
		return nil, re
	}
	return ans.Records, nil
}

// showPartitions is scontrol_print_part.
func (c *cmd) showPartitions(ctx context.Context, val *string) {
	parts, re := c.loadPartitions(ctx)
	if re != nil {
		c.perror("slurm_load_partitions error", re)
		return
	}
	view := c.partitionView()
	c.printNamed(len(parts), val, "Partition", "partitions",
		func(i int) string { return parts[i].Name },
		func(i int) string { return formatPartition(&parts[i], view) })
}

// printNamed prints the record named val, or every record when val is
// nil, as scontrol's show commands do, with their words for none found
// (kind names one record, plural all of them).
func (c *cmd) printNamed(n int, val *string, kind, plural string, name, format func(i int) string) {
	for i := range n {
		if val != nil && name(i) != *val {
			continue
		}
		fmt.Fprint(c.env.Stdout, format(i))
		if val != nil {
			return
		}
	}
	if n > 0 && val == nil {
		return
	}
	if val != nil {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stdout, "%s %s not found\n", kind, *val)
		}
		return
	}
	if c.quiet != 1 {
		fmt.Fprintf(c.env.Stdout, "No %s in the system\n", plural)
	}
}

func (c *cmd) partitionView() partitionView {
	conf := c.localConf()
	return partitionView{
		oneLiner:    c.oneLiner,
		flags:       conf.partitionFlags(),
		preemptMode: conf.getDefault("PreemptMode", "OFF"),
		powerSave:   conf.get("SuspendProgram") != "" && conf.get("ResumeProgram") != "",
	}
}

// ---- hostlists ----

// showHostnames is scontrol_print_hosts: one host name per line.
func (c *cmd) showHostnames(list string, given bool) {
	if !given {
		fmt.Fprintf(c.env.Stderr, "%s: error: host list is empty\n", c.prog)
		return
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "Invalid hostlist: %s\n", list)
		return
	}
	for _, n := range names {
		fmt.Fprintln(c.env.Stdout, n)
	}
}

// encodeHostlist is scontrol_encode_hostlist: a list of names (or a file
// of them, "-" for standard input) compressed into a hostlist expression.
func (c *cmd) encodeHostlist(val *string, sorted bool) {
	if val == nil {
		c.exitCode = 1
		fmt.Fprintln(c.env.Stderr, "invalid encode argument")
		c.usage()
		return
	}
	list := *val
	if list == "-" || strings.HasPrefix(list, "/") {
		var data []byte
		var err error
		if list == "-" {
			data, err = readAllLimited(c.env.Stdin)
		} else {
			data, err = readFileLimited(list)
		}
		if err != nil {
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "Can not open %s\n", list)
			return
		}
		list = reformatHostlist(string(data))
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "Invalid hostlist: %s\n", list)
		return
	}
	if sorted {
		fmt.Fprintln(c.env.Stdout, hostlist.CompressSorted(names))
		return
	}
	fmt.Fprintln(c.env.Stdout, hostlist.Compress(names))
}

// reformatHostlist turns a file of host names into one list: newlines
// become commas and repeated commas collapse.
func reformatHostlist(s string) string {
	s = strings.ReplaceAll(s, "\n", ",")
	for strings.Contains(s, ",,") {
		s = strings.ReplaceAll(s, ",,", ",")
	}
	return s
}
