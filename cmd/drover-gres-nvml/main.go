//go:build cgo

// Command drover-gres-nvml discovers NVIDIA GPUs through NVML for the drover
// node daemon, which stays pure Go and runs this helper instead of linking
// NVML:
//
//	drover-gres-nvml discover [--mock=dgxa100|dgxb200|dgxh100|dgxh200]
//
// prints a gres/discovery.Report as JSON on stdout. Without --mock it loads
// libnvidia-ml.so.1; when that library is missing it says so on stderr and
// exits 1. Usage errors exit 2.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/droverhq/drover/gres/discovery"
	gresnvml "github.com/droverhq/drover/gres/nvml"
)

const prog = "drover-gres-nvml"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command, returning the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintf(stderr, "usage: %s discover [--mock=%s]\n", prog, strings.Join(gresnvml.MockNames(), "|"))
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
	fs := flag.NewFlagSet(prog+" discover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usage
	mock := fs.String("mock", "", "use go-nvml's mock of this DGX system instead of the real NVML library")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", prog, fs.Arg(0))
		usage()
		return 2
	}
	if *mock != "" && !slices.Contains(gresnvml.MockNames(), *mock) {
		fmt.Fprintf(stderr, "%s: unknown mock %q\n", prog, *mock)
		usage()
		return 2
	}
	rep, err := discover(*mock)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	if err := rep.Write(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	return 0
}

// discover reads the devices from the named mock, or from the real NVML
// library when mock is empty.
func discover(mock string) (*discovery.Report, error) {
	var (
		lib    gonvml.Interface
		source string
	)
	if mock != "" {
		m, err := gresnvml.NewMock(mock)
		if err != nil {
			return nil, err
		}
		lib, source = m, discovery.MockSource(mock)
	} else {
		lib, source = gonvml.New(), discovery.SourceNVML
	}
	switch ret := lib.Init(); ret {
	case gonvml.SUCCESS:
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, errors.New("NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed?")
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return nil, errors.New("nvmlInit: the NVIDIA kernel driver is not loaded")
	default:
		return nil, fmt.Errorf("nvmlInit: %v", ret)
	}
	defer lib.Shutdown()
	devices, err := gresnvml.Discover(lib)
	if err != nil {
		return nil, err
	}
	return &discovery.Report{Source: source, Devices: devices}, nil
}
