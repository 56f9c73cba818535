package sacct

import (
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/coltable"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/timefmt"
)

// measure is one of a step's usage measures over its tasks (a TRES of
// TRESUsageIn or Out): the largest, smallest, average and total, and
// where the extremes were (node "" and task -1 when not known).
type measure struct {
	max, min, ave, tot float64
	maxNode, minNode   string
	maxTask, minTask   int64
}

// stepUse is a step line's usage.
type stepUse struct {
	// cpu is in milliseconds; the others in bytes, pages or percent.
	cpu, mem, read, vmem, pages, write measure
	gpuMem, gpuUtil                    measure
	// gpus says the step's GPU use was measured.
	gpus bool
}

// measures lists the TRESUsageIn measures in the order sacct prints
// them, with their names; write is the one TRESUsageOut measure.
func (u *stepUse) in() []struct {
	name string
	m    *measure
} {
	return []struct {
		name string
		m    *measure
	}{{"cpu", &u.cpu}, {"fs/disk", &u.read}, {"gres/gpumem", &u.gpuMem}, {"gres/gpuutil", &u.gpuUtil}, {"mem", &u.mem}, {"pages", &u.pages}, {"vmem", &u.vmem}}
}

// parseUse reads a step's TRES usage lists. A step that ran on one node
// had its extremes there, and a step of one task in task 0.
func parseUse(s *readmodel.AcctStep, node string, ntasks int64) (stepUse, bool) {
	if len(s.MaxTRES) == 0 && len(s.OutMaxTRES) == 0 {
		return stepUse{}, false
	}
	var u stepUse
	set := func(m *measure, name string, mx, mn, av, tt []readmodel.TRES) {
		m.max, m.min = float64(tresCount(mx, name)), float64(tresCount(mn, name))
		m.ave, m.tot = float64(tresCount(av, name)), float64(tresCount(tt, name))
		m.maxNode, m.minNode, m.maxTask, m.minTask = node, node, -1, -1
		if ntasks == 1 {
			m.maxTask, m.minTask = 0, 0
		}
	}
	for _, x := range []struct {
		m    *measure
		name string
	}{{&u.cpu, "cpu"}, {&u.mem, "mem"}, {&u.read, "fs/disk"}, {&u.vmem, "vmem"}, {&u.pages, "pages"}, {&u.gpuMem, "gres/gpumem"}, {&u.gpuUtil, "gres/gpuutil"}} {
		set(x.m, x.name, s.MaxTRES, s.MinTRES, s.AveTRES, s.TotTRES)
	}
	for _, t := range s.MaxTRES {
		u.gpus = u.gpus || (t.Type == "gres" && t.Name == "gpumem")
	}
	set(&u.write, "fs/disk", s.OutMaxTRES, s.OutMinTRES, s.OutAveTRES, s.OutTotTRES)
	return u, true
}

// memory prints a size as sacct does: in KiB, moved to a larger unit
// only while it divides exactly ("64592K", "2M"); in bytes with
// --noconvert; in the --units unit.
func (c *cellCtx) memory(bytes float64) string {
	if c.noConvert {
		return strconv.FormatInt(int64(bytes+0.5), 10)
	}
	if c.units != "" {
		return c.inUnit(bytes)
	}
	return coltable.ExactSize(bytes)
}

// disk prints bytes read or written as sacct does: in MiB with two
// decimals ("1.61M", "0.00M").
func (c *cellCtx) disk(bytes float64) string {
	if c.noConvert {
		return strconv.FormatInt(int64(bytes+0.5), 10)
	}
	if c.units != "" {
		return c.inUnit(bytes)
	}
	return strconv.FormatFloat(bytes/(1<<20), 'f', 2, 64) + "M"
}

// inUnit is a size in --units' unit ("5130K", "0.50M").
func (c *cellCtx) inUnit(bytes float64) string {
	v := bytes
	for range strings.Index("KMGTP", c.units) + 1 {
		v /= 1024
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + c.units
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + c.units
}

func msTime(ms float64) string { return timefmt.FormatDurationPadded(int64(ms / 1000)) }

func count(v float64) string { return strconv.FormatInt(int64(v+0.5), 10) }

func taskOf(t int64) string {
	if t < 0 {
		return ""
	}
	return strconv.FormatInt(t, 10)
}

// tresIn is a TRESUsageIn string of one of max, min, ave, tot
// ("cpu=00:00:27,energy=0,fs/disk=1685835,mem=64535K,pages=1,vmem=142876K").
func (c *cellCtx) tresIn(u *stepUse, get func(*measure) float64) string {
	s := "cpu=" + msTime(get(&u.cpu)) + ",energy=0,fs/disk=" + count(get(&u.read))
	if u.gpus {
		s += ",gres/gpumem=" + c.memory(get(&u.gpuMem)) + ",gres/gpuutil=" + count(get(&u.gpuUtil))
	}
	return s + ",mem=" + c.memory(get(&u.mem)) + ",pages=" + count(get(&u.pages)) + ",vmem=" + c.memory(get(&u.vmem))
}

// tresWhere is a TRESUsageIn string of the nodes or tasks of max or min;
// energy's node is the disk's, as sacct shows it. Unknown: "".
func tresWhere(u *stepUse, max, nodes bool) string {
	var parts []string
	if nodes {
		n := func(m *measure) string { return m.minNode }
		if max {
			n = func(m *measure) string { return m.maxNode }
		}
		if n(&u.read) == "" {
			return ""
		}
		parts = append(parts, "cpu="+n(&u.cpu), "energy="+n(&u.read))
		for _, x := range u.in()[1:] {
			if u.gpus || !strings.HasPrefix(x.name, "gres/") {
				parts = append(parts, x.name+"="+n(x.m))
			}
		}
		return strings.Join(parts, ",")
	}
	t := func(m *measure) int64 { return m.minTask }
	if max {
		t = func(m *measure) int64 { return m.maxTask }
	}
	for _, x := range u.in() {
		if !u.gpus && strings.HasPrefix(x.name, "gres/") {
			continue
		}
		if t(x.m) < 0 {
			return ""
		}
		parts = append(parts, x.name+"="+taskOf(t(x.m)))
	}
	return strings.Join(parts, ",")
}

// usageFields are the columns of a step's usage, empty on lines without
// any (a job's own line, a step whose node did not report).
func usageFields() []field {
	use := func(f func(u *stepUse, c *cellCtx) string) func(*row, *cellCtx) string {
		return func(r *row, c *cellCtx) string {
			if !r.hasUsage {
				return ""
			}
			return f(&r.use, c)
		}
	}
	mem := func(get func(u *stepUse) (*measure, func(*measure) float64)) func(*row, *cellCtx) string {
		return use(func(u *stepUse, c *cellCtx) string { m, f := get(u); return c.memory(f(m)) })
	}
	maxV := func(m *measure) float64 { return m.max }
	minV := func(m *measure) float64 { return m.min }
	aveV := func(m *measure) float64 { return m.ave }
	totV := func(m *measure) float64 { return m.tot }
	return []field{
		{"MaxRSS", 10, false, mem(func(u *stepUse) (*measure, func(*measure) float64) { return &u.mem, maxV })},
		{"MaxRSSNode", 10, false, use(func(u *stepUse, _ *cellCtx) string { return u.mem.maxNode })},
		{"MaxRSSTask", 10, false, use(func(u *stepUse, _ *cellCtx) string { return taskOf(u.mem.maxTask) })},
		{"AveRSS", 10, false, mem(func(u *stepUse) (*measure, func(*measure) float64) { return &u.mem, aveV })},
		{"MaxVMSize", 10, false, mem(func(u *stepUse) (*measure, func(*measure) float64) { return &u.vmem, maxV })},
		{"MaxVMSizeNode", 14, false, use(func(u *stepUse, _ *cellCtx) string { return u.vmem.maxNode })},
		{"MaxVMSizeTask", 14, false, use(func(u *stepUse, _ *cellCtx) string { return taskOf(u.vmem.maxTask) })},
		{"AveVMSize", 10, false, mem(func(u *stepUse) (*measure, func(*measure) float64) { return &u.vmem, aveV })},
		{"MaxPages", 8, false, use(func(u *stepUse, _ *cellCtx) string { return count(u.pages.max) })},
		{"MaxPagesNode", 12, false, use(func(u *stepUse, _ *cellCtx) string { return u.pages.maxNode })},
		{"MaxPagesTask", 14, false, use(func(u *stepUse, _ *cellCtx) string { return taskOf(u.pages.maxTask) })},
		{"AvePages", 10, false, use(func(u *stepUse, _ *cellCtx) string { return count(u.pages.ave) })},
		{"MinCPU", 10, false, use(func(u *stepUse, _ *cellCtx) string { return msTime(u.cpu.min) })},
		{"MinCPUNode", 10, false, use(func(u *stepUse, _ *cellCtx) string { return u.cpu.minNode })},
		{"MinCPUTask", 10, false, use(func(u *stepUse, _ *cellCtx) string { return taskOf(u.cpu.minTask) })},
		{"AveCPU", 10, false, use(func(u *stepUse, _ *cellCtx) string { return msTime(u.cpu.ave) })},
		{"MaxDiskRead", 12, false, use(func(u *stepUse, c *cellCtx) string { return c.disk(u.read.max) })},
		{"MaxDiskReadNode", 15, false, use(func(u *stepUse, _ *cellCtx) string { return u.read.maxNode })},
		{"MaxDiskReadTask", 15, false, use(func(u *stepUse, _ *cellCtx) string { return taskOf(u.read.maxTask) })},
		{"AveDiskRead", 14, false, use(func(u *stepUse, c *cellCtx) string { return c.disk(u.read.ave) })},
		{"MaxDiskWrite", 12, false, use(func(u *stepUse, c *cellCtx) string { return c.disk(u.write.max) })},
		{"MaxDiskWriteNode", 16, false, use(func(u *stepUse, _ *cellCtx) string { return u.write.maxNode })},
		{"MaxDiskWriteTask", 16, false, use(func(u *stepUse, _ *cellCtx) string { return taskOf(u.write.maxTask) })},
		{"AveDiskWrite", 14, false, use(func(u *stepUse, c *cellCtx) string { return c.disk(u.write.ave) })},
		{"TRESUsageInAve", 14, false, use(func(u *stepUse, c *cellCtx) string { return c.tresIn(u, aveV) })},
		{"TRESUsageInMax", 14, false, use(func(u *stepUse, c *cellCtx) string { return c.tresIn(u, maxV) })},
		{"TRESUsageInMaxNode", 18, false, use(func(u *stepUse, _ *cellCtx) string { return tresWhere(u, true, true) })},
		{"TRESUsageInMaxTask", 18, false, use(func(u *stepUse, _ *cellCtx) string { return tresWhere(u, true, false) })},
		{"TRESUsageInMin", 14, false, use(func(u *stepUse, c *cellCtx) string { return c.tresIn(u, minV) })},
		{"TRESUsageInMinNode", 18, false, use(func(u *stepUse, _ *cellCtx) string { return tresWhere(u, false, true) })},
		{"TRESUsageInMinTask", 18, false, use(func(u *stepUse, _ *cellCtx) string { return tresWhere(u, false, false) })},
		{"TRESUsageInTot", 14, false, use(func(u *stepUse, c *cellCtx) string { return c.tresIn(u, totV) })},
		{"TRESUsageOutAve", 15, false, use(func(u *stepUse, _ *cellCtx) string { return "energy=0,fs/disk=" + count(u.write.ave) })},
		{"TRESUsageOutMax", 15, false, use(func(u *stepUse, _ *cellCtx) string { return "energy=0,fs/disk=" + count(u.write.max) })},
		{"TRESUsageOutMaxNode", 19, false, use(func(u *stepUse, _ *cellCtx) string {
			if u.write.maxNode == "" {
				return ""
			}
			return "energy=" + u.read.maxNode + ",fs/disk=" + u.write.maxNode
		})},
		{"TRESUsageOutMaxTask", 19, false, use(func(u *stepUse, _ *cellCtx) string {
			if u.write.maxTask < 0 {
				return ""
			}
			return "fs/disk=" + taskOf(u.write.maxTask)
		})},
		{"TRESUsageOutMin", 15, false, use(func(u *stepUse, _ *cellCtx) string { return "energy=0,fs/disk=" + count(u.write.min) })},
		{"TRESUsageOutMinNode", 19, false, use(func(u *stepUse, _ *cellCtx) string {
			if u.write.minNode == "" {
				return ""
			}
			return "energy=" + u.read.minNode + ",fs/disk=" + u.write.minNode
		})},
		{"TRESUsageOutMinTask", 19, false, use(func(u *stepUse, _ *cellCtx) string {
			if u.write.minTask < 0 {
				return ""
			}
			return "fs/disk=" + taskOf(u.write.minTask)
		})},
		{"TRESUsageOutTot", 15, false, use(func(u *stepUse, _ *cellCtx) string { return "energy=0,fs/disk=" + count(u.write.tot) })},
	}
}
