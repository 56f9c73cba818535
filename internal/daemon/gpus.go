package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/gres"
	gresconf "github.com/droverhq/drover/gres/conf"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/plugins/host"
)

// nodeGPUs finds the node's GPUs as slurmd does: gres.conf lines, or NVML
// detection (AutoDetect=nvml) through the GPU plugin drover-gres-nvml,
// which then stays running for the node's steps and GPU health. The
// setting gres-nvml-args gives the plugin's arguments; nvml-mock=NAME is
// short for its mock=NAME. Without gres.conf, the node's Gres= in
// slurm.conf gives untyped GPUs.
func nodeGPUs(ctx context.Context, v *viper.Viper, sc *slurmconf.Config, confPath, name string, logger *slog.Logger) ([]nodeproto.GPU, string, *host.Gres, error) {
	gresPath := filepath.Join(confDir(confPath), "gres.conf")
	gc, err := gresconf.Load(gresPath)
	if errors.Is(err, os.ErrNotExist) {
		gpus, source, err := fromSlurmConf(sc, name)
		return gpus, source, nil, err
	}
	if err != nil {
		return nil, "", nil, err
	}
	nc := gc.ForNode(name)
	if nc.AutoDetect == gresconf.AutoDetectNVML || nc.AutoDetect == gresconf.AutoDetectNVIDIA {
		bin := v.GetString("gres-nvml")
		if bin == "" {
			bin = helperPath("drover-gres-nvml")
		}
		args := strings.Fields(v.GetString("gres-nvml-args"))
		if m := v.GetString("nvml-mock"); m != "" {
			args = append([]string{"mock=" + m}, args...)
			if n := sc.Node(name); n != nil && n.CPUs > 0 && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "mock_cpus=") }) {
				// The mock machine's CPUs are the node's, so that its
				// GPUs are near CPUs the node has.
				args = append(args, "mock_cpus="+strconv.Itoa(int(n.CPUs)))
			}
		}
		p := host.OpenGres(host.Spec{Path: bin, Args: args, Name: "gres/gpu", Timeout: 30 * time.Second, Logger: logger}, name)
		rep, err := p.Discover(ctx)
		if err != nil {
			p.Close()
			return nil, "", nil, fmt.Errorf("GPU discovery (AutoDetect=nvml): %w", err)
		}
		out := make([]nodeproto.GPU, 0, len(rep.Devices))
		for _, d := range rep.Devices {
			out = append(out, nodeproto.GPU{Index: d.Index, Type: d.Type, Minor: d.Minor, File: d.File, UUID: d.UUID, Cores: d.Cores, Links: d.Links})
		}
		if len(rep.Lost) > 0 {
			logger.Error("GPUs lost, not reported", "indices", rep.Lost)
		}
		logger.Info("GPUs detected", "source", rep.Source, "count", len(out))
		return out, rep.Source, p, nil
	}
	var out []nodeproto.GPU
	for _, l := range nc.Lines {
		if l.Name != "gpu" {
			continue
		}
		for i := uint64(0); i < l.Count; i++ {
			g := nodeproto.GPU{Index: len(out), Type: l.Type, Minor: len(out), Cores: l.Cores, Links: l.Links}
			if int(i) < len(l.Files) {
				g.File = l.Files[i]
				g.Minor = minorOf(g.File, g.Minor)
			}
			out = append(out, g)
		}
	}
	return out, "gres.conf", nil, nil
}

func fromSlurmConf(sc *slurmconf.Config, name string) ([]nodeproto.GPU, string, error) {
	n := sc.Node(name)
	var out []nodeproto.GPU
	for _, s := range n.Gres {
		parsed, err := gres.ParseNodeGres(s)
		if err != nil {
			return nil, "", fmt.Errorf("node %s Gres=%s: %w", name, s, err)
		}
		for _, g := range parsed {
			if g.Name != "gpu" {
				continue
			}
			for i := uint64(0); i < g.Count; i++ {
				out = append(out, nodeproto.GPU{Index: len(out), Type: g.Type, Minor: len(out)})
			}
		}
	}
	return out, "slurm.conf", nil
}

var trailingNumber = regexp.MustCompile(`(\d+)$`)

func minorOf(file string, fallback int) int {
	if m := trailingNumber.FindString(file); m != "" {
		if n, err := strconv.Atoi(m); err == nil {
			return n
		}
	}
	return fallback
}

// helperPath finds a helper binary next to the running drover.
func helperPath(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return name
	}
	return filepath.Join(filepath.Dir(exe), name)
}
