package container

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/droverhq/drover/plugins/protocol"
)

// Option names, as pyxis spells them.
const (
	OptImage       = "container-image"
	OptMounts      = "container-mounts"
	OptWorkdir     = "container-workdir"
	OptName        = "container-name"
	OptEnv         = "container-env"
	OptNoMountHome = "no-container-mount-home"
)

// Options are the options the plugin adds to sbatch, srun and salloc.
func Options([]string) []protocol.Option {
	return []protocol.Option{
		{Name: OptImage, ArgInfo: "PATH", HasArg: true, Usage: "[pyxis] the image to run the tasks in: a directory, a tar archive or a squashfs file"},
		{Name: OptMounts, ArgInfo: "SRC:DST[:FLAGS][,SRC:DST...]", HasArg: true, Usage: "[pyxis] bind mount[s] inside the container; FLAGS ro or rw"},
		{Name: OptWorkdir, ArgInfo: "PATH", HasArg: true, Usage: "[pyxis] working directory inside the container"},
		{Name: OptName, ArgInfo: "NAME", HasArg: true, Usage: "[pyxis] name the container, to use it again in the job's later steps"},
		{Name: OptEnv, ArgInfo: "NAME[,NAME...]", HasArg: true, Usage: "[pyxis] names of variables whose value from the host wins over the image's"},
		{Name: OptNoMountHome, Usage: "[pyxis] do not bind mount the user's home directory"},
	}
}

// Mount is one --container-mounts entry.
type Mount struct {
	Source, Destination string
	ReadOnly            bool
}

// Request is what a step asked for.
type Request struct {
	Image       string
	Name        string
	Workdir     string
	Mounts      []Mount
	HostEnv     []string
	NoMountHome bool
}

// Wanted reports whether the step runs in a container.
func (r *Request) Wanted() bool { return r.Image != "" || r.Name != "" }

// ParseRequest reads the plugin's options as the user gave them.
func ParseRequest(opts map[string]string) (*Request, error) {
	r := &Request{Image: opts[OptImage], Name: opts[OptName], Workdir: opts[OptWorkdir]}
	_, r.NoMountHome = opts[OptNoMountHome]
	if r.Image != "" && !filepath.IsAbs(r.Image) && !strings.HasPrefix(r.Image, ".") && strings.ContainsAny(r.Image, "#@") {
		return nil, fmt.Errorf("--container-image=%s: registry images are not supported; give a directory, a tar archive or a squashfs file", r.Image)
	}
	if r.Name != "" && (strings.ContainsAny(r.Name, "/\\\x00") || r.Name == "." || r.Name == "..") {
		return nil, fmt.Errorf("--container-name=%s: invalid name", r.Name)
	}
	if r.Workdir != "" && !filepath.IsAbs(r.Workdir) {
		return nil, fmt.Errorf("--container-workdir=%s: not an absolute path", r.Workdir)
	}
	var err error
	if r.Mounts, err = ParseMounts(opts[OptMounts]); err != nil {
		return nil, err
	}
	for _, n := range strings.Split(opts[OptEnv], ",") {
		if n = strings.TrimSpace(n); n != "" {
			r.HostEnv = append(r.HostEnv, n)
		}
	}
	return r, nil
}

// ParseMounts reads --container-mounts: SRC:DST[:FLAGS] entries separated
// by commas, FLAGS being ro or rw; SRC alone mounts a path at itself.
func ParseMounts(s string) ([]Mount, error) {
	var out []Mount
	for _, e := range strings.Split(s, ",") {
		if strings.TrimSpace(e) == "" {
			continue
		}
		parts := strings.Split(e, ":")
		if len(parts) > 3 {
			return nil, fmt.Errorf("--container-mounts: %q: want SRC:DST[:FLAGS]", e)
		}
		m := Mount{Source: parts[0], Destination: parts[0]}
		if len(parts) >= 2 {
			m.Destination = parts[1]
		}
		if len(parts) == 3 {
			for _, f := range strings.Split(parts[2], "+") {
				switch f {
				case "ro":
					m.ReadOnly = true
				case "rw", "":
				default:
					return nil, fmt.Errorf("--container-mounts: %q: unknown flag %q", e, f)
				}
			}
		}
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Destination) {
			return nil, fmt.Errorf("--container-mounts: %q: paths must be absolute", e)
		}
		out = append(out, m)
	}
	return out, nil
}

var errNoImage = errors.New("--container-name names no container of this job, and no --container-image was given")
