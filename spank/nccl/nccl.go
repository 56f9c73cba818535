// Package nccl is the NCCL/PyTorch launch plugin shipped with Drover (the
// drover-spank-nccl program): for every task of a step it sets what
// torch.distributed's env:// rendezvous and NCCL read, derived from the
// step, without replacing anything the user set.
//
//	MASTER_ADDR          the step's first node's address (slurm.conf's
//	                     NodeAddr, which is its name when not set)
//	MASTER_PORT          from the job and step ids, in port_range
//	WORLD_SIZE, RANK     the step's tasks and this task's rank
//	LOCAL_RANK, LOCAL_WORLD_SIZE   within the node
//	NODE_RANK, GROUP_RANK          the node's index in the step
//	NCCL_DEBUG           --nccl-debug, or the nccl_debug argument
//	NCCL_SOCKET_IFNAME   the interface that reaches MASTER_ADDR
//	NCCL_IB_HCA          the InfiniBand devices, when there are any
//	NCCL_ASYNC_ERROR_HANDLING, TORCH_NCCL_ASYNC_ERROR_HANDLING  1
//
// Arguments in plugstack.conf: port_range=LO-HI (default 29500-30499),
// nccl_debug=LEVEL, socket_ifname=NAME|auto|none (default auto).
package nccl

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

// Config is the plugin's arguments.
type Config struct {
	PortLo, PortHi int
	NCCLDebug      string
	// SocketIfname is an interface name, "auto" or "none".
	SocketIfname string
	// SysClassInfiniband is where InfiniBand devices are listed.
	SysClassInfiniband string
}

// DefaultConfig is the configuration without arguments.
func DefaultConfig() Config {
	return Config{PortLo: 29500, PortHi: 30499, SocketIfname: "auto", SysClassInfiniband: "/sys/class/infiniband"}
}

// ParseArgs reads the plugstack.conf arguments.
func ParseArgs(args []string) (Config, error) {
	c := DefaultConfig()
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		switch {
		case !ok:
			return c, fmt.Errorf("argument %q: want key=value", a)
		case k == "port_range":
			lo, hi, ok := strings.Cut(v, "-")
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if !ok || err1 != nil || err2 != nil || l < 1 || h > 65535 || l > h {
				return c, fmt.Errorf("argument %q: want port_range=LO-HI within 1-65535", a)
			}
			c.PortLo, c.PortHi = l, h
		case k == "nccl_debug":
			c.NCCLDebug = v
		case k == "socket_ifname":
			c.SocketIfname = v
		case k == "sysfs_infiniband":
			c.SysClassInfiniband = v
		default:
			return c, fmt.Errorf("unknown argument %q", a)
		}
	}
	return c, nil
}

// Options are the command-line options the plugin adds.
func Options([]string) []protocol.Option {
	return []protocol.Option{{Name: "nccl-debug", ArgInfo: "level", Usage: "set NCCL_DEBUG for the tasks (WARN, INFO, TRACE)", HasArg: true}}
}

// Port is MASTER_PORT for a step: the same for all its tasks, different
// for the steps of a job and for jobs close in number.
func (c Config) Port(jobID, stepID uint32) int {
	span := uint64(c.PortHi - c.PortLo + 1)
	return c.PortLo + int((uint64(jobID)*31+uint64(stepID))%span)
}

// TaskInit sets a task's variables.
func TaskInit(ctx *sdk.Context) error {
	c, err := ParseArgs(ctx.Args)
	if err != nil {
		return err
	}
	return c.TaskInit(ctx)
}

// TaskInit is the stage with this configuration. A batch script is not
// one of the ranks: its srun steps are, and variables set in the script
// would reach them as the user's own.
func (c Config) TaskInit(ctx *sdk.Context) error {
	if ctx.StepID == protocol.BatchStepID {
		return nil
	}
	nodes, err := hostlist.Expand(ctx.NodeList)
	if err != nil || len(nodes) == 0 {
		return fmt.Errorf("cannot read the step's nodes %q", ctx.NodeList)
	}
	// The address slurm.conf says the node is reached at: no name
	// lookup, which on a machine without DNS can stall for seconds.
	master := nodes[0]
	if len(ctx.NodeAddrs) > 0 && ctx.NodeAddrs[0] != "" {
		master = ctx.NodeAddrs[0]
	}
	set := func(name, value string) error { return ctx.Setenv(name, value, false) }
	vars := []struct{ name, value string }{
		{"MASTER_ADDR", master},
		{"MASTER_PORT", strconv.Itoa(c.Port(ctx.JobID, ctx.StepID))},
		{"WORLD_SIZE", strconv.Itoa(ctx.NTasks)},
		{"RANK", strconv.Itoa(ctx.TaskID)},
		{"LOCAL_RANK", strconv.Itoa(ctx.LocalTaskID)},
		{"LOCAL_WORLD_SIZE", strconv.Itoa(ctx.LocalTasks)},
		{"NODE_RANK", strconv.Itoa(ctx.NodeID)},
		{"GROUP_RANK", strconv.Itoa(ctx.NodeID)},
		{"NCCL_ASYNC_ERROR_HANDLING", "1"},
		{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
	}
	debug := c.NCCLDebug
	if v, ok := ctx.Option("nccl-debug"); ok && v != "" {
		debug = v
	}
	if debug != "" {
		vars = append(vars, struct{ name, value string }{"NCCL_DEBUG", debug})
	}
	switch c.SocketIfname {
	case "none":
	case "auto":
		if ifname, err := interfaceTo(master); err == nil {
			vars = append(vars, struct{ name, value string }{"NCCL_SOCKET_IFNAME", ifname})
		} else {
			sdk.Logger().Debug("no interface found for NCCL_SOCKET_IFNAME", "master", master, "err", err)
		}
	default:
		vars = append(vars, struct{ name, value string }{"NCCL_SOCKET_IFNAME", c.SocketIfname})
	}
	if hcas := infinibandDevices(c.SysClassInfiniband); len(hcas) > 0 {
		vars = append(vars, struct{ name, value string }{"NCCL_IB_HCA", strings.Join(hcas, ",")})
	}
	for _, v := range vars {
		if err := set(v.name, v.value); err != nil {
			return err
		}
	}
	return nil
}

// interfaceTo names the local interface packets to host leave from.
func interfaceTo(host string) (string, error) {
	addrs, err := net.LookupIP(host)
	if err != nil || len(addrs) == 0 {
		return "", fmt.Errorf("resolve %s: %w", host, err)
	}
	conn, err := net.Dial("udp", net.JoinHostPort(addrs[0].String(), "9"))
	if err != nil {
		return "", err
	}
	local := conn.LocalAddr().(*net.UDPAddr).IP
	conn.Close()
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, ifc := range ifaces {
		as, _ := ifc.Addrs()
		for _, a := range as {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.Equal(local) {
				return ifc.Name, nil
			}
		}
	}
	return "", errors.New("no interface holds " + local.String())
}

// infinibandDevices lists the HCAs under dir (/sys/class/infiniband).
func infinibandDevices(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Base(e.Name()))
	}
	slices.Sort(out)
	return out
}
