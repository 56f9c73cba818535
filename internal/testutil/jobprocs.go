// Package testutil holds what the end-to-end tests and the benchmarks
// share about the clusters of real processes they start.
package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// KillJobProcesses ends the job processes a cluster left behind. They
// outlive their node daemon, as slurmstepd's do, so they are found by the
// SLURM_CONF in their environment.
func KillJobProcesses(conf string) {
	marker := []byte("SLURM_CONF=" + conf + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
