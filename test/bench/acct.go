package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/testutil"
)

// The accounting figures: sacct over a store of AcctJobs finished job
// records, spread over 1000 users and the last 30 days, with job ids
// from acctFirstID up (above any job a cluster runs): one user's jobs of
// the last day, and one job by id, each timed end to end (the command's
// start-up included). Slurm cannot run a million jobs here, so its
// records go straight into slurmdbd's database (realslurm-acct-fill.sh)
// and are removed afterwards; Drover's go through its store's own
// writes. The store's size is read after the fill (SQLite: the file and
// its write-ahead log; PostgreSQL, when it can be started: the database).
const (
	acctFirstID  = 10_000_000
	acctUsers    = 1000
	acctFirstUID = 20000
)

// acctQueries are the two timed commands, for a store of n records: the
// user is the last record's, who has jobs in the last day whatever n.
func acctQueries(n int) []struct {
	key, title string
	args       []string
} {
	user := strconv.Itoa(acctFirstUID + (n-1)%acctUsers)
	id := strconv.Itoa(acctFirstID + n/2)
	return []struct {
		key, title string
		args       []string
	}{
		{"sacct-user-day", "`sacct -X -u USER -S now-1day` wall time", []string{"-X", "-n", "-P", "-o", "JobID,State", "-u", user, "-S", "now-1day"}},
		{"sacct-job", "`sacct -X -j ID` wall time", []string{"-X", "-n", "-P", "-o", "JobID,State", "-j", id}},
	}
}

func measureAcct(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	in, err := sys.Fresh(ctx, freshOptions{})
	if err != nil {
		return err
	}
	defer in.Close()
	n := sz.AcctJobs
	began := time.Now()
	var note string
	switch d := in.(type) {
	case *droverInstance:
		size, err := fillDroverStore(ctx, d, n)
		if err != nil {
			return err
		}
		note = fmt.Sprintf("%d records filled in %.0f s; SQLite store %.0f MiB", n, time.Since(began).Seconds(), mib(size))
		rec.add(figure{Key: "acct-store-sqlite", Title: "Accounting store size per 1,000,000 jobs (SQLite, with batch steps)", Unit: "MiB"},
			sys.Name(), []float64{mib(size) * 1e6 / float64(n)}, note)
		if !sz.AcctPG {
			break
		}
		if pgSize, err := pgStoreSize(ctx, n); err != nil {
			rec.log("PostgreSQL store size not measured: %v", err)
		} else {
			rec.add(figure{Key: "acct-store-pg", Title: "Accounting store size per 1,000,000 jobs (PostgreSQL, with batch steps)", Unit: "MiB"},
				sys.Name(), []float64{mib(pgSize) * 1e6 / float64(n)}, "")
		}
	default:
		script, err := filepath.Abs("test/bench/realslurm-acct-fill.sh")
		if err != nil {
			return err
		}
		out, err := exec.CommandContext(ctx, script, strconv.Itoa(n)).CombinedOutput()
		if err != nil {
			return fmt.Errorf("fill slurmdbd's database: %w: %s", err, out)
		}
		defer func() {
			if out, err := exec.Command(script, "--remove").CombinedOutput(); err != nil {
				rec.log("remove the synthetic records: %v: %s", err, out)
			}
		}()
		note = fmt.Sprintf("%d records inserted into slurmdbd's MariaDB in %.0f s", n, time.Since(began).Seconds())
	}
	for _, q := range acctQueries(n) {
		// What is timed must find the records: a query that finds
		// nothing would be fast for the wrong reason.
		check := exec.CommandContext(ctx, in.Command("sacct"), q.args...)
		check.Dir, check.Env = in.WorkDir(), in.Env()
		out, err := check.Output()
		if err != nil || len(strings.TrimSpace(string(out))) == 0 {
			return fmt.Errorf("sacct %s found nothing (%v): %q", strings.Join(q.args, " "), err, out)
		}
		rows := strings.Count(string(out), "\n")
		ms, err := timeCommand(ctx, in, max(sz.CommandRuns, 3), "sacct", q.args...)
		if err != nil {
			return err
		}
		rec.add(figure{Key: q.key, Title: fmt.Sprintf("%s, %d job records", q.title, n), Unit: "ms",
			Command: "sacct " + strings.Join(q.args, " ") + " >/dev/null"}, sys.Name(), ms, fmt.Sprintf("%s; %d lines", note, rows))
	}
	return nil
}

// acctRecords is the i-th synthetic job and its batch step.
func acctRecords(cluster string, i, n int, now time.Time) (acctdb.Job, acctdb.Step) {
	uid := uint32(acctFirstUID + i%acctUsers)
	// One job ends every 30 days / n, the last one now.
	end := now.Add(-time.Duration(n-1-i) * (30 * 24 * time.Hour / time.Duration(n)))
	start := end.Add(-10 * time.Minute)
	j := acctdb.Job{Cluster: cluster, JobID: uint32(acctFirstID + i), ArrayTaskID: acctdb.NoTask, Name: "train",
		User: "u" + strconv.Itoa(int(uid)), UID: uid, Group: "users", GID: 100, Account: "lab" + strconv.Itoa(i%20), QOS: "normal",
		Partition: "gpu", Nodes: "n" + strconv.Itoa(1+i%4), NodeCount: 1, AllocCPUs: 4, ReqCPUs: 4, ReqMemMB: 4000,
		ReqTRES: "cpu=4,mem=4000M,node=1,billing=4", AllocTRES: "cpu=4,mem=4000M,node=1,billing=4",
		Submit: start.Add(-time.Minute), Eligible: start.Add(-time.Minute), Start: start, End: end, TimeLimit: 60,
		State: "COMPLETED", KilledBy: -1, WorkDir: "/home/u" + strconv.Itoa(int(uid)), SubmitLine: "sbatch train.sh"}
	st := acctdb.Step{Cluster: cluster, JobID: j.JobID, StepID: acctdb.StepBatch, Name: "batch", Nodes: j.Nodes, NodeCount: 1,
		Tasks: 1, CPUs: 4, Start: start, End: end, State: "COMPLETED",
		Usage: acctdb.Usage{UserCPU: 9 * time.Minute, SystemCPU: 20 * time.Second, MaxRSS: 3 << 30, AveRSS: 3 << 30, MaxVMSize: 5 << 30}}
	return j, st
}

// fillStore writes n synthetic records into s, a thousand at a time.
func fillStore(ctx context.Context, s *acctdb.Store, cluster string, n int) error {
	now := time.Now()
	const batch = 1000
	for i := 0; i < n; i += batch {
		var b acctdb.Batch
		for k := i; k < min(i+batch, n); k++ {
			j, st := acctRecords(cluster, k, n, now)
			b.Jobs = append(b.Jobs, j)
			b.Steps = append(b.Steps, st)
		}
		if err := s.Put(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// fillDroverStore fills the running cluster's store, beside its
// controller (SQLite allows a second writer), and returns its size.
func fillDroverStore(ctx context.Context, d *droverInstance, n int) (int64, error) {
	cluster, err := confValue(filepath.Join(d.dir, "etc", "slurm.conf"), "ClusterName")
	if err != nil {
		return 0, err
	}
	path := filepath.Join(d.dir, "state", "job_acct.sqlite")
	s, err := acctdb.Open(ctx, acctdb.Config{Kind: acctdb.SQLite, Path: path})
	if err != nil {
		return 0, err
	}
	if err := fillStore(ctx, s, cluster, n); err != nil {
		s.Close()
		return 0, err
	}
	if err := s.Close(); err != nil {
		return 0, err
	}
	var size int64
	for _, f := range []string{path, path + "-wal"} {
		if st, err := os.Stat(f); err == nil {
			size += st.Size()
		}
	}
	return size, nil
}

// pgStoreSize fills a PostgreSQL store of its own and returns the
// database's size.
func pgStoreSize(ctx context.Context, n int) (int64, error) {
	pg, err := testutil.StartPostgres()
	if err != nil {
		return 0, err
	}
	defer pg.Stop()
	url, err := pg.Database("acctbench")
	if err != nil {
		return 0, err
	}
	s, err := acctdb.Open(ctx, acctdb.Config{Kind: acctdb.Postgres, DSN: url})
	if err != nil {
		return 0, err
	}
	err = fillStore(ctx, s, "bench", n)
	s.Close()
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM ANALYZE"); err != nil {
		return 0, err
	}
	var size int64
	err = db.QueryRowContext(ctx, "SELECT pg_database_size(current_database())").Scan(&size)
	return size, err
}

// confValue reads one key of a slurm.conf.
func confValue(path, key string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && strings.EqualFold(k, key) {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s: no %s", path, key)
}
