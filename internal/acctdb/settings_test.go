package acctdb

import "testing"

func TestFromSettingsPostgres(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{Type: "accounting_storage/pgsql", Host: "db1", Port: 5433, User: "slurm", Pass: "p w"}, "postgres://slurm:p%20w@db1:5433/slurm_acct_db"},
		{Settings{Type: "accounting_storage/pgsql", Host: "db1", Loc: "acct"}, "postgres://db1/acct"},
		// A socket folder, as libpq takes it.
		{Settings{Type: "accounting_storage/pgsql", Host: "/run/postgresql", Port: 5432, User: "slurm"}, "postgres://slurm@/slurm_acct_db?host=%2Frun%2Fpostgresql&port=5432"},
	} {
		c, on, err := FromSettings(tc.s)
		if err != nil || !on || c.Kind != Postgres || c.DSN != tc.want {
			t.Errorf("%+v: %+v %v %v, want %s", tc.s, c, on, err, tc.want)
		}
	}
	if _, _, err := FromSettings(Settings{Type: "accounting_storage/pgsql"}); err == nil {
		t.Error("no host accepted")
	}
}
