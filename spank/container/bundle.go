package container

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// controlDevices are the NVIDIA files every GPU task needs besides its
// GPUs' own, passed through when the host has them.
var controlDevices = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}

// Task is one task's container.
type Task struct {
	Request  *Request
	Image    Image
	Argv     []string
	Env      []string
	Cwd      string // the step's folder on the host
	UID, GID uint32
	Hostname string
	// Devices are the step's GRES device files; Cgroup the cgroup the
	// container's goes under ("" : the runtime's default).
	Devices []string
	Cgroup  string
	TaskID  int
}

// Spec builds the task's OCI runtime configuration.
func Spec(t Task) (*specs.Spec, error) {
	r := t.Request
	home := ""
	var gids []uint32
	if u, err := user.LookupId(strconv.FormatUint(uint64(t.UID), 10)); err == nil {
		home = u.HomeDir
		if ids, err := u.GroupIds(); err == nil {
			for _, g := range ids {
				if n, err := strconv.ParseUint(g, 10, 32); err == nil && uint32(n) != t.GID {
					gids = append(gids, uint32(n))
				}
			}
		}
	}
	s := &specs.Spec{
		Version:  specs.Version,
		Hostname: t.Hostname,
		Root:     &specs.Root{Path: t.Image.Rootfs, Readonly: t.Image.ReadOnly},
		Process: &specs.Process{
			User:            specs.User{UID: t.UID, GID: t.GID, AdditionalGids: gids},
			Args:            t.Argv,
			Env:             containerEnv(imageEnv(t.Image.Rootfs), t.Env, r.HostEnv),
			NoNewPrivileges: true,
			Rlimits:         []specs.POSIXRlimit{},
		},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
			// The host's shared memory and IPC: NCCL and MPI move data
			// between the tasks of a node there.
			{Destination: "/dev/shm", Type: "bind", Source: "/dev/shm", Options: []string{"rbind", "nosuid", "nodev"}},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{{Type: specs.MountNamespace}, {Type: specs.UTSNamespace}},
			Resources:  &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}}},
			MaskedPaths: []string{"/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
				"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"},
			ReadonlyPaths: []string{"/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
		},
	}
	if t.Cgroup != "" {
		s.Linux.CgroupsPath = t.Cgroup + "/task_" + strconv.Itoa(t.TaskID)
	}
	if t.Image.ReadOnly {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}})
	}
	for _, f := range []string{"/etc/hosts", "/etc/resolv.conf"} {
		if exists(f) && (!t.Image.ReadOnly || exists(filepath.Join(t.Image.Rootfs, f))) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: f, Type: "bind", Source: f, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
		}
	}
	mounted := []string{}
	if home != "" && !r.NoMountHome && exists(home) && (!t.Image.ReadOnly || exists(filepath.Join(t.Image.Rootfs, home))) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: home, Type: "bind", Source: home, Options: []string{"rbind", "nosuid", "nodev"}})
		mounted = append(mounted, home)
	}
	for _, m := range r.Mounts {
		if !exists(m.Source) {
			return nil, fmt.Errorf("--container-mounts: %s: no such file or directory", m.Source)
		}
		if t.Image.ReadOnly && !exists(filepath.Join(t.Image.Rootfs, m.Destination)) {
			return nil, fmt.Errorf("--container-mounts: %s does not exist in the image, a directory used read-only", m.Destination)
		}
		opts := []string{"rbind", "nosuid", "nodev"}
		if m.ReadOnly {
			opts = append(opts, "ro")
		}
		s.Mounts = append(s.Mounts, specs.Mount{Destination: m.Destination, Type: "bind", Source: m.Source, Options: opts})
		mounted = append(mounted, m.Destination)
	}
	s.Process.Cwd = "/"
	switch {
	case r.Workdir != "":
		s.Process.Cwd = r.Workdir
	case slices.ContainsFunc(mounted, func(m string) bool { return t.Cwd == m || strings.HasPrefix(t.Cwd, m+"/") }):
		// The step's folder is there too.
		s.Process.Cwd = t.Cwd
	}
	devs := slices.Clone(t.Devices)
	if len(devs) > 0 {
		for _, c := range controlDevices {
			if exists(c) {
				devs = append(devs, c)
			}
		}
	}
	for _, path := range devs {
		d, err := deviceOf(path)
		if err != nil {
			return nil, err
		}
		s.Linux.Devices = append(s.Linux.Devices, d)
		major, minor := d.Major, d.Minor
		s.Linux.Resources.Devices = append(s.Linux.Resources.Devices, specs.LinuxDeviceCgroup{Allow: true, Type: d.Type, Major: &major, Minor: &minor, Access: "rwm"})
	}
	return s, nil
}

// containerEnv is the task's environment inside the container: the
// image's variables win over the host's, except those named by
// --container-env, as pyxis does.
func containerEnv(image, host []string, hostWins []string) []string {
	out := slices.Clone(host)
	for _, kv := range image {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(hostWins, k) {
			continue
		}
		out = slices.DeleteFunc(out, func(h string) bool { return strings.HasPrefix(h, k+"=") })
		out = append(out, kv)
	}
	return out
}

// deviceOf describes a device node for the runtime to create.
func deviceOf(path string) (specs.LinuxDevice, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return specs.LinuxDevice{}, fmt.Errorf("device %s: %w", path, err)
	}
	typ := "c"
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
	case unix.S_IFBLK:
		typ = "b"
	default:
		return specs.LinuxDevice{}, fmt.Errorf("device %s: not a device node", path)
	}
	mode := os.FileMode(st.Mode & 0o777)
	uid, gid := st.Uid, st.Gid
	return specs.LinuxDevice{Path: path, Type: typ, Major: int64(unix.Major(st.Rdev)), Minor: int64(unix.Minor(st.Rdev)),
		FileMode: &mode, UID: &uid, GID: &gid}, nil
}

// WriteBundle writes the task's config.json into dir.
func WriteBundle(dir string, s *specs.Spec) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	b, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
