package container

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

// Config is the plugin's configuration, from its plugstack.conf
// arguments: runtime=runc|crun, or oci_conf=PATH for Slurm's oci.conf.
type Config struct {
	Runtime Runtime
}

// ParseArgs reads the plugin's arguments.
func ParseArgs(args []string) (Config, error) {
	name, ociConf := "", ""
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		switch {
		case !ok:
			return Config{}, fmt.Errorf("argument %q: want key=value", a)
		case k == "runtime":
			name = v
		case k == "oci_conf":
			ociConf = v
		default:
			return Config{}, fmt.Errorf("unknown argument %q", k)
		}
	}
	if ociConf != "" {
		rt, err := LoadOCIConf(ociConf)
		return Config{Runtime: rt}, err
	}
	rt, err := DefaultRuntime(name)
	return Config{Runtime: rt}, err
}

// configs caches ParseArgs by argument list: every task's stages need the
// configuration, and reading oci.conf or looking for the runtime program
// each time was I/O on every task's start. A changed oci.conf is read
// when the plugin starts again.
var configs sync.Map // string -> Config

// config is ParseArgs of c's arguments, once per argument list.
func config(c *sdk.Context) (Config, error) {
	key := strings.Join(c.Args, "\x00")
	if v, ok := configs.Load(key); ok {
		return v.(Config), nil
	}
	cfg, err := ParseArgs(c.Args)
	if err != nil {
		return Config{}, err
	}
	configs.Store(key, cfg)
	return cfg, nil
}

// Plugin returns the plugin's SPANK implementation.
func Plugin() *sdk.Spank {
	return &sdk.Spank{
		Options:         Options,
		OnlyWithOptions: true,
		InitPostOpt:     initPostOpt,
		UserInit:        userInit,
		TaskInit:        taskInit,
		TaskExit:        taskExit,
		Exit:            exit,
	}
}

// request reads the step's container options; nil when it runs none.
func request(c *sdk.Context) (*Request, error) {
	r, err := ParseRequest(c.Options)
	if err != nil || !r.Wanted() {
		return nil, err
	}
	return r, nil
}

// initPostOpt checks the options where they are given (sbatch, srun,
// salloc), so that a mistake stops the command rather than its tasks.
func initPostOpt(c *sdk.Context) error {
	if c.Context == protocol.ContextRemote {
		return nil
	}
	_, err := request(c)
	return err
}

func jobDir(c *sdk.Context) string {
	return filepath.Join(c.SpoolDir, "containers", "job_"+strconv.FormatUint(uint64(c.JobID), 10))
}

// containerDir is where the step's image is unpacked: per name for the
// whole job, else per step.
func containerDir(c *sdk.Context, r *Request) string {
	if r.Name != "" {
		return filepath.Join(jobDir(c), "name_"+r.Name)
	}
	return filepath.Join(jobDir(c), "step_"+strconv.FormatUint(uint64(c.StepID), 10))
}

func bundleDir(c *sdk.Context) string {
	return filepath.Join(jobDir(c), "step_"+strconv.FormatUint(uint64(c.StepID), 10), "task_"+strconv.Itoa(c.TaskID))
}

// userInit prepares the step's image on the node, once for its tasks.
func userInit(c *sdk.Context) error {
	if c.Context != protocol.ContextRemote || c.StepID == protocol.BatchStepID || c.SpoolDir == "" {
		return nil
	}
	r, err := request(c)
	if err != nil || r == nil {
		return err
	}
	start := time.Now()
	img, err := Prepare(r.Image, containerDir(c, r))
	if err != nil {
		return err
	}
	sdk.Logger().Debug("container image ready", "job", c.JobID, "step", c.StepID, "rootfs", img.Rootfs, "took", time.Since(start))
	return nil
}

// taskInit writes the task's bundle and has the node daemon start the
// task through the runtime.
func taskInit(c *sdk.Context) error {
	if c.Context != protocol.ContextRemote || c.StepID == protocol.BatchStepID || c.SpoolDir == "" {
		return nil
	}
	r, err := request(c)
	if err != nil || r == nil {
		return err
	}
	cfg, err := config(c)
	if err != nil {
		return err
	}
	img, err := Prepare(r.Image, containerDir(c, r))
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	spec, err := Spec(Task{
		Request: r, Image: img, Argv: c.Argv, Env: c.Env, Cwd: c.Cwd,
		UID: c.UID, GID: c.GID, Hostname: host, Devices: c.Devices, Cgroup: c.Cgroup, TaskID: c.TaskID,
	})
	if err != nil {
		return err
	}
	dir := bundleDir(c)
	if err := WriteBundle(dir, spec); err != nil {
		return err
	}
	cmd, err := Expand(cfg.Runtime.Run, values(c, dir, img.Rootfs))
	if err != nil {
		return fmt.Errorf("RunTimeRun: %w", err)
	}
	c.Exec("/bin/sh", "-c", "exec "+cmd)
	return nil
}

// taskExit deletes the task's container (RunTimeDelete) and bundle.
func taskExit(c *sdk.Context) error {
	if c.Context != protocol.ContextRemote || c.StepID == protocol.BatchStepID || c.SpoolDir == "" {
		return nil
	}
	r, err := request(c)
	if err != nil || r == nil {
		return err
	}
	cfg, err := config(c)
	if err != nil {
		return err
	}
	dir := bundleDir(c)
	if cfg.Runtime.Delete != "" && cfg.Runtime.Leftover(c.SpoolDir, c.JobID, c.StepID, c.TaskID) {
		cmd, err := Expand(cfg.Runtime.Delete, values(c, dir, ""))
		if err != nil {
			return fmt.Errorf("RunTimeDelete: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "/bin/sh", "-c", cmd).CombinedOutput(); err != nil {
			sdk.Logger().Debug("container delete", "cmd", cmd, "err", err, "out", string(out))
		}
	}
	return os.RemoveAll(dir)
}

// exit removes the step's bundles and unnamed image; the batch script's
// exit, at the job's end, removes the job's named containers too.
func exit(c *sdk.Context) error {
	if c.Context != protocol.ContextRemote || c.SpoolDir == "" {
		return nil
	}
	if c.StepID == protocol.BatchStepID {
		return os.RemoveAll(jobDir(c))
	}
	r, err := request(c)
	if err != nil || r == nil {
		return err
	}
	removeCgroups(c.Cgroup)
	return os.RemoveAll(filepath.Join(jobDir(c), "step_"+strconv.FormatUint(uint64(c.StepID), 10)))
}

// removeCgroups removes the step's folders that the runtime made in the
// cgroup hierarchies the node daemon does not use (on cgroup v1 the
// runtime makes its cgroup in every hierarchy); the daemon removes its
// own.
func removeCgroups(cgroup string) {
	if cgroup == "" {
		return
	}
	hierarchies, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hierarchies {
		dir := filepath.Join("/sys/fs/cgroup", h.Name(), cgroup)
		tasks, _ := filepath.Glob(filepath.Join(dir, "task_*"))
		for _, t := range tasks {
			_ = os.Remove(t)
		}
		_ = os.Remove(dir)
	}
}

func values(c *sdk.Context, bundle, rootfs string) Values {
	name := strconv.FormatUint(uint64(c.UID), 10)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	node, _ := os.Hostname()
	if names, err := hostlist.Expand(c.NodeList); err == nil && c.NodeID < len(names) {
		node = names[c.NodeID]
	}
	return Values{Bundle: bundle, Rootfs: rootfs, SpoolDir: c.SpoolDir, Node: node, User: name,
		JobID: c.JobID, StepID: c.StepID, UID: c.UID, TaskID: c.TaskID}
}
