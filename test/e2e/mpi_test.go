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
// batch script; an MPI_Abort ends the step; an unknown type is refused
// as Slurm refuses it.
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
	// The variables Slurm's mpi/pmi2 gives the tasks.
	r = c.Run("", "srun", "--mpi=pmi2", "-N2", "-n2", "bash", "-c", "echo $PMI_RANK $PMI_SIZE $PMI_FD ${PMI_JOBID#*.}")
	if got := ranks(r.Stdout); r.Code != 0 || got != "0 2 3 0\n1 2 3 0" {
		t.Errorf("pmi2 variables: exit %d\n%s\nstderr:\n%s", r.Code, got, r.Stderr)
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
	r = c.Run("", "srun", "--mpi=pmi", "true")
	if r.Code != 1 || r.Stderr != "srun: error: MPI: Cannot create context for mpi/pmi\nsrun: error: MPI: Unable to load any plugin\n"+
		"srun: error: Invalid MPI type 'pmi', --mpi=list for acceptable types\n" {
		t.Errorf("--mpi=pmi: exit %d %q", r.Code, r.Stderr)
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

// TestMPIPMIx: srun --mpi=pmix runs Debian's Open MPI through the PMIx
// plugin (a PMIx server on each node, fences through srun): mpi4py's
// allreduce over 4 ranks on 2 nodes, from srun and from a batch script,
// and --mpi=list names pmix.
func TestMPIPMIx(t *testing.T) {
	t.Parallel()
	if err := exec.Command(filepath.Join(binDir, "drover-mpi-pmix"), "--check").Run(); err != nil {
		t.Skip("drover-mpi-pmix not built with libpmix (Debian's libpmix-dev; .ci/run installs it)")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import mpi4py").Run(); err != nil {
		t.Skip("mpi4py not installed (Debian's python3-mpi4py; .ci/run installs it)")
	}
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4})
	prog := "from mpi4py import MPI\nc = MPI.COMM_WORLD\n" +
		"print('rank %d of %d sum %d' % (c.Get_rank(), c.Get_size(), c.allreduce(c.Get_rank())), flush=True)\n"
	must(t, os.WriteFile(filepath.Join(c.WorkDir, "ar.py"), []byte(prog), 0o644))
	want := "rank 0 of 4 sum 6\nrank 1 of 4 sum 6\nrank 2 of 4 sum 6\nrank 3 of 4 sum 6"
	r := c.Run("", "srun", "--mpi=pmix", "-N2", "-n4", "/usr/bin/python3", "ar.py")
	if r.Code != 0 || ranks(r.Stdout) != want {
		t.Fatalf("srun --mpi=pmix -N2 -n4 mpi4py: exit %d\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	id := c.Submit("", "-N2", "-n4", "-o", "pmix.out", "--wrap", "srun --mpi=pmix /usr/bin/python3 ar.py")
	c.WaitState(id, "COMPLETED", 60*time.Second)
	if got := ranks(c.ReadFile("pmix.out")); got != want {
		t.Errorf("batch job's srun --mpi=pmix:\n%s", got)
	}
	// MPI_Abort in one rank ends the whole step.
	must(t, os.WriteFile(filepath.Join(c.WorkDir, "abort.py"), []byte("from mpi4py import MPI\nc = MPI.COMM_WORLD\nif c.Get_rank() == 2:\n    c.Abort(7)\nc.Barrier()\n"), 0o644))
	start := time.Now()
	// Open MPI's shared-memory transport leaves its segments in
	// /dev/shm when its ranks are killed: the test keeps to TCP.
	r = c.Run("", "srun", "--mpi=pmix", "-N2", "-n4", "--export=ALL,OMPI_MCA_btl=^vader", "/usr/bin/python3", "abort.py")
	if r.Code == 0 || !strings.Contains(r.Stderr, "task 2: PMIx abort by task 2 with exit code 7") || time.Since(start) > 30*time.Second {
		t.Errorf("MPI_Abort: exit %d after %v\nstderr:\n%s", r.Code, time.Since(start), r.Stderr)
	}
	// The variables Slurm's mpi/pmix gives the tasks.
	r = c.Run("", "srun", "--mpi=pmix", "-N2", "-n2", "bash", "-c", "echo $PMIX_RANK $SLURM_PMIX_MAPPING_SERV ${PMIX_NAMESPACE%.*.*} ${PMIX_SERVER_URI41:+uri}")
	if got := ranks(r.Stdout); r.Code != 0 || got != "0 (vector,(0,2,1)) slurm.pmix uri\n1 (vector,(0,2,1)) slurm.pmix uri" {
		t.Errorf("pmix variables: exit %d\n%s\nstderr:\n%s", r.Code, got, r.Stderr)
	}
	if got := c.MustRun("", "srun", "--mpi=list"); got != "MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\nspecific pmix plugin versions available: pmix_v4\n" {
		t.Errorf("--mpi=list:\n%s", got)
	}
}
