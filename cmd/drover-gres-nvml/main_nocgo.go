//go:build !cgo

// Command drover-gres-nvml needs cgo to load NVML; this build without cgo
// only says so, so that CGO_ENABLED=0 builds of the whole module succeed.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "drover-gres-nvml: built without cgo; rebuild with CGO_ENABLED=1 to discover GPUs through NVML")
	os.Exit(1)
}
