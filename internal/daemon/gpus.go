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
	"github.com/droverhq/drover/spank/plugconf"
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
		devices := checkDetected(rep.Devices, nc.Lines, logger)
		out := make([]nodeproto.GPU, 0, len(devices))
		for _, d := range devices {
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

// checkDetected holds detected GPUs against gres.conf's explicit gpu lines
// as slurmd does with AutoDetect: a device whose file a line names must
// match the line's Type, Cores and Links where the line gives them, and
// is left out with an error otherwise (so the node registers with fewer
// GPUs and is drained for it); a matching line's Type names the device.
// Devices no line names are kept as detected.
func checkDetected(devices []gres.Device, lines []gresconf.Line, logger *slog.Logger) []gres.Device {
	byFile := map[string]gresconf.Line{}
	for _, l := range lines {
		if l.Name != "gpu" {
			continue
		}
		for _, f := range l.Files {
			byFile[f] = l
		}
	}
	if len(byFile) == 0 {
		return devices
	}
	var out []gres.Device
	for _, d := range devices {
		l, ok := byFile[d.File]
		if !ok {
			out = append(out, d)
			continue
		}
		var why string
		switch {
		case l.Type != "" && !gres.TypeMatches(l.Type, gres.DetectedGPUType(d.Name)) && !strings.EqualFold(l.Type, d.Type):
			why = fmt.Sprintf("Type=%s but the device is %s", l.Type, d.Name)
		case l.Cores != "" && d.Cores != "" && !sameIDs(l.Cores, d.Cores):
			why = fmt.Sprintf("Cores=%s but the device is near CPUs %s", l.Cores, d.Cores)
		case l.Links != "" && d.Links != "" && l.Links != d.Links:
			why = fmt.Sprintf("Links=%s but the device has %s", l.Links, d.Links)
		}
		if why != "" {
			logger.Error("gres.conf does not match the GPU found; GPU left out", "file", d.File, "uuid", d.UUID, "why", why)
			continue
		}
		if l.Type != "" {
			d.Type = l.Type
		}
		out = append(out, d)
	}
	return out
}

func sameIDs(a, b string) bool {
	x, err1 := gres.ParseIDList(a)
	y, err2 := gres.ParseIDList(b)
	return err1 == nil && err2 == nil && slices.Equal(x, y)
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

// helperPath finds a helper program shipped with drover: beside it or in
// the packages' libexec folder (plugconf.ShippedDirs); the first place
// when it is in neither, for the error to name.
func helperPath(name string) string {
	dirs := plugconf.ShippedDirs()
	if len(dirs) == 0 {
		return name
	}
	if p := plugconf.FindPlugin(name, strings.Join(dirs, ":")); p != name {
		return p
	}
	return filepath.Join(dirs[0], name)
}
