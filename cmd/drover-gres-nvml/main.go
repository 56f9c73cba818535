//go:build cgo

// Command drover-gres-nvml is Drover's GPU GRES plugin: the node daemon
// starts it (gres.conf AutoDetect=nvml) to discover the node's NVIDIA GPUs
// through NVML, set up steps on them and watch their health; see
// gres/nvml. Run by hand,
//
//	drover-gres-nvml discover [ARG...]
//
// prints what it finds as JSON (a gres/discovery.Report), with the
// plugin's key=value arguments (mock=dgxa100 uses go-nvml's mock of that
// machine). Without a mock it loads libnvidia-ml.so.1; when that library
// is missing it says so on stderr and exits 1. Usage errors exit 2.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/droverhq/drover/gres/discovery"
	gresnvml "github.com/droverhq/drover/gres/nvml"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

const prog = "drover-gres-nvml"

func main() {
	if os.Getenv(protocol.MagicCookieKey) != "" {
		sdk.ServeGres(gresnvml.NewPlugin().Gres())
		return
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command run by hand, returning the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintf(stderr, "usage: %s discover [mock=%s] [mock_cpus=N] [mock_events=FILE]\n", prog, strings.Join(gresnvml.MockNames(), "|"))
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "discover":
	case "-h", "-help", "--help", "help":
		usage()
		return 0
	default:
		fmt.Fprintf(stderr, "%s: unknown command %q\n", prog, args[0])
		usage()
		return 2
	}
	cfg, err := gresnvml.ParseArgs(args[1:])
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		usage()
		return 2
	}
	lib, err := gresnvml.Open(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	defer lib.Shutdown()
	devices, lost, err := gresnvml.Discover(lib)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	for _, i := range lost {
		fmt.Fprintf(stderr, "%s: GPU %d is lost (ERROR_GPU_IS_LOST), not listed\n", prog, i)
	}
	rep := &discovery.Report{Source: cfg.Source(), Devices: devices, Lost: lost}
	if err := rep.Write(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	return 0
}
