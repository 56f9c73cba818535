package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMultiHost runs a cluster across test hosts, as Slurm runs: the
// controller on its host, two compute hosts and a login host, each with
// its own address and host name, joined by a bridge. An ordinary user on
// the login host submits, runs steps across the compute hosts and a
// torch-style env:// rendezvous, without any token handed to them: the
// login host's credential service vouches for them.
func TestMultiHost(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4, Hosts: true,
		PlugStack: "required drover-spank-nccl port_range=41000-41999 socket_ifname=none\n"})
	nobody := nobodyUser(c)
	login := c.Host("login")
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	as := func(prog string, args ...string) Result {
		t.Helper()
		return c.RunOn("login", nobody, nil, "", prog, args...)
	}

	t.Run("nodes registered from their hosts", func(t *testing.T) {
		if r := as("sinfo", "-h", "-o", "%D %T %N"); r.Code != 0 || strings.TrimSpace(r.Stdout) != "2 idle n[1-2]" {
			t.Fatalf("sinfo on %v: %+v", login, r)
		}
	})

	t.Run("batch job across hosts", func(t *testing.T) {
		r := as("sbatch", "--parsable", "-N2", "-n2", "-o", "batch.out", "--wrap",
			"hostname; srun -l sh -c 'echo $(hostname) $(id -un) $MASTER_ADDR'")
		if r.Code != 0 {
			t.Fatalf("sbatch as nobody on login: %+v", r)
		}
		id := strings.TrimSpace(r.Stdout)
		j := c.WaitState(id, "COMPLETED", 60*time.Second)
		if j.UserName.Value != "nobody" {
			t.Errorf("job %s runs as %q", id, j.UserName.Value)
		}
		got := lines(c.ReadFile("batch.out"))
		want := []string{"n1", "0: n1 nobody 10.200.0.11", "1: n2 nobody 10.200.0.11"}
		slices.Sort(got[1:])
		if !slices.Equal(got, want) {
			t.Errorf("output %q, want %q", got, want)
		}
	})

	t.Run("interactive srun from the login host, env:// rendezvous", func(t *testing.T) {
		r := as("srun", "-N2", "-n4", "-l", filepath.Join(binDir, "allreduce"))
		got := lines(r.Stdout)
		slices.Sort(got)
		var want []string
		// Four CPUs a node: the tasks fill n1 first, 3 and 1 (cons_tres).
		for rank, local := range []int{0, 1, 2, 0} {
			want = append(want, fmt.Sprintf("%d: rank %d of 4 (local %d): sum 6", rank, rank, local))
		}
		if r.Code != 0 || !slices.Equal(got, want) {
			t.Fatalf("allreduce: exit %d\ngot  %q\nwant %q\nstderr:\n%s", r.Code, got, want, r.Stderr)
		}
	})
}
