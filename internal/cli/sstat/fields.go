package sstat

import (
	"github.com/droverhq/drover/internal/cli/coltable"
	"strconv"
	"strings"
	"sync"
)

// field is a column -o can name, with sstat's default width.
type field struct {
	name  string
	width int
	cell  func(s *stepStat, f format) string
}

// fieldTable is sstat's fields, by their names in lower case, and -e's
// list of them; it is built when a command first needs it, not as every
// command starts.
type fieldTable struct {
	byName map[string]field
	order  []string
}

var fields = sync.OnceValue(func() fieldTable {
	t := fieldTable{byName: map[string]field{}}
	maxOf := func(k metric, pr func(float64) string) func(*stepStat, format) string {
		return func(s *stepStat, _ format) string { return pr(s.m[k].max) }
	}
	node := func(k metric) func(*stepStat, format) string {
		return func(s *stepStat, _ format) string { return s.m[k].maxNode }
	}
	task := func(k metric) func(*stepStat, format) string {
		return func(s *stepStat, _ format) string { return strconv.FormatUint(uint64(s.m[k].maxTask), 10) }
	}
	aveOf := func(k metric, pr func(float64) string) func(*stepStat, format) string {
		return func(s *stepStat, _ format) string { return pr(s.ave(k)) }
	}
	memMax := func(k metric) func(*stepStat, format) string {
		return func(s *stepStat, f format) string { return f.mem(s.m[k].max) }
	}
	memAve := func(k metric) func(*stepStat, format) string {
		return func(s *stepStat, f format) string { return f.mem(s.ave(k)) }
	}
	freq := func(s *stepStat, _ format) string {
		// No CPU frequency was asked for: srun's steps say so, the
		// batch step has zero.
		if s.batch {
			return "0"
		}
		return "Unknown"
	}
	zero := func(*stepStat, format) string { return "0" }
	for _, f := range []field{
		{"AveCPU", 10, aveOf(mCPU, cpu)},
		{"AveCPUFreq", 10, zero},
		{"AveDiskRead", 12, aveOf(mDiskRead, count)},
		{"AveDiskWrite", 12, aveOf(mDiskWrite, count)},
		{"AvePages", 10, aveOf(mPages, count)},
		{"AveRSS", 10, memAve(mMem)},
		{"AveVMSize", 10, memAve(mVMem)},
		{"ConsumedEnergy", 14, zero},
		{"ConsumedEnergyRaw", 17, zero},
		{"JobID", 12, func(s *stepStat, _ format) string { return s.id }},
		{"MaxDiskRead", 12, maxOf(mDiskRead, count)},
		{"MaxDiskReadNode", 15, node(mDiskRead)},
		{"MaxDiskReadTask", 15, task(mDiskRead)},
		{"MaxDiskWrite", 12, maxOf(mDiskWrite, count)},
		{"MaxDiskWriteNode", 16, node(mDiskWrite)},
		{"MaxDiskWriteTask", 16, task(mDiskWrite)},
		{"MaxPages", 8, maxOf(mPages, count)},
		{"MaxPagesNode", 12, node(mPages)},
		{"MaxPagesTask", 14, task(mPages)},
		{"MaxRSS", 10, memMax(mMem)},
		{"MaxRSSNode", 10, node(mMem)},
		{"MaxRSSTask", 10, task(mMem)},
		{"MaxVMSize", 10, memMax(mVMem)},
		{"MaxVMSizeNode", 14, node(mVMem)},
		{"MaxVMSizeTask", 14, task(mVMem)},
		{"MinCPU", 10, func(s *stepStat, _ format) string { return cpu(s.m[mCPU].min) }},
		{"MinCPUNode", 10, func(s *stepStat, _ format) string { return s.m[mCPU].minNode }},
		{"MinCPUTask", 10, func(s *stepStat, _ format) string { return strconv.FormatUint(uint64(s.m[mCPU].minTask), 10) }},
		{"Nodelist", 20, func(s *stepStat, _ format) string {
			if s.node != "" {
				return s.node
			}
			return s.nodeList()
		}},
		{"NTasks", 8, func(s *stepStat, _ format) string { return strconv.Itoa(s.ntasks) }},
		{"Pids", 20, func(s *stepStat, _ format) string { return s.pidList() }},
		{"ReqCPUFreq", 10, freq},
		{"ReqCPUFreqMin", 13, freq},
		{"ReqCPUFreqMax", 13, freq},
		{"ReqCPUFreqGov", 13, freq},
		{"TRESUsageInAve", 14, func(s *stepStat, f format) string { return f.tresIn(s.ave, s.gpus) }},
		{"TRESUsageInMax", 14, func(s *stepStat, f format) string {
			return f.tresIn(func(k metric) float64 { return s.m[k].max }, s.gpus)
		}},
		{"TRESUsageInMaxNode", 18, func(s *stepStat, _ format) string {
			return tresInWhere(func(k metric) string { return s.m[k].maxNode }, nil, s.gpus)
		}},
		{"TRESUsageInMaxTask", 18, func(s *stepStat, _ format) string {
			return tresInWhere(nil, func(k metric) uint32 { return s.m[k].maxTask }, s.gpus)
		}},
		{"TRESUsageInMin", 14, func(s *stepStat, f format) string {
			return f.tresIn(func(k metric) float64 { return s.m[k].min }, s.gpus)
		}},
		{"TRESUsageInMinNode", 18, func(s *stepStat, _ format) string {
			return tresInWhere(func(k metric) string { return s.m[k].minNode }, nil, s.gpus)
		}},
		{"TRESUsageInMinTask", 18, func(s *stepStat, _ format) string {
			return tresInWhere(nil, func(k metric) uint32 { return s.m[k].minTask }, s.gpus)
		}},
		{"TRESUsageInTot", 14, func(s *stepStat, f format) string {
			return f.tresIn(func(k metric) float64 { return s.m[k].tot }, s.gpus)
		}},
		{"TRESUsageOutAve", 15, func(s *stepStat, _ format) string { return tresOut("0", count(s.ave(mDiskWrite))) }},
		{"TRESUsageOutMax", 15, func(s *stepStat, _ format) string { return tresOut("0", count(s.m[mDiskWrite].max)) }},
		{"TRESUsageOutMaxNode", 19, func(s *stepStat, _ format) string {
			return tresOut(s.m[mEnergy].maxNode, s.m[mDiskWrite].maxNode)
		}},
		{"TRESUsageOutMaxTask", 19, func(s *stepStat, _ format) string {
			return "fs/disk=" + strconv.FormatUint(uint64(s.m[mDiskWrite].maxTask), 10)
		}},
		{"TRESUsageOutMin", 15, func(s *stepStat, _ format) string { return tresOut("0", count(s.m[mDiskWrite].min)) }},
		{"TRESUsageOutMinNode", 19, func(s *stepStat, _ format) string {
			return tresOut(s.m[mEnergy].minNode, s.m[mDiskWrite].minNode)
		}},
		{"TRESUsageOutMinTask", 19, func(s *stepStat, _ format) string {
			return "fs/disk=" + strconv.FormatUint(uint64(s.m[mDiskWrite].minTask), 10)
		}},
		{"TRESUsageOutTot", 15, func(s *stepStat, _ format) string { return tresOut("0", count(s.m[mDiskWrite].tot)) }},
	} {
		t.byName[strings.ToLower(f.name)] = f
		t.order = append(t.order, f.name)
	}
	return t
})

// defaultFormat is sstat's default columns.
const defaultFormat = "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS," +
	"MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AveCPUFreq," +
	"ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask," +
	"AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax," +
	"TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot," +
	"TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,TRESUsageOutMinNode," +
	"TRESUsageOutMinTask,TRESUsageOutTot"

// pidFormat is -i's.
const pidFormat = "JobID,Nodelist,Pids"

// column is a field as -o asked for it.
type column = coltable.Spec[field]

// parseFormat reads a -o list: names, each with an optional %WIDTH.
func parseFormat(s string) ([]column, error) {
	return coltable.ParseFormat(s, func(name string) (field, int, bool) {
		f, ok := fields().byName[name]
		return f, f.width, ok
	})
}
