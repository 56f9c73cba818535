package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mpiProgram sums the ranks with MPI_Allreduce; with an argument, the
// rank it names calls MPI_Abort with code 7 instead.
const mpiProgram = `#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
	int rank, size, sum = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1 && atoi(argv[1]) == rank)
		MPI_Abort(MPI_COMM_WORLD, 7);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d\n", rank, size, sum);
	MPI_Finalize();
	return 0;
}
`

// buildMPICH compiles mpiProgram with Debian's MPICH into dir.
func buildMPICH(t *testing.T, dir string) string {
	t.Helper()
	cc, err := exec.LookPath("mpicc.mpich")
	if err != nil {
		t.Skip("mpicc.mpich not installed (Debian's mpich and libmpich-dev; .ci/run installs them)")
	}
	src := filepath.Join(dir, "allreduce.c")
	must(t, os.WriteFile(src, []byte(mpiProgram), 0o644))
	bin := filepath.Join(dir, "allreduce")
	if out, err := exec.Command(cc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc.mpich: %v\n%s", err, out)
	}
	return bin
}

// ranks is out's lines in order, joined.
func ranks(out string) string { return strings.Join(sortedLines(out), "\n") }

// TestMPIPMI2: srun --mpi=pmi2 serves PMI to MPICH's tasks from the node
// daemons, which exchange what the ranks publish through srun at each
// fence: an allreduce over 4 ranks on 2 nodes, from srun and from a
// batch script; MpiDefault; an MPI_Abort ends the step; --mpi=list lists
// only what works and other types are refused as Slurm refuses them.
func TestMPIPMI2(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	bin := buildMPICH(t, c.WorkDir)
	want := "rank 0 of 4 sum 6\nrank 1 of 4 sum 6\nrank 2 of 4 sum 6\nrank 3 of 4 sum 6"
	r := c.Run("", "srun", "--mpi=pmi2", "-N2", "-n4", bin)
	if r.Code != 0 || ranks(r.Stdout) != want {
		t.Fatalf("srun --mpi=pmi2 -N2 -n4: exit %d\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// Cyclic: ranks alternate between the nodes.
	if r := c.Run("", "srun", "--mpi=pmi2", "-N2", "-n4", "-m", "cyclic", bin); r.Code != 0 || ranks(r.Stdout) != want {
		t.Errorf("cyclic: exit %d\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// Without PMI each rank is a world of its own.
	if r := c.Run("", "srun", "--mpi=none", "-N2", "-n2", bin); r.Code != 0 || ranks(r.Stdout) != "rank 0 of 1 sum 0\nrank 0 of 1 sum 0" {
		t.Errorf("--mpi=none: exit %d\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	id := c.Submit("", "-N2", "-n4", "-o", "mpi.out", "--wrap", "SLURM_MPI_TYPE=pmi2 srun "+bin)
	c.WaitState(id, "COMPLETED", 60*time.Second)
	if got := ranks(c.ReadFile("mpi.out")); got != want {
		t.Errorf("batch job's srun:\n%s", got)
	}
	// MPI_Abort in one rank ends the whole step.
	start := time.Now()
	r = c.Run("", "srun", "--mpi=pmi2", "-N2", "-n4", bin, "2")
	if r.Code == 0 || !strings.Contains(r.Stderr, "task 2: PMI abort by task 2 with exit code 7") || time.Since(start) > 30*time.Second {
		t.Errorf("MPI_Abort: exit %d after %v\nstderr:\n%s", r.Code, time.Since(start), r.Stderr)
	}
	if got := c.MustRun("", "srun", "--mpi=list"); got != "MPI plugin types are...\n\tnone\n\tpmi2\n" {
		t.Errorf("--mpi=list:\n%s", got)
	}
	r = c.Run("", "srun", "--mpi=pmix", "true")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "srun: error: MPI: Cannot create context for mpi/pmix\n") {
		t.Errorf("--mpi=pmix: exit %d %q", r.Code, r.Stderr)
	}
}

// TestMpiDefault: slurm.conf's MpiDefault=pmi2 serves PMI to steps that
// ask for no type.
func TestMpiDefault(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, Extra: "MpiDefault=pmi2\n"})
	bin := buildMPICH(t, c.WorkDir)
	r := c.Run("", "srun", "-N2", "-n3", bin)
	if r.Code != 0 || ranks(r.Stdout) != "rank 0 of 3 sum 3\nrank 1 of 3 sum 3\nrank 2 of 3 sum 3" {
		t.Errorf("srun with MpiDefault=pmi2: exit %d\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
