// Package devcluster runs `drover dev`: a controller and node daemons on
// this machine, with a generated slurm.conf and the drop-in commands
// installed, so that a cluster to submit to needs one command.
package devcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/daemon"
)

// Options shape the dev cluster.
type Options struct {
	StateDir string
	Nodes    int
	CPUs     int
	GPUs     int
	// InstallShims links the commands; set by callers that have them.
	InstallShims func(dir string) error
}

// layout names the files under the state folder.
type layout struct {
	dir, etc, conf, gresConf, state, spool, logs, bin string
}

func layoutOf(dir string) layout {
	return layout{
		dir:      dir,
		etc:      filepath.Join(dir, "etc"),
		conf:     filepath.Join(dir, "etc", "slurm.conf"),
		gresConf: filepath.Join(dir, "etc", "gres.conf"),
		state:    filepath.Join(dir, "state"),
		spool:    filepath.Join(dir, "spool"),
		logs:     filepath.Join(dir, "log"),
		bin:      filepath.Join(dir, "bin"),
	}
}

func defaults(o *Options) error {
	if o.StateDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("no --state-dir and no home folder: %w", err)
		}
		o.StateDir = filepath.Join(home, ".drover", "dev")
	}
	abs, err := filepath.Abs(o.StateDir)
	if err != nil {
		return err
	}
	o.StateDir = abs
	if o.Nodes <= 0 {
		o.Nodes = 4
	}
	if o.CPUs <= 0 {
		o.CPUs = 8
	}
	if o.GPUs < 0 {
		o.GPUs = 0
	}
	return nil
}

// Prepare writes the configuration (keeping the ports of an earlier run)
// and installs the shims; it returns the environment lines to print.
func Prepare(o *Options) (string, error) {
	if err := defaults(o); err != nil {
		return "", err
	}
	l := layoutOf(o.StateDir)
	for _, d := range []string{l.etc, l.state, l.spool, l.logs, l.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", d, err)
		}
	}
	ctlPort, nodePorts, err := ports(l.conf, o.Nodes)
	if err != nil {
		return "", err
	}
	if err := writeConf(l, o, ctlPort, nodePorts); err != nil {
		return "", err
	}
	install := o.InstallShims
	if install == nil {
		install = installSelf
	}
	if err := install(l.bin); err != nil {
		return "", err
	}
	if err := linkConf(l); err != nil {
		return "", err
	}
	return envLines(l, ctlPort), nil
}

// linkConf names the cluster's slurm.conf beside its commands, so that a
// command run without SLURM_CONF (a tool that clears the SLURM_*
// variables before it submits) still reaches this cluster.
func linkConf(l layout) error {
	link := filepath.Join(l.bin, clienv.ShimConf)
	if target, err := os.Readlink(link); err == nil && target == l.conf {
		return nil
	}
	_ = os.Remove(link)
	if err := os.Symlink(l.conf, link); err != nil {
		return fmt.Errorf("link %s: %w", link, err)
	}
	return nil
}

func envLines(l layout, port int) string {
	return fmt.Sprintf("export PATH=%s:$PATH\nexport SLURM_CONF=%s\nexport DROVER_REST_URL=http://127.0.0.1:%d\n", l.bin, l.conf, port)
}

// EnvLines returns the environment lines of the dev cluster in
// o.StateDir without starting anything (drover dev --print-env). An
// existing configuration, maybe that of a cluster running in another
// shell, is read and left as it is, whatever the options say; only a
// state folder without one is prepared as Run would.
func EnvLines(o *Options) (string, error) {
	if err := defaults(o); err != nil {
		return "", err
	}
	l := layoutOf(o.StateDir)
	port, _ := confPorts(l.conf)
	if port == 0 {
		return Prepare(o)
	}
	if _, err := os.Stat(filepath.Join(l.bin, "sbatch")); err != nil {
		install := o.InstallShims
		if install == nil {
			install = installSelf
		}
		if err := os.MkdirAll(l.bin, 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", l.bin, err)
		}
		if err := install(l.bin); err != nil {
			return "", err
		}
	}
	if err := linkConf(l); err != nil {
		return "", err
	}
	return envLines(l, port), nil
}

// lock takes the state folder for this process, so that a second drover
// dev on the same folder fails before it rewrites the configuration of
// the running one. The lock goes with the process.
func lock(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, "dev.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another drover dev is running with state folder %s", dir)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// ports reuses the ports of an existing configuration, so that a second
// run serves the same addresses (DROVER_REST_URL stays valid even when
// --nodes changed); ports still missing are picked free.
func ports(conf string, nodes int) (int, []int, error) {
	ctl, np := confPorts(conf)
	if len(np) > nodes {
		np = np[:nodes]
	}
	need := nodes - len(np)
	if ctl == 0 {
		need++
	}
	if need == 0 {
		return ctl, np, nil
	}
	taken := map[int]bool{ctl: true}
	for _, p := range np {
		taken[p] = true
	}
	fresh, err := freePorts(need, taken)
	if err != nil {
		return 0, nil, err
	}
	if ctl == 0 {
		ctl, fresh = fresh[0], fresh[1:]
	}
	return ctl, append(np, fresh...), nil
}

// confPorts reads the controller port and the node ports, in node order,
// of a configuration written by drover dev (zero and none when absent).
func confPorts(conf string) (int, []int) {
	data, err := os.ReadFile(conf)
	if err != nil {
		return 0, nil
	}
	return parsePorts(data)
}

// parsePorts reads SlurmctldPort and the NodeName lines' Port= values.
func parsePorts(data []byte) (int, []int) {
	ctl := 0
	var np []int
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "SlurmctldPort="); ok {
			ctl, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		if strings.HasPrefix(line, "NodeName=") {
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "Port="); ok {
					if p, err := strconv.Atoi(v); err == nil && p > 0 {
						np = append(np, p)
					}
				}
			}
		}
	}
	if ctl < 0 {
		ctl = 0
	}
	return ctl, np
}

// freePorts picks n ports nothing listens on, avoiding those in taken
// (ports of the configuration that are free only because the cluster is
// not running).
func freePorts(n int, taken map[int]bool) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		if p := l.Addr().(*net.TCPAddr).Port; !taken[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

func writeConf(l layout, o *Options, ctlPort int, nodePorts []int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by drover dev. Edits are kept only for ports.\n")
	fmt.Fprintf(&b, "ClusterName=%s\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%d\n", clusterName(l.dir), ctlPort)
	fmt.Fprintf(&b, "StateSaveLocation=%s\nSlurmdSpoolDir=%s/%%n\n", l.state, l.spool)
	b.WriteString("SlurmdTimeout=30\nKillWait=5\nMinJobAge=300\nReturnToService=2\n")
	// auth/jwt, its key in StateSaveLocation: `scontrol token` works.
	b.WriteString("AuthAltTypes=auth/jwt\n")
	b.WriteString("SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\nDefMemPerCPU=1000\n")
	if o.GPUs > 0 {
		b.WriteString("GresTypes=gpu\n")
	}
	var names []string
	for i, p := range nodePorts {
		name := "n" + strconv.Itoa(i+1)
		names = append(names, name)
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=127.0.0.1 Port=%d CPUs=%d RealMemory=%d", name, p, o.CPUs, 2000*o.CPUs)
		if o.GPUs > 0 {
			fmt.Fprintf(&b, " Gres=gpu:%d", o.GPUs)
		}
		b.WriteString(" State=UNKNOWN\n")
	}
	all := "n[1-" + strconv.Itoa(len(names)) + "]"
	if len(names) == 1 {
		all = "n1"
	}
	fmt.Fprintf(&b, "PartitionName=gpu Nodes=%s Default=YES MaxTime=INFINITE State=UP\n", all)
	debug := "n[1-2]"
	if len(names) < 2 {
		debug = "n1"
	}
	fmt.Fprintf(&b, "PartitionName=debug Nodes=%s MaxTime=30:00 DefaultTime=10:00 State=UP\n", debug)
	if err := os.WriteFile(l.conf, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write slurm.conf: %w", err)
	}
	gres := ""
	if o.GPUs > 0 {
		if _, err := os.Stat(helper("drover-gres-nvml")); err == nil {
			// GPUs come from NVML; on a machine without GPUs the node
			// daemons use go-nvml's mock (see Run).
			gres = "AutoDetect=nvml\n"
		} else {
			gres = fmt.Sprintf("NodeName=%s Name=gpu File=/dev/nvidia[0-%d]\n", all, o.GPUs-1)
		}
	}
	if err := os.WriteFile(l.gresConf, []byte(gres), 0o644); err != nil {
		return fmt.Errorf("write gres.conf: %w", err)
	}
	// The NCCL/PyTorch launch plugin is on in the dev cluster, when it
	// was built beside drover (make build).
	plugstack := "# Launch hooks (docs/PLUGINS.md).\n"
	if nccl := helper("drover-spank-nccl"); fileExists(nccl) {
		plugstack += "optional " + nccl + "\n"
	}
	// Last, so that the tasks' containers get the NCCL variables.
	if ctr := helper("drover-spank-container"); fileExists(ctr) {
		plugstack += "optional " + ctr + " runtime=runc\n"
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(l.conf), "plugstack.conf"), []byte(plugstack), 0o644); err != nil {
		return fmt.Errorf("write plugstack.conf: %w", err)
	}
	// The cluster key signs job step credentials; a restarted dev
	// cluster keeps its own.
	if err := clusterkey.WriteKey(clusterkey.KeyPath(l.conf)); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("write the cluster key: %w", err)
	}
	// auth/jwt's key: random, kept across restarts like the cluster key.
	if err := os.MkdirAll(l.state, 0o755); err != nil {
		return fmt.Errorf("create the state folder: %w", err)
	}
	if err := clusterkey.WriteKey(filepath.Join(l.state, "jwt_hs256.key")); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("write the auth/jwt key: %w", err)
	}
	return nil
}

// clusterName is "dev" for the default state folder and "dev-" plus a
// digest of the folder for any other: the node daemons name their job
// cgroups after the cluster (drover/<cluster>/<node>), so two dev
// clusters running side by side (a test's next to a developer's) must
// not share a name, or the jobs of one could be killed by the other.
func clusterName(dir string) string {
	if home, err := os.UserHomeDir(); err == nil && dir == filepath.Join(home, ".drover", "dev") {
		return "dev"
	}
	sum := sha256.Sum256([]byte(dir))
	return "dev-" + hex.EncodeToString(sum[:4])
}

func helper(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return name
	}
	return filepath.Join(filepath.Dir(exe), name)
}

// installSelf links the running binary as every shim.
func installSelf(dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "install-shims", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("install shims: %v: %s", err, out)
	}
	return nil
}

// realGPUs reports whether this machine has NVIDIA GPUs.
func realGPUs() bool {
	_, err := os.Stat("/dev/nvidiactl")
	return err == nil
}

// Run prepares the cluster, prints the environment lines and runs the
// controller and node daemons until ctx ends.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if err := defaults(&o); err != nil {
		return err
	}
	lk, err := lock(o.StateDir)
	if err != nil {
		return err
	}
	defer lk.Close()
	lines, err := Prepare(&o)
	if err != nil {
		return err
	}
	l := layoutOf(o.StateDir)
	ctlLog, err := os.OpenFile(filepath.Join(l.logs, "controller.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer ctlLog.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, o.Nodes+1)
	ready := make(chan net.Addr, 1)
	v := daemon.Settings()
	v.Set("conf", l.conf)
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := daemon.RunController(ctx, v, daemon.Logger(ctlLog, "info"), func(a net.Addr) { ready <- a })
		if err != nil {
			errc <- fmt.Errorf("controller: %w", err)
		}
	}()
	select {
	case <-ready:
	case err := <-errc:
		return err
	}
	for i := 1; i <= o.Nodes; i++ {
		name := "n" + strconv.Itoa(i)
		logf, err := os.OpenFile(filepath.Join(l.logs, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer logf.Close()
		nv := viper.New()
		nv.Set("conf", l.conf)
		nv.Set("name", name)
		if !realGPUs() {
			nv.Set("nvml-mock", "dgxa100")
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := daemon.RunNode(ctx, nv, daemon.Logger(logf, "info")); err != nil && !errors.Is(err, context.Canceled) {
				errc <- fmt.Errorf("node %s: %w", name, err)
			}
		}()
	}
	fmt.Fprint(out, lines)
	noun := "nodes"
	if o.Nodes == 1 {
		noun = "node"
	}
	fmt.Fprintf(out, "# Drover dev cluster: %d %s, state and logs in %s. Ctrl-C stops it.\n", o.Nodes, noun, o.StateDir)
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	cancel()
	wg.Wait()
	return runErr
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
