package gres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// BindMode is the kind of srun --gpu-bind.
type BindMode int

// The --gpu-bind modes, as Slurm's _valid_gres_bind reads them.
const (
	// BindDefault is no --gpu-bind: with --gpus-per-task=N Slurm
	// binds per_task:N, otherwise every task sees all the step's GPUs.
	BindDefault BindMode = iota
	BindNone
	BindClosest
	BindMap
	BindMask
	BindPerTask
	BindSingle
)

// GPUBind is a parsed --gpu-bind value ("closest", "map_gpu:0,1*2",
// "mask_gpu:0x3", "per_task:2", "single:2", "none", each optionally after
// "verbose,").
type GPUBind struct {
	Mode BindMode
	// Verbose asks for slurmstepd's "gpu-bind: ..." line on each task's
	// stderr.
	Verbose bool
	// N is per_task's GPUs per task and single's tasks per GPU.
	N int
	// List is map's GPU indexes or mask's GPU masks, one entry per task,
	// each for Count tasks in a row; tasks beyond the list start it again.
	List []BindEntry
	// Text is the value as given, for messages.
	Text string
}

// BindEntry is one element of a map or mask list: Value for Count tasks.
type BindEntry struct {
	Value uint64
	Count int
}

// ParseGPUBind reads --gpu-bind. Its errors are what srun prints after
// "Invalid --gpu-bind argument: ".
func ParseGPUBind(s string) (GPUBind, error) {
	b := GPUBind{Text: s}
	if s == "" {
		return b, nil
	}
	arg := s
	if len(arg) >= 8 && strings.EqualFold(arg[:8], "verbose,") {
		b.Verbose, arg = true, arg[8:]
	}
	prefix := func(p string) bool {
		if len(arg) >= len(p) && strings.EqualFold(arg[:len(p)], p) {
			arg = arg[len(p):]
			return true
		}
		return false
	}
	var err error
	switch {
	case prefix("closest"):
		// Slurm compares the prefix only: "closest" and anything after.
		b.Mode = BindClosest
	case prefix("map_gpu:"), prefix("map:"):
		b.Mode = BindMap
		b.List, err = parseBindList(arg, 10)
	case prefix("mask_gpu:"), prefix("mask:"):
		b.Mode = BindMask
		b.List, err = parseBindList(arg, 16)
	case prefix("none"):
		b.Mode = BindNone
	case prefix("per_task:"):
		b.Mode = BindPerTask
		b.N, err = parseBindCount(arg)
	case prefix("single:"):
		b.Mode = BindSingle
		b.N, err = parseBindCount(arg)
	default:
		err = fmt.Errorf("%s", s)
	}
	if err != nil {
		return GPUBind{}, fmt.Errorf("%s", s)
	}
	return b, nil
}

func parseBindCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return n, nil
}

// parseBindList reads "v[*count],...": decimal GPU indexes for map, hex
// masks (with or without 0x) for mask.
func parseBindList(s string, base int) ([]BindEntry, error) {
	if s == "" {
		return nil, fmt.Errorf("empty list")
	}
	var out []BindEntry
	for _, tok := range strings.Split(s, ",") {
		val, count, hasCount := strings.Cut(tok, "*")
		if base == 16 {
			val = strings.TrimPrefix(val, "0x")
		}
		v, err := strconv.ParseUint(val, base, 63)
		if err != nil {
			return nil, fmt.Errorf("bad value %q", tok)
		}
		e := BindEntry{Value: v, Count: 1}
		if hasCount {
			n, err := strconv.Atoi(count)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad repetition %q", tok)
			}
			// Slurm takes a repetition of 0 as 1, with an error.
			e.Count = max(n, 1)
		}
		out = append(out, e)
	}
	return out, nil
}

// BindNode is what binding needs to know of one node.
type BindNode struct {
	// Alloc is the step's GPUs on the node, as node GPU indexes.
	Alloc []int
	// Size is the node's GPU count (indexes are below it).
	Size int
	// TaskCPUs returns the CPUs local task i runs on.
	TaskCPUs func(local int) []int
	// GPUCores returns the CPUs close to a GPU (gres.conf Cores=, or
	// what NVML reports); none means the GPU is close to every CPU.
	GPUCores func(gpu int) []int
}

// Task returns the GPUs (node indexes, ascending) local task i may use
// under b, as slurmstepd's _get_usable_gres chooses them, and the error
// slurmstepd prints when the request selects none of the step's GPUs (the
// task then gets the first one). Default and none give all of Alloc.
func (b GPUBind) Task(n BindNode, local int) ([]int, string) {
	size := n.Size
	for _, g := range n.Alloc {
		size = max(size, g+1)
	}
	alloc := make([]bool, size)
	for _, g := range n.Alloc {
		if g >= 0 {
			alloc[g] = true
		}
	}
	var usable []bool
	switch b.Mode {
	case BindDefault, BindNone:
		usable = alloc
	case BindMap, BindMask:
		usable = b.mapOrMask(local, size)
		for i := range usable {
			usable[i] = usable[i] && alloc[i]
		}
	case BindClosest:
		usable = closest(n, alloc, n.cpus(local))
	case BindPerTask:
		usable = perTask(n, alloc, b.N, local)
	case BindSingle:
		usable = single(n, alloc, b.N, local)
	}
	out := indexes(usable)
	if len(out) == 0 && len(n.Alloc) > 0 {
		first := indexes(alloc)[:1]
		return first, fmt.Sprintf("Bind request gres/gpu:%s does not specify any devices within the allocation for task %d. Binding to the first device in the allocation instead.", b.Text, local)
	}
	return out, ""
}

func (n BindNode) cpus(local int) []int {
	if n.TaskCPUs == nil {
		return nil
	}
	return n.TaskCPUs(local)
}

func (n BindNode) cores(gpu int) []int {
	if n.GPUCores == nil {
		return nil
	}
	return n.GPUCores(gpu)
}

// mapOrMask picks task local's entry: the list repeats for tasks past it.
func (b GPUBind) mapOrMask(local, size int) []bool {
	usable := make([]bool, size)
	total := 0
	for _, e := range b.List {
		total += e.Count
	}
	if total == 0 {
		return usable
	}
	pos := local % total
	for _, e := range b.List {
		if pos >= e.Count {
			pos -= e.Count
			continue
		}
		if b.Mode == BindMap {
			if e.Value < uint64(size) {
				usable[e.Value] = true
			}
		} else {
			for i := 0; i < size && i < 63; i++ {
				usable[i] = e.Value>>i&1 == 1
			}
		}
		break
	}
	return usable
}

// closest is the GPUs of avail close to cpus: those whose cores overlap
// them, and those with no known cores.
func closest(n BindNode, avail []bool, cpus []int) []bool {
	out := make([]bool, len(avail))
	for g, ok := range avail {
		if !ok {
			continue
		}
		cores := n.cores(g)
		out[g] = len(cores) == 0 || len(cpus) == 0 || overlap(cores, cpus)
	}
	return out
}

// perTask gives each task, in local order, n GPUs of those the tasks
// before it left: first the ones close to it, then any.
func perTask(node BindNode, alloc []bool, n, local int) []bool {
	avail := slices.Clone(alloc)
	usable := make([]bool, len(alloc))
	for i := 0; i <= local; i++ {
		need := n
		take := func(from []bool) {
			for g := 0; need > 0 && g < len(from); g++ {
				if from[g] && avail[g] {
					need--
					avail[g] = false
					if i == local {
						usable[g] = true
					}
				}
			}
		}
		take(closest(node, avail, node.cpus(i)))
		take(avail)
		if need > 0 {
			// Slurm logs "Not enough gres to bind N per task" and
			// stops there.
			break
		}
	}
	return usable
}

// single shares each GPU between at most perGPU tasks, each task taking
// the GPU whose cores hold all its CPUs, else one whose cores overlap
// them, else the first with room (_assign_gres_to_task).
func single(node BindNode, alloc []bool, perGPU, local int) []bool {
	ids := indexes(alloc)
	if len(ids) <= 1 || perGPU <= 0 {
		return slices.Clone(alloc)
	}
	room := make([]int, len(alloc))
	for _, g := range ids {
		room[g] = perGPU
	}
	pick := -1
	for i := 0; i <= local; i++ {
		cpus := node.cpus(i)
		best, overlapped := -1, false
		for g := range alloc {
			if room[g] == 0 {
				continue
			}
			if cores := node.cores(g); len(cores) > 0 {
				if len(cpus) > 0 && subset(cpus, cores) {
					best = g
					break
				}
				if !overlapped && overlap(cores, cpus) {
					best, overlapped = g, true
					continue
				}
			}
			if best == -1 {
				best = g
			}
		}
		if best >= 0 {
			room[best]--
		}
		pick = best
	}
	usable := make([]bool, len(alloc))
	if pick < 0 {
		// No room left: block distribution, as Slurm falls back to.
		pick = ids[local%len(ids)]
	}
	usable[pick] = true
	return usable
}

func indexes(set []bool) []int {
	var out []int
	for i, ok := range set {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

func overlap(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

func subset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// HexMask writes GPU indexes as Slurm's bit_fmt_hexmask_trim does
// ("0x5" for 0 and 2), for the verbose gpu-bind line.
func HexMask(ids []int) string {
	if len(ids) == 0 {
		return "0x0"
	}
	top := slices.Max(ids)
	digits := make([]byte, top/4+1)
	for _, id := range ids {
		if id >= 0 {
			digits[id/4] |= 1 << (id % 4)
		}
	}
	var b strings.Builder
	b.WriteString("0x")
	for i := len(digits) - 1; i >= 0; i-- {
		b.WriteByte("0123456789ABCDEF"[digits[i]])
	}
	return b.String()
}
