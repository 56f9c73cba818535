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
// SLURM_CONF in their environment, and by the other variables given
// ("SLURMD_NODENAME=n1": one node's).
func KillJobProcesses(conf string, vars ...string) {
	markers := [][]byte{[]byte("SLURM_CONF=" + conf + "\x00")}
	for _, v := range vars {
		markers = append(markers, []byte("\x00"+v+"\x00"))
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		env = append([]byte{0}, env...)
		all := true
		for _, m := range markers {
			all = all && bytes.Contains(env, m)
		}
		if all {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
