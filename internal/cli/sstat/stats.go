package sstat

import (
	"github.com/droverhq/drover/internal/cli/coltable"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
	stepproto "github.com/droverhq/drover/internal/step/proto"
	"github.com/droverhq/drover/internal/timefmt"
)

// metric is one thing a task uses, as the TRES strings name them.
type metric int

const (
	mCPU metric = iota
	mEnergy
	mDiskRead
	mMem
	mPages
	mVMem
	mDiskWrite
	mGPUMem
	mGPUUtil
	nMetrics
)

// agg is one metric over a step's tasks: the largest and smallest value
// with the node and task that had it, and the sum.
type agg struct {
	max, min, tot    float64
	maxNode, minNode string
	maxTask, minTask uint32
	seen             bool
}

func (a *agg) add(v float64, node string, task uint32) {
	if !a.seen || v > a.max {
		a.max, a.maxNode, a.maxTask = v, node, task
	}
	if !a.seen || v < a.min {
		a.min, a.minNode, a.minTask = v, node, task
	}
	a.tot += v
	a.seen = true
}

// stepStat is one line of sstat: a running step's tasks taken together.
type stepStat struct {
	id     string // "2.0", "2.batch"
	batch  bool
	node   string // -i: the one node of the line
	nodes  []string
	pids   []int
	ntasks int
	m      [nMetrics]agg
	// gpus says the step's GPU use was measured (gres/gpumem and
	// gres/gpuutil in the TRES strings).
	gpus bool
}

// newStepStat folds a step's answer (or, for -i, one node's part).
func newStepStat(s *stepproto.StepStat, nodes []stepproto.NodeStat) stepStat {
	st := stepStat{id: stepID(s.JobID, s.StepID), batch: s.StepID == stepproto.BatchStep}
	for _, n := range nodes {
		st.nodes = append(st.nodes, n.Node)
		for _, t := range n.Tasks {
			st.ntasks++
			st.pids = append(st.pids, t.Pids...)
			vals := [nMetrics]float64{
				mCPU:       (t.UserCPU + t.SystemCPU).Seconds(),
				mDiskRead:  float64(t.DiskRead),
				mMem:       float64(t.RSS),
				mPages:     float64(t.Pages),
				mVMem:      float64(t.VMSize),
				mDiskWrite: float64(t.DiskWrite),
				mGPUMem:    float64(t.GPUMem),
				mGPUUtil:   float64(t.GPUUtil),
			}
			st.gpus = st.gpus || t.GPUs
			for k, v := range vals {
				st.m[k].add(v, n.Node, t.Task)
			}
		}
	}
	if len(nodes) == 1 {
		st.node = nodes[0].Node
	}
	return st
}

func stepID(job, step uint32) string {
	if step == stepproto.BatchStep {
		return strconv.FormatUint(uint64(job), 10) + ".batch"
	}
	return strconv.FormatUint(uint64(job), 10) + "." + strconv.FormatUint(uint64(step), 10)
}

func (s *stepStat) ave(k metric) float64 {
	if s.ntasks == 0 {
		return 0
	}
	return s.m[k].tot / float64(s.ntasks)
}

func (s *stepStat) nodeList() string { return hostlist.Compress(s.nodes) }

func (s *stepStat) pidList() string {
	out := make([]string, len(s.pids))
	for i, p := range s.pids {
		out[i] = strconv.Itoa(p)
	}
	return strings.Join(out, ",")
}

// format prints values as sstat does.
type format struct {
	// noConvert is --noconvert: memory in bytes, not in K, M, G.
	noConvert bool
}

// mem prints a memory size: Slurm keeps them in KiB and, unless
// --noconvert, moves to a larger unit only while the value divides
// exactly (sstat's CONVERT_NUM_UNIT_EXACT): "64616K", "2M".
func (f format) mem(bytes float64) string {
	if f.noConvert {
		return strconv.FormatInt(int64(bytes+0.5), 10)
	}
	return coltable.ExactSize(bytes)
}

// count prints a plain number, rounded.
func count(v float64) string { return strconv.FormatInt(int64(v+0.5), 10) }

// cpu prints CPU seconds as sstat does ("00:00:05", "01:02:03").
func cpu(secs float64) string { return timefmt.FormatDurationPadded(int64(secs)) }

// tresIn is a TRESUsageIn string of value v of each metric ("cpu=00:00:13,
// energy=0,fs/disk=1685835,mem=64577K,pages=1,vmem=67772K").
func (f format) tresIn(v func(metric) float64, gpus bool) string {
	s := "cpu=" + cpu(v(mCPU)) + ",energy=" + count(v(mEnergy)) + ",fs/disk=" + count(v(mDiskRead))
	if gpus {
		s += ",gres/gpumem=" + f.mem(v(mGPUMem)) + ",gres/gpuutil=" + count(v(mGPUUtil))
	}
	return s + ",mem=" + f.mem(v(mMem)) + ",pages=" + count(v(mPages)) + ",vmem=" + f.mem(v(mVMem))
}

// tresInWhere is a TRESUsageIn string of nodes or tasks: node names, or
// task ids printed the way each TRES prints its values, as Slurm does:
// the CPU's as a time in milliseconds (task 3 is "00:00:00"); tasks
// have no energy.
func tresInWhere(node func(metric) string, task func(metric) uint32, gpus bool) string {
	if node != nil {
		s := "cpu=" + node(mCPU) + ",energy=" + node(mEnergy) + ",fs/disk=" + node(mDiskRead)
		if gpus {
			s += ",gres/gpumem=" + node(mGPUMem) + ",gres/gpuutil=" + node(mGPUUtil)
		}
		return s + ",mem=" + node(mMem) + ",pages=" + node(mPages) + ",vmem=" + node(mVMem)
	}
	n := func(k metric) string { return strconv.FormatUint(uint64(task(k)), 10) }
	s := "cpu=" + cpu(float64(task(mCPU))/1000) + ",fs/disk=" + n(mDiskRead)
	if gpus {
		s += ",gres/gpumem=" + n(mGPUMem) + ",gres/gpuutil=" + n(mGPUUtil)
	}
	return s + ",mem=" + n(mMem) + ",pages=" + n(mPages) + ",vmem=" + n(mVMem)
}

// tresOut is a TRESUsageOut string (what was written).
func tresOut(energy, disk string) string { return "energy=" + energy + ",fs/disk=" + disk }
