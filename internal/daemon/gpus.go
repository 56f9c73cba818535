package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/gres"
	gresconf "github.com/droverhq/drover/gres/conf"
	"github.com/droverhq/drover/gres/discovery"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"
)

// nodeGPUs finds the node's GPUs as slurmd does: gres.conf lines, or NVML
// detection (AutoDetect=nvml) through the drover-gres-nvml helper, which
// uses go-nvml's mock machine when the setting nvml-mock names one.
// Without gres.conf, the node's Gres= in slurm.conf gives untyped GPUs.
func nodeGPUs(ctx context.Context, v *viper.Viper, sc *slurmconf.Config, confPath, name string, logger *slog.Logger) ([]nodeproto.GPU, string, error) {
	gresPath := filepath.Join(confDir(confPath), "gres.conf")
	gc, err := gresconf.Load(gresPath)
	if errors.Is(err, os.ErrNotExist) {
		return fromSlurmConf(sc, name)
	}
	if err != nil {
		return nil, "", err
	}
	nc := gc.ForNode(name)
	if nc.AutoDetect == gresconf.AutoDetectNVML || nc.AutoDetect == gresconf.AutoDetectNVIDIA {
		bin := v.GetString("gres-nvml")
		if bin == "" {
			bin = helperPath("drover-gres-nvml")
		}
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		rep, err := discovery.Run(dctx, bin, v.GetString("nvml-mock"))
		if err != nil {
			return nil, "", fmt.Errorf("GPU discovery (AutoDetect=nvml): %w", err)
		}
		out := make([]nodeproto.GPU, 0, len(rep.Devices))
		for _, d := range rep.Devices {
			out = append(out, nodeproto.GPU{Index: d.Index, Type: d.Type, Minor: d.Minor, File: d.File, UUID: d.UUID, Cores: d.Cores})
		}
		logger.Info("GPUs detected", "source", rep.Source, "count", len(out))
		return out, rep.Source, nil
	}
	var out []nodeproto.GPU
	for _, l := range nc.Lines {
		if l.Name != "gpu" {
			continue
		}
		for i := uint64(0); i < l.Count; i++ {
			g := nodeproto.GPU{Index: len(out), Type: l.Type, Minor: len(out), Cores: l.Cores}
			if int(i) < len(l.Files) {
				g.File = l.Files[i]
				g.Minor = minorOf(g.File, g.Minor)
			}
			out = append(out, g)
		}
	}
	return out, "gres.conf", nil
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
