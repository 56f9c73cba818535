package daemon

import (
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/slurmconf"
)

// TestAccountingStore: slurm.conf chooses the store; Drover's
// accounting-storage-pass setting wins over AccountingStoragePass, which
// every user can read in slurm.conf.
func TestAccountingStore(t *testing.T) {
	base := "ClusterName=c\nSlurmctldHost=h\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n"
	for name, tc := range map[string]struct {
		conf, pass string
		want       string // "" for none
		err        string
	}{
		"embedded by default": {conf: "", want: "sqlite"},
		"none":                {conf: "AccountingStorageType=accounting_storage/none\n"},
		"postgres": {conf: "AccountingStorageType=accounting_storage/pgsql\nAccountingStorageHost=db1\nAccountingStoragePort=5433\nAccountingStorageUser=slurm\nAccountingStoragePass=inconf\n",
			want: "postgres://slurm:inconf@db1:5433/slurm_acct_db"},
		"postgres, password from the setting": {conf: "AccountingStorageType=accounting_storage/pgsql\nAccountingStorageHost=db1\nAccountingStorageUser=slurm\nAccountingStoragePass=inconf\nAccountingStorageLoc=acct\n",
			pass: "secret", want: "postgres://slurm:secret@db1/acct"},
		"postgres without a host": {conf: "AccountingStorageType=accounting_storage/pgsql\n", err: "needs AccountingStorageHost"},
		"unknown":                 {conf: "AccountingStorageType=accounting_storage/mysql\n", err: "not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			sc, err := slurmconf.Parse(strings.NewReader(base+tc.conf), "slurm.conf")
			if err != nil {
				t.Fatal(err)
			}
			v := viper.New()
			if tc.pass != "" {
				v.Set("accounting-storage-pass", tc.pass)
			}
			st, err := accountingStore(v, sc, t.TempDir())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if st != nil {
					t.Fatalf("a store under accounting_storage/none: %v", st)
				}
				return
			}
			l, ok := st.(*acctdb.Lazy)
			if !ok {
				t.Fatalf("store %T", st)
			}
			got := "sqlite"
			if c := l.Config(); c.Kind == acctdb.Postgres {
				got = c.DSN
				if strings.Contains(l.Describe(), c.DSN[strings.Index(c.DSN, ":")+3:strings.Index(c.DSN, "@")]) {
					t.Errorf("Describe shows the password: %s", l.Describe())
				}
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("store %q, want %q", got, tc.want)
			}
		})
	}
}
