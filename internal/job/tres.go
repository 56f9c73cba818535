package job

import (
	"fmt"
	"strconv"
	"strings"
)

// TRES are the trackable resources slurmctld counts for a job or a
// partition: CPUs, memory, nodes and GPUs, and billing (the CPU count
// unless the partition's TRESBillingWeights gave another: Billing).
type TRES struct {
	CPUs    uint32
	MemMB   uint64
	Nodes   uint32
	GPUs    uint64
	Billing uint64
}

// billing is the billing TRES.
func (t TRES) billing() uint64 {
	if t.Billing > 0 {
		return t.Billing
	}
	return uint64(t.CPUs)
}

// Counts are the TRES by Slurm's names, for TRESBillingWeights.
func (t TRES) Counts() map[string]uint64 {
	return map[string]uint64{"cpu": uint64(t.CPUs), "mem": t.MemMB, "node": uint64(t.Nodes), "gres/gpu": t.GPUs}
}

// TaskCount is the job's tasks: asked for, laid out, or one a node.
func (j *Job) TaskCount() uint32 {
	if j.Req.NumTasks > 0 {
		return j.Req.NumTasks
	}
	if j.Alloc != nil {
		var n uint32
		for _, na := range j.Alloc.Nodes {
			n += na.Tasks
		}
		return n
	}
	if j.Req.TasksPerNode > 0 {
		return j.Req.TasksPerNode * max(j.Req.MinNodes, 1)
	}
	return max(j.Req.MinNodes, 1)
}

// ExpectedNodes is the node count slurmctld shows for a job (and
// NodeGuess holds for a pending one): the nodes it holds; for a pending
// job the nodes the scheduler planned it on, or a
// guess from its request on nodes of maxCPUs processors, the partition's
// largest (job_mgr.c's packing of a pending job's node count: tasks over
// tasks per node, over what a node holds of tasks of several CPUs, or
// over CPUs, never below the nodes asked for).
func (j *Job) ExpectedNodes(maxCPUs uint32) uint32 {
	if j.Alloc != nil || j.State != Pending {
		return j.NodeCount()
	}
	if len(j.SchedNodes) > 0 {
		return uint32(len(j.SchedNodes))
	}
	least := j.NodeCount()
	tasks := j.Req.NumTasks
	if tasks == 0 || maxCPUs == 0 {
		return least
	}
	var nodes uint32
	switch cpt := j.Req.CPUsPerTask; {
	case j.Req.TasksPerNode > 0:
		nodes = tasks / j.Req.TasksPerNode
	case cpt > 1:
		perNode := max(maxCPUs/cpt, 1)
		nodes = (tasks + perNode - 1) / perNode
	default:
		nodes = (tasks + maxCPUs - 1) / maxCPUs
	}
	return max(nodes, least)
}

// NodeCount is the nodes the job holds, or asks for.
func (j *Job) NodeCount() uint32 {
	if j.Alloc != nil {
		return uint32(len(j.Alloc.Nodes))
	}
	return max(j.Req.MinNodes, uint32(len(j.Req.NodeList)), 1)
}

// CPUCount is the CPUs the job holds, or asks for.
func (j *Job) CPUCount() uint32 {
	if j.Alloc != nil {
		return j.Alloc.TotalCPUs()
	}
	return j.TaskCount() * max(j.Req.CPUsPerTask, 1)
}

// ReqTRES is what the job holds, or asks for (tres_req_str).
func (j *Job) ReqTRES() TRES {
	t := TRES{CPUs: j.CPUCount(), Nodes: j.NodeCount()}
	switch {
	case j.Alloc != nil:
		for _, na := range j.Alloc.Nodes {
			t.MemMB += na.MemMB
		}
	case j.Req.MemPerNode > 0:
		t.MemMB = j.Req.MemPerNode * uint64(t.Nodes)
	case j.Req.MemPerCPU > 0:
		t.MemMB = j.Req.MemPerCPU * uint64(t.CPUs)
	}
	t.GPUs = uint64(j.Req.GPUsPerNode)*uint64(t.Nodes) + uint64(j.Req.GPUsPerJob)
	return t
}

// AllocTRES is what the job holds (tres_alloc_str); zero before it starts.
func (j *Job) AllocTRES() TRES {
	if j.Alloc == nil {
		return TRES{}
	}
	t := TRES{CPUs: j.Alloc.TotalCPUs(), Nodes: uint32(len(j.Alloc.Nodes)), GPUs: uint64(j.Alloc.TotalGPUs()), Billing: j.Alloc.Billing}
	for _, na := range j.Alloc.Nodes {
		t.MemMB += na.MemMB
	}
	return t
}

// Count is the amount of one TRES by Slurm's name (billing counts CPUs;
// 0 for a TRES not counted here).
func (t TRES) Count(name string) uint64 {
	switch name {
	case "cpu":
		return uint64(t.CPUs)
	case "billing":
		return t.billing()
	case "mem":
		return t.MemMB
	case "node":
		return uint64(t.Nodes)
	case "gres/gpu":
		return t.GPUs
	}
	return 0
}

// String is the TRES as Slurm writes them ("cpu=4,mem=4000M,node=2,
// billing=4,gres/gpu=4").
func (t TRES) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu=%d", t.CPUs)
	if t.MemMB > 0 {
		b.WriteString(",mem=" + FormatMemMB(t.MemMB))
	}
	fmt.Fprintf(&b, ",node=%d,billing=%d", t.Nodes, t.billing())
	if t.GPUs > 0 {
		fmt.Fprintf(&b, ",gres/gpu=%d", t.GPUs)
	}
	return b.String()
}

// FormatMemMB prints MB as Slurm's TRES strings do ("100M", "16000M",
// "1G" only for exact multiples of 1024).
func FormatMemMB(mb uint64) string {
	switch {
	case mb >= 1024*1024 && mb%(1024*1024) == 0:
		return strconv.FormatUint(mb/(1024*1024), 10) + "T"
	case mb >= 1024 && mb%1024 == 0:
		return strconv.FormatUint(mb/1024, 10) + "G"
	}
	return strconv.FormatUint(mb, 10) + "M"
}

// ParseTRES reads a TRES string as slurmctld writes them; TRES other than
// cpu, mem, node and gres/gpu (billing, energy, typed GPUs...) are passed
// over.
func ParseTRES(s string) (TRES, error) {
	var t TRES
	if strings.TrimSpace(s) == "" {
		return t, nil
	}
	for _, item := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || name == "" {
			return TRES{}, fmt.Errorf("TRES %q: %q is not name=count", s, item)
		}
		switch strings.ToLower(name) {
		case "cpu":
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: cpu=%s: not a count", s, val)
			}
			t.CPUs = uint32(n)
		case "node":
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: node=%s: not a count", s, val)
			}
			t.Nodes = uint32(n)
		case "gres/gpu":
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: gres/gpu=%s: not a count", s, val)
			}
			t.GPUs = n
		case "mem":
			mb, err := parseMemMB(val)
			if err != nil {
				return TRES{}, fmt.Errorf("TRES %q: mem=%s: %w", s, val, err)
			}
			t.MemMB = mb
		}
	}
	return t, nil
}

// parseMemMB reads a TRES memory amount: a count with a K, M, G or T
// suffix (M without one).
func parseMemMB(v string) (uint64, error) {
	mult := map[byte]float64{'K': 1.0 / 1024, 'M': 1, 'G': 1024, 'T': 1024 * 1024}
	f := 1.0
	if n := len(v); n > 0 {
		if m, ok := mult[v[n-1]&^0x20]; ok {
			f, v = m, v[:n-1]
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || n*f > 1<<53 {
		return 0, fmt.Errorf("not an amount of memory")
	}
	return uint64(n * f), nil
}
