//go:build !cgo || !pmix

// Command drover-mpi-pmix needs cgo and Debian's libpmix to serve PMIx;
// this build without them only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "drover-mpi-pmix: built without libpmix; rebuild with CGO_ENABLED=1 -tags pmix and libpmix-dev installed to serve srun --mpi=pmix")
	os.Exit(1)
}
