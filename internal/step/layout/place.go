package layout

import (
	"fmt"
	"slices"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Request is what srun asks of the step: its options after parsing, with
// the environment of the allocation (SLURM_JOB_NUM_NODES, SLURM_NTASKS)
// already folded in by the caller and flagged in NodesFromEnv and
// TasksFromEnv.
//
// The zero Relative is "-r 0"; a request without -r sets Relative to -1.
type Request struct {
	MinNodes, MaxNodes int // -N min[-max]; 0: unset. "-N n" may leave MaxNodes 0.
	Tasks              int // -n; 0: unset
	TasksPerNode       int // --ntasks-per-node; 0: unset
	CPUsPerTask        int // -c; 0 means 1 (not given); any -c, even -c1, implies --exact unless -O
	Dist               Distribution
	NodeList           []string // -w (names, already expanded); must be in the allocation
	Exclude            []string // -x
	Relative           int      // -r; -1: unset
	Arbitrary          []string // with ArbitraryDist: the node of each task, in task order (from -w with repeats, or SLURM_HOSTFILE); NodeList when empty
	Overcommit         bool     // -O
	// Exact is --exact: the step takes only the CPUs its tasks need
	// instead of whole nodes of the job, and slurmctld checks every node's
	// tasks × CPUs per task against its CPUs.
	Exact bool
	// NodesFromEnv says MinNodes/MaxNodes came from SLURM_JOB_NUM_NODES
	// rather than -N: srun then ignores them for an arbitrary layout, drops
	// the minimum to 1 for ",Pack", and words -r errors after the variable.
	NodesFromEnv bool
	// TasksFromEnv says Tasks came from SLURM_NTASKS rather than -n (an
	// arbitrary layout takes its task count from its list instead).
	TasksFromEnv bool
}

// stepRequest is job_step_create_request_msg_t as srun builds it.
type stepRequest struct {
	minNodes, maxNodes int
	cpuCount           int
	numTasks           int
	nodeList           []string
	excNodes           []string
	relative           int
	dist               Distribution
	planeSize          int // 0: NO_VAL16
	overcommit         bool
	whole              bool // SSF_WHOLE: no --exact
}

// Place lays out the step r within the job's allocation avail (the job's
// nodes in allocation order) as srun and slurmctld do, or says why Slurm
// would not: an *Error with Slurm's error number when slurmctld refuses
// (ESLURM_NODES_BUSY where the step would wait for other steps), with none
// when srun refuses on its own.
//
// srun (_opt_verify, job_step_create_allocation, _set_ntasks) first settles
// the counts: -w nodes count toward -N; -N larger than -n is not an error
// but a warning that lowers -N to -n; without -n a step runs one task per
// node (or --ntasks-per-node per node, or as many -c slices as the job's
// CPUs hold); without -N it spans min(-n, the job's nodes) nodes, or the
// job's nodes less -x; -x turns into a node list of the first nodes left.
// slurmctld (_pick_step_nodes) then takes the -w nodes, drops -x nodes and,
// for -r N, the first N nodes of the job, and picks the rest, idle nodes
// first, so that the nodes hold -n × -c CPUs: nodes with at least the
// average first, then the smaller ones that make up the count. More tasks
// than CPUs is refused unless -O ("More processors requested than
// permitted" or "Requested node configuration is not available"), as is a
// -w node outside the allocation. Distribute then numbers the tasks. The
// notices srun prints on the way come back in Layout.Warnings.
func Place(avail []NodeAvail, r Request) (Layout, error) {
	if err := checkAlloc(avail); err != nil {
		return Layout{}, err
	}
	if !r.Dist.valid() {
		return Layout{}, ctldError(CodeBadDist)
	}
	sr, warnings, err := srunStep(avail, r)
	if err != nil {
		return Layout{}, err
	}
	l, err := createStep(avail, sr)
	if err != nil {
		return Layout{}, err
	}
	l.Warnings = warnings
	return l, nil
}

func (r Request) arbitraryList() []string {
	if r.Dist.Kind != ArbitraryDist {
		return nil
	}
	if len(r.Arbitrary) > 0 {
		return r.Arbitrary
	}
	return r.NodeList
}

// checkAlloc refuses allocations Slurm cannot have: no nodes, unnamed or
// repeated nodes, negative CPU counts.
func checkAlloc(avail []NodeAvail) error {
	if len(avail) == 0 {
		return srunError("No nodes in allocation, can't run job")
	}
	seen := make(map[string]bool, len(avail))
	for _, n := range avail {
		if n.Name == "" || seen[n.Name] || n.CPUs < 0 || n.Busy < 0 {
			return &Error{Code: slurmerr.Unspecified, Lines: []string{fmt.Sprintf("invalid allocation node %q (%d CPUs, %d busy)", n.Name, n.CPUs, n.Busy)}}
		}
		seen[n.Name] = true
	}
	return nil
}

// uniqSorted is hostlist_uniq: the names in Slurm's host order, once each.
func uniqSorted(names []string) []string {
	s := slices.Clone(names)
	hostlist.Sort(s)
	return slices.Compact(s)
}

// srunStep turns srun's options into the step request it sends, with the
// warnings srun prints on the way.
func srunStep(avail []NodeAvail, r Request) (stepRequest, []string, error) {
	var warn []string
	arb := r.Dist.Kind == ArbitraryDist

	// Option parsing (slurm_opt.c: parse_int, verify_node_count).
	switch {
	case r.Tasks < 0:
		return stepRequest{}, nil, srunErrorf("Invalid numeric value \"%d\" for --ntasks.", r.Tasks)
	case r.CPUsPerTask < 0:
		return stepRequest{}, nil, srunErrorf("Invalid numeric value \"%d\" for --cpus-per-task.", r.CPUsPerTask)
	case r.TasksPerNode < 0:
		return stepRequest{}, nil, srunErrorf("Invalid numeric value \"%d\" for --ntasks-per-node.", r.TasksPerNode)
	case r.Relative < -1:
		return stepRequest{}, nil, srunErrorf("Invalid numeric value \"%d\" for --relative.", r.Relative)
	case r.MinNodes < 0 || r.MaxNodes < 0:
		return stepRequest{}, nil, srunErrorf("invalid number of nodes (-N %d-%d)", r.MinNodes, r.MaxNodes)
	case r.MaxNodes > 0 && r.MaxNodes < r.MinNodes:
		return stepRequest{}, nil, srunErrorf("Maximum node count %d is less than minimum node count %d", r.MaxNodes, r.MinNodes)
	}

	ntasks, ntasksSet := 1, false
	if r.Tasks != 0 {
		ntasks, ntasksSet = r.Tasks, true
	}
	minN, maxN, nodesSet := 1, 0, false
	if r.MinNodes != 0 || r.MaxNodes != 0 {
		minN, maxN, nodesSet = r.MinNodes, r.MaxNodes, true
		if maxN == 0 {
			maxN = minN
		}
	}
	nodesCLI := nodesSet && !r.NodesFromEnv
	ntpn := r.TasksPerNode
	cpusSet := r.CPUsPerTask > 0
	nodelist := slices.Clone(r.NodeList)
	if arb {
		nodelist = slices.Clone(r.arbitraryList())
	}
	exclude := r.Exclude

	// _opt_verify (src/srun/libsrun/opt.c).
	if r.Dist.Pack == Pack && nodesSet && r.NodesFromEnv {
		minN = 1
	}
	var bad []string
	if r.Relative >= 0 && (len(exclude) > 0 || len(nodelist) > 0) {
		bad = append(bad, "-r,--relative not allowed with -w,--nodelist or -x,--exclude.")
	}
	if arb {
		if r.TasksFromEnv {
			ntasksSet = false
		}
		if r.NodesFromEnv {
			nodesSet = false
		}
		if !nodesSet || !ntasksSet {
			if !ntasksSet {
				ntasks, ntasksSet = len(nodelist), true
			}
			if !nodesSet {
				nodesSet = true
				minN = len(uniqSorted(nodelist))
				maxN = minN
			}
		}
	}
	if maxN > 0 && len(nodelist) > 0 && !arb && len(nodelist) > maxN {
		warn = append(warn, fmt.Sprintf("error: Required nodelist includes more nodes than permitted by max-node count (%d > %d). Eliminating nodes from the nodelist.", len(nodelist), maxN))
		nodelist = nodelist[:maxN]
	}
	if ntasks <= 0 {
		bad = append(bad, fmt.Sprintf("invalid number of tasks (-n %d)", ntasks))
	}
	if minN < 0 || maxN < 0 || (maxN != 0 && minN > maxN) {
		bad = append(bad, fmt.Sprintf("invalid number of nodes (-N %d-%d)", minN, maxN))
	}
	if len(bad) > 0 {
		return stepRequest{}, nil, srunError(bad...)
	}

	// "massage the numbers"
	var hl []string
	if len(nodelist) > 0 {
		hl = uniqSorted(nodelist)
		if nodesSet {
			minN = max(len(hl), minN)
		} else {
			minN = len(hl)
		}
		nodesSet = true
	}
	if nodesSet && (minN == maxN || maxN == 0) && !ntasksSet {
		// one task per node by default
		ntasks = minN
		if ntpn != 0 {
			ntasks *= ntpn
			ntasksSet = true
		}
		if len(nodelist) > 0 {
			if arb && !ntasksSet {
				ntasks, ntasksSet = len(nodelist), true
			}
			hl = uniqSorted(nodelist)
			minN = max(len(hl), minN)
		}
	} else if nodesSet && ntasksSet {
		if ntasks < maxN {
			maxN = ntasks
		}
		if ntasks < minN && ntasks > 0 {
			warn = append(warn, fmt.Sprintf("Warning: can't run %d processes on %d nodes, setting nnodes to %d", ntasks, minN, ntasks))
			// srun sets -N again, from the command line this time.
			minN, maxN, nodesCLI = ntasks, ntasks, true
			if len(hl) > minN {
				hl = hl[:minN]
				nodelist = hl
			}
		}
		if ntpn != 0 && minN != 0 && ntpn != ntasks/minN {
			if ntasks > ntpn {
				warn = append(warn, fmt.Sprintf("Warning: can't honor --ntasks-per-node set to %d which doesn't match the requested tasks %d with the number of requested nodes %d. Ignoring --ntasks-per-node.", ntpn, ntasks, minN))
			}
			ntpn = 0
		}
	}
	if ntpn != 0 && !ntasksSet {
		ntasks, ntasksSet = minN*ntpn, true
	}

	// _validate_relative (src/srun/libsrun/srun_job.c).
	if r.Relative >= 0 && r.Relative+minN > len(avail) {
		if nodesCLI {
			return stepRequest{}, nil, srunErrorf("--relative and --nodes option incompatible with count of allocated nodes (%d+%d>%d)", r.Relative, minN, len(avail))
		}
		return stepRequest{}, nil, srunErrorf("--relative and SLURM_JOB_NUM_NODES option incompatible with count of allocated nodes (%d+%d>%d)", r.Relative, minN, len(avail))
	}

	// job_step_create_allocation (srun_job.c).
	nnodes := len(avail)
	count := 0
	setMinNodes := func() {
		if !nodesSet {
			if ntasksSet && ntasks < nnodes {
				minN = ntasks
			} else {
				minN = nnodes
			}
			nodesSet = true
		}
		if maxN == 0 {
			maxN = minN
		}
		if maxN > 0 && maxN < nnodes {
			nnodes = maxN
		}
	}
	if len(exclude) > 0 {
		names := make([]string, len(avail))
		for i, n := range avail {
			names[i] = n.Name
		}
		left := uniqSorted(names)
		for _, x := range exclude {
			if i := slices.Index(left, x); i >= 0 {
				left = slices.Delete(left, i, i+1)
				nnodes--
			}
			if len(nodelist) > 0 && slices.Contains(nodelist, x) {
				return stepRequest{}, nil, srunError(fmt.Sprintf("Requested node %s is also in the excluded list.", x), "Job not submitted.")
			}
		}
		setMinNodes()
		count = len(left)
		if count == 0 {
			return stepRequest{}, nil, srunError("Hostlist is empty!  Can't run job.")
		}
		if len(nodelist) > 0 {
			if len(nodelist) < nnodes {
				diff := nnodes - len(nodelist)
				for _, n := range left {
					if diff == 0 {
						break
					}
					if !slices.Contains(nodelist, n) {
						nodelist = append(nodelist, n)
						diff--
					}
				}
			}
		} else {
			if count > nnodes {
				left = left[:nnodes]
			}
			nodelist = left
		}
	} else {
		setMinNodes()
	}
	if len(nodelist) > 0 {
		if !arb {
			nodelist = uniqSorted(nodelist)
		}
		count = len(nodelist)
	}
	if arb && count != ntasks {
		return stepRequest{}, nil, srunErrorf("You asked for %d tasks but hostlist specified %d nodes", ntasks, count)
	}
	if nnodes == 0 {
		return stepRequest{}, nil, srunError("No nodes in allocation, can't run job")
	}

	// _job_create_structure and _set_ntasks.
	if !ntasksSet {
		cnt := 0
		if ntpn != 0 {
			cnt = nnodes * ntpn
		} else if cpusSet {
			for _, n := range avail {
				cnt += (n.CPUs + n.Busy) / r.CPUsPerTask
			}
		}
		ntasks = max(cnt, nnodes)
	}
	nhosts := nnodes
	if minN > nhosts {
		lines := []string{fmt.Sprintf("Only allocated %d nodes asked for %d", nhosts, minN)}
		if len(exclude) > 0 {
			lines = append(lines, "Are required nodes explicitly excluded?")
		}
		return stepRequest{}, nil, srunError(lines...)
	}

	// launch_common_create_job_step and _create_job_step_create_request
	// (src/srun/libsrun/launch.c).
	if minN != 0 && maxN != 0 && minN > maxN {
		return stepRequest{}, nil, srunErrorf("Minimum node count > maximum node count (%d > %d)", minN, maxN)
	}
	sr := stepRequest{
		minNodes: nhosts, maxNodes: nhosts, numTasks: ntasks,
		nodeList: nodelist, excNodes: exclude, relative: r.Relative,
		overcommit: r.Overcommit,
	}
	if maxN != 0 && maxN < sr.maxNodes {
		sr.maxNodes = maxN
	}
	if minN != 0 && minN < sr.minNodes {
		sr.minNodes = minN
	}
	exact := r.Exact
	switch {
	case r.Overcommit:
		sr.cpuCount = sr.minNodes
	case cpusSet:
		sr.cpuCount = ntasks * r.CPUsPerTask
		exact = true
	default:
		sr.cpuCount = ntasks
	}
	sr.whole = !exact
	sr.dist = r.Dist
	switch {
	case r.Dist.Kind == PlaneDist:
		sr.planeSize = r.Dist.PlaneSize
	case r.Dist.baseGiven():
		sr.planeSize = ntpn
	default:
		// Block when there are more tasks than nodes, else cyclic.
		sr.dist.Kind = BlockDist
		if sr.numTasks <= sr.minNodes {
			sr.dist.Kind = CyclicDist
		}
		sr.planeSize = ntpn
	}
	return sr, warn, nil
}

// createStep is slurmctld's step_create for sr in the job avail.
func createStep(avail []NodeAvail, sr stepRequest) (Layout, error) {
	jobCPUs := make([]int, len(avail))
	for i, n := range avail {
		jobCPUs[i] = n.CPUs + n.Busy
	}
	cpuCount := sr.cpuCount
	if sr.overcommit {
		cpuCount = 0 // no CPU count checks with --overcommit
	}
	if sr.numTasks < 1 {
		return Layout{}, ctldError(CodeBadTaskCount)
	}
	cpt := calcCPUsPerTask(cpuCount, sr.numTasks, jobCPUs)
	picked, err := pickStepNodes(avail, sr, cpuCount)
	if err != nil {
		return Layout{}, err
	}
	nodeCount := 0
	for _, p := range picked {
		if p {
			nodeCount++
		}
	}
	if nodeCount == 0 {
		return Layout{}, ctldError(slurmerr.RequestedNodeConfigUnavailable)
	}
	if sr.numTasks > nodeCount*MaxTasksPerNode {
		return Layout{}, ctldError(CodeBadTaskCount)
	}

	// step_layout_create: the step's nodes in job order with the CPUs left
	// to it; an arbitrary layout runs on its own list's nodes instead.
	index := make(map[string]int, len(avail))
	for i, n := range avail {
		index[n.Name] = i
	}
	var nodes []NodeAvail
	var arbitrary []string
	if sr.dist.Kind == ArbitraryDist {
		// The tasks' list as srun sent it, repeats and all.
		arbitrary = sr.nodeList
		for _, name := range uniqSorted(arbitrary) {
			i, ok := index[name]
			if !ok {
				return Layout{}, ctldError(slurmerr.RequestedNodeConfigUnavailable)
			}
			nodes = append(nodes, avail[i])
		}
	} else {
		for i, p := range picked {
			if p {
				nodes = append(nodes, avail[i])
			}
		}
	}
	ts := TaskSpec{Tasks: sr.numTasks, CPUsPerTask: cpt, TasksPerNode: sr.planeSize, Dist: sr.dist, Arbitrary: arbitrary}
	if sr.dist.Kind == PlaneDist {
		ts.TasksPerNode = 0
	}
	l, err := Distribute(nodes, ts)
	if err != nil {
		return Layout{}, err
	}
	l.CPUsPerTask = cpt

	// _step_alloc_lps / _pick_step_cores: with --exact every node must
	// hold its tasks' CPUs.
	if !sr.whole {
		for i, n := range nodes {
			need := len(l.Tasks[i])
			if cpt > 0 {
				need *= cpt
			}
			j := index[n.Name]
			if need > jobCPUs[j] {
				return Layout{}, ctldError(slurmerr.TooManyRequestedCPUs)
			}
			if need > avail[j].CPUs && !sr.overcommit {
				return Layout{}, ctldError(slurmerr.NodesBusy)
			}
		}
	}
	return l, nil
}

// calcCPUsPerTask is _calc_cpus_per_task: the CPU count spread over the
// tasks, or 0 when it does not divide evenly or the job's nodes cannot hold
// every task at that count.
func calcCPUsPerTask(cpuCount, numTasks int, jobCPUs []int) int {
	if cpuCount == 0 || cpuCount%numTasks != 0 {
		return 0
	}
	cpt := max(cpuCount/numTasks, 1)
	left := numTasks
	for _, c := range jobCPUs {
		if cpt > c {
			return 0
		}
		left -= c / cpt
	}
	if left > 0 {
		return 0
	}
	return cpt
}

// pickStepNodes is _pick_step_nodes: which of the job's nodes the step
// gets.
func pickStepNodes(avail []NodeAvail, sr stepRequest, cpuCount int) ([]bool, error) {
	n := len(avail)
	index := make(map[string]int, n)
	jobCPUs := make([]int, n)
	for i, a := range avail {
		index[a.Name] = i
		jobCPUs[i] = a.CPUs + a.Busy
	}
	minNodes, maxNodes := sr.minNodes, sr.maxNodes
	if maxNodes == 0 {
		maxNodes = n
	}
	if maxNodes < minNodes {
		return nil, ctldError(slurmerr.InvalidNodeCount)
	}
	unavailable := ctldError(slurmerr.RequestedNodeConfigUnavailable)

	nodesAvail := make([]bool, n)
	for i := range nodesAvail {
		nodesAvail[i] = true
	}
	if len(sr.excNodes) > 0 {
		excluded := make([]bool, n)
		for _, x := range sr.excNodes {
			// Names outside the job are valid cluster nodes to slurmctld;
			// they exclude nothing here.
			if i, ok := index[x]; ok {
				excluded[i] = true
				nodesAvail[i] = false
			}
		}
		for _, w := range sr.nodeList {
			if i, ok := index[w]; ok && excluded[i] {
				return nil, unavailable
			}
		}
	}

	usable := make([]int, n)
	jobBlockedNodes, jobBlockedCPUs := 0, 0
	for i, a := range avail {
		if !nodesAvail[i] {
			continue
		}
		if sr.whole && a.Busy > 0 {
			// The step wants whole nodes and another step runs here.
			jobBlockedCPUs += a.Busy
			jobBlockedNodes++
		} else {
			usable[i] = a.CPUs
			jobBlockedCPUs += a.Busy
			if usable[i] == 0 {
				jobBlockedNodes++
			}
		}
		if usable[i] == 0 {
			nodesAvail[i] = false
		}
	}

	picked := make([]bool, n)
	if len(sr.nodeList) > 0 {
		selected := make([]bool, n)
		for _, w := range sr.nodeList {
			i, ok := index[w]
			if !ok {
				return nil, unavailable // "requested nodes ... not part of job"
			}
			selected[i] = true
		}
		for i := range selected {
			if selected[i] && !nodesAvail[i] {
				if jobBlockedNodes > 0 {
					return nil, ctldError(slurmerr.NodesBusy)
				}
				return nil, ctldError(slurmerr.InvalidTaskMemory)
			}
		}
		cnt := count(selected)
		if sr.dist.Kind == ArbitraryDist {
			minNodes = cnt
		}
		switch {
		case cnt > maxNodes:
			return nil, unavailable
		case minNodes != 0 && cnt > minNodes:
			// More nodes named than needed: pick among them.
			nodesAvail = selected
		default:
			copy(picked, selected)
			for i := range selected {
				if selected[i] {
					nodesAvail[i] = false
				}
			}
		}
	}

	var idle []bool // nil: relative mode, no preference for idle nodes
	if sr.relative >= 0 {
		if sr.relative > n {
			return nil, unavailable // "Invalid relative value"
		}
		for i := 0; i < sr.relative; i++ {
			nodesAvail[i] = false
		}
	} else {
		idle = make([]bool, n)
		for i := range idle {
			idle[i] = nodesAvail[i] && avail[i].Busy == 0
		}
	}

	// A homogeneous job turns the CPU count into a node count.
	if cpuCount != 0 && jobCPUs[0] != 0 && allEqual(jobCPUs) {
		need := (cpuCount + jobCPUs[0] - 1) / jobCPUs[0]
		minNodes = max(minNodes, need)
		if sr.dist.Pack == Pack && sr.dist.Kind != PlaneDist {
			maxNodes = minNodes
		}
		if maxNodes < minNodes {
			return nil, ctldError(slurmerr.TooManyRequestedCPUs)
		}
	}

	// Refusals once the nodes run out: too many CPUs asked when the job
	// could never hold them, busy when other steps hold what is missing.
	refuse := func(pickable int) error {
		switch {
		case maxNodes <= pickable && jobBlockedCPUs == 0:
			return ctldError(slurmerr.TooManyRequestedCPUs)
		case minNodes <= pickable+jobBlockedNodes:
			return ctldError(slurmerr.NodesBusy)
		}
		return unavailable
	}
	pickedCnt := 0
	if minNodes != 0 {
		pickedCnt = count(picked)
		if count(nodesAvail)+pickedCnt < minNodes {
			return nil, ctldError(slurmerr.NodesBusy)
		}
		needed := minNodes - pickedCnt
		if idleCnt := count(idle); needed > 0 && idleCnt >= needed {
			cpus := optCPUCount(cpuCount, picked, usable)
			needed = optNodeCount(minNodes, maxNodes, idleCnt, pickedCnt)
			if got := pickNodesCPUs(idle, needed, cpus, usable); got != nil {
				for i := range got {
					if got[i] {
						picked[i], idle[i], nodesAvail[i] = true, false, false
					}
				}
				pickedCnt, needed = minNodes, 0
			}
		}
		availCnt := count(nodesAvail)
		switch {
		case needed > 0 && availCnt >= needed:
			cpus := optCPUCount(cpuCount, picked, usable)
			needed = optNodeCount(minNodes, maxNodes, availCnt, pickedCnt)
			got := pickNodesCPUs(nodesAvail, needed, cpus, usable)
			if got == nil {
				return nil, refuse(availCnt + pickedCnt)
			}
			for i := range got {
				if got[i] {
					picked[i], nodesAvail[i] = true, false
				}
			}
			pickedCnt = minNodes
		case needed > 0:
			return nil, refuse(pickedCnt)
		}
	}
	if cpuCount != 0 {
		cpusPicked := 0
		for i := range picked {
			if picked[i] {
				cpusPicked += usable[i]
			}
		}
		if cpuCount > cpusPicked && maxNodes > pickedCnt {
			// Add nodes in job order until the CPUs suffice.
			pickedCnt = count(picked)
			for cpuCount > cpusPicked {
				j := slices.Index(nodesAvail, true)
				if j < 0 {
					break
				}
				nodesAvail[j] = false
				if usable[j] == 0 {
					continue
				}
				picked[j] = true
				pickedCnt++
				cpusPicked += usable[j]
				if pickedCnt >= maxNodes {
					break
				}
			}
		}
		if cpuCount > cpusPicked {
			if cpuCount <= cpusPicked+jobBlockedCPUs {
				return nil, ctldError(slurmerr.NodesBusy)
			}
			return nil, unavailable
		}
	}
	return picked, nil
}

func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

func allEqual(v []int) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

// optCPUCount is _opt_cpu_cnt: the CPUs still needed beyond the nodes
// already picked (0 once any picked node alone holds what remains).
func optCPUCount(stepCPUs int, picked []bool, usable []int) int {
	rem := stepCPUs
	for i := range picked {
		if !picked[i] {
			continue
		}
		if usable[i] >= rem {
			return 0
		}
		rem -= usable[i]
	}
	return rem
}

// optNodeCount is _opt_node_cnt: aim for the maximum node count when a
// range was given, less the nodes already picked, within what is there.
func optNodeCount(minNodes, maxNodes, avail, picked int) int {
	target := minNodes
	if maxNodes > minNodes {
		target = maxNodes
	}
	if target > picked {
		target -= picked
	} else {
		target = 0
	}
	return min(target, avail)
}

// pickFirst is bit_pick_cnt: the first want nodes of from, or nil when it
// has fewer.
func pickFirst(from []bool, want int) []bool {
	out := make([]bool, len(from))
	got := 0
	for i := 0; i < len(from) && got < want; i++ {
		if from[i] {
			out[i] = true
			got++
		}
	}
	if got < want {
		return nil
	}
	return out
}

// pickNodesCPUs is _pick_step_nodes_cpus: nodeCnt nodes of from holding
// cpuCnt CPUs, or nil. Nodes with at least the average (cpuCnt/nodeCnt,
// rounded up) come first, in order; the shortfall is then made up from
// the largest of the smaller nodes, taken in order.
func pickNodesCPUs(from []bool, nodeCnt, cpuCnt int, usable []int) []bool {
	if nodeCnt <= 0 {
		return pickFirst(from, nodeCnt)
	}
	target := (cpuCnt + nodeCnt - 1) / nodeCnt
	if cpuCnt <= nodeCnt || target > 1024 {
		return pickFirst(from, nodeCnt)
	}
	picked := make([]bool, len(from))
	smaller := make([]int, target) // how many nodes have each CPU count below target
	remNodes, remCPUs := nodeCnt, cpuCnt
	for i := range from {
		if !from[i] {
			continue
		}
		if usable[i] < target {
			smaller[usable[i]]++
			continue
		}
		picked[i] = true
		remCPUs -= usable[i]
		remNodes--
		if remCPUs <= 0 && remNodes <= 0 {
			return picked
		}
		if remNodes == 0 {
			return nil // node limit reached before the CPU count
		}
	}
	saveNodes, saveCPUs := remNodes, remCPUs
	smaller[0] = 0
	for c := target - 1; c > 0; c-- {
		if smaller[c] == 0 {
			continue
		}
		if smaller[c] > remNodes {
			smaller[c] = remNodes
		}
		if remNodes > 0 {
			remNodes -= smaller[c]
			remCPUs -= smaller[c] * c
		}
	}
	if remCPUs > 0 || remNodes > 0 {
		return nil
	}
	remNodes, remCPUs = saveNodes, saveCPUs
	for i := range from {
		if !from[i] || usable[i] >= target || smaller[usable[i]] == 0 {
			continue
		}
		smaller[usable[i]]--
		picked[i] = true
		remCPUs -= usable[i]
		remNodes--
		if remCPUs <= 0 && remNodes <= 0 {
			return picked
		}
		if remNodes == 0 {
			break
		}
	}
	return nil
}
