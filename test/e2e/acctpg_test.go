package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/testutil"
)

// TestAccountingPostgres: two clusters keep their accounting in one
// PostgreSQL database (Debian's server, started by the test), as two
// slurmctlds share one slurmdbd: each sacct shows its own cluster's
// jobs, and -L, -M show the other's.
func TestAccountingPostgres(t *testing.T) {
	t.Parallel()
	pg, err := testutil.StartPostgres()
	if err != nil {
		t.Skipf("PostgreSQL is not installed here: %v", err)
	}
	t.Cleanup(pg.Stop)
	if _, err := pg.Database("slurm_acct_db"); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("AccountingStorageType=accounting_storage/pgsql\nAccountingStorageHost=%s\nAccountingStoragePort=%d\nAccountingStorageUser=%s\nAccountingStoragePass=%s\n",
		pg.Host, pg.Port, pg.User, pg.Password)
	a := NewCluster(t, ClusterOptions{Nodes: 1, Extra: conf})
	b := NewCluster(t, ClusterOptions{Nodes: 1, Extra: conf})
	ja := a.Submit("", "-J", "on_a", "--wrap", "true")
	jb := b.Submit("", "-J", "on_b", "--wrap", "true")
	a.WaitState(ja, "COMPLETED", 20*time.Second)
	b.WaitState(jb, "COMPLETED", 20*time.Second)
	want := map[string]string{
		"":             a.Name + "|on_a|COMPLETED\n",
		"-M " + b.Name: b.Name + "|on_b|COMPLETED\n",
		"-L":           strings.Join(sortedLines(a.Name+"|on_a|COMPLETED\n"+b.Name+"|on_b|COMPLETED\n"), "\n") + "\n",
	}
	for args, w := range want {
		cmd := append([]string{"-X", "-n", "-P", "-o", "Cluster,JobName,State", "-S", "now-1hour"}, strings.Fields(args)...)
		var got string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			out := a.MustRun("", "sacct", cmd...)
			if got = strings.Join(sortedLines(out), "\n") + "\n"; out == "" {
				got = ""
			}
			if got == w {
				break
			}
		}
		if got != w {
			t.Errorf("sacct %s on %s:\n%s\nwant:\n%s", args, a.Name, got, w)
		}
	}
}
