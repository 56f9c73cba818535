package acctdb

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/hostlist"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"
)

// Kind is the database behind a store.
type Kind string

const (
	SQLite   Kind = "sqlite"
	Postgres Kind = "postgres"
)

// Config says which database to open.
type Config struct {
	Kind Kind
	// Path is the SQLite file.
	Path string
	// DSN is PostgreSQL's connection string (a URL or key=value words).
	DSN string
}

// Store is an open accounting database.
type Store struct {
	db   *sql.DB
	kind Kind
}

// Open opens the database and brings its schema up to date.
func Open(ctx context.Context, c Config) (*Store, error) {
	var (
		db  *sql.DB
		err error
	)
	switch c.Kind {
	case SQLite:
		if c.Path == "" {
			return nil, errors.New("accounting store: SQLite needs a file")
		}
		// Job records are other users' business (PrivateData): the file
		// is the daemon's alone, and SQLite gives its -wal and -shm
		// files the same mode.
		f, err := os.OpenFile(c.Path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("accounting store: %w", err)
		}
		f.Close()
		if err := os.Chmod(c.Path, 0o600); err != nil {
			return nil, fmt.Errorf("accounting store: %w", err)
		}
		// WAL lets sacct read while the controller writes; synchronous
		// FULL makes a commit durable before the controller lets go of
		// the records it wrote (they leave its state only then).
		q := url.Values{}
		for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)"} {
			q.Add("_pragma", p)
		}
		db, err = sql.Open("sqlite", "file:"+c.Path+"?"+q.Encode())
	case Postgres:
		db, err = sql.Open("pgx", c.DSN)
	default:
		return nil, fmt.Errorf("accounting store: unknown kind %q", c.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("accounting store: open: %w", err)
	}
	s := &Store{db: db, kind: c.Kind}
	if c.Kind == SQLite {
		// One writer at a time is SQLite's rule; a second connection
		// would only wait for the lock.
		db.SetMaxOpenConns(1)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// cond is an SQL condition with its arguments.
type cond struct {
	sql  string
	args []any
}

func inCond[T any](col string, vals []T, conv func(T) any) cond {
	c := cond{sql: col + " IN (" + strings.TrimSuffix(strings.Repeat("?,", len(vals)), ",") + ")"}
	for _, v := range vals {
		c.args = append(c.args, conv(v))
	}
	return c
}

// jobsQuery builds the query of f. A condition that may hold one way or
// another (a job id that is the job's or its array's; a user by name or
// by uid; a job still running or one that ended after -S) becomes a
// UNION of one SELECT per way, each able to use its own index: SQLite
// answers an OR within one SELECT by reading every record of the
// cluster.
func jobsQuery(f Filter) (string, []any) {
	id := func(v uint32) any { return int64(v) }
	str := func(v string) any { return v }
	var all []cond
	var ors [][]cond
	if len(f.Clusters) > 0 {
		all = append(all, inCond("cluster", f.Clusters, str))
	}
	if len(f.JobIDs) > 0 {
		ors = append(ors, []cond{inCond("job_id", f.JobIDs, id), inCond("array_job_id", f.JobIDs, id), inCond("het_job_id", f.JobIDs, id)})
	}
	if len(f.UIDs) > 0 {
		all = append(all, inCond("uid", f.UIDs, id))
	}
	if len(f.Users) > 0 {
		// A user given by number (sacct -u 1000) is its uid, as
		// Slurm's commands read it.
		ways := []cond{inCond("user_name", f.Users, str)}
		var uids []uint32
		for _, u := range f.Users {
			if n, err := strconv.ParseUint(u, 10, 32); err == nil {
				uids = append(uids, uint32(n))
			}
		}
		if len(uids) > 0 {
			ways = append(ways, inCond("uid", uids, id))
		}
		ors = append(ors, ways)
	}
	for _, c := range []struct {
		col  string
		vals []string
	}{{"account", f.Accounts}, {"part", f.Partitions}, {"qos", f.QOS}, {"name", f.Names}, {"state", f.States}} {
		if len(c.vals) > 0 {
			all = append(all, inCond(c.col, c.vals, str))
		}
	}
	if !f.End.IsZero() {
		all = append(all, cond{"submit_time <= ?", []any{f.End.Unix()}})
	}
	if !f.Start.IsZero() {
		ors = append(ors, []cond{{"end_time = 0", nil}, {"end_time >= ?", []any{f.Start.Unix()}}})
	}
	// One branch per choice of a way from each group.
	branches := [][]cond{nil}
	for _, group := range ors {
		var next [][]cond
		for _, b := range branches {
			for _, way := range group {
				next = append(next, append(slices.Clone(b), way))
			}
		}
		branches = next
	}
	var (
		parts []string
		args  []any
	)
	for _, b := range branches {
		q := "SELECT cluster, job_id, run, rec FROM jobs"
		var where []string
		for _, c := range append(slices.Clone(all), b...) {
			where = append(where, c.sql)
			args = append(args, c.args...)
		}
		if len(where) > 0 {
			q += " WHERE " + strings.Join(where, " AND ")
		}
		parts = append(parts, q)
	}
	q := strings.Join(parts, " UNION ALL ")
	if len(parts) > 1 {
		// A record may meet several branches' conditions; the caller
		// drops the copies. A plain UNION would make SQLite merge the
		// branches in order, which takes the order's index over the
		// conditions'.
		q = "SELECT DISTINCT cluster, job_id, run, rec FROM (" + q + ") AS branches"
	}
	// No ORDER BY: the caller sorts, so that the planner picks each
	// branch's index for its conditions rather than for the order (and
	// applies Limit after the conditions no column holds).
	return q, args
}

// rebind turns the ? placeholders of a query into PostgreSQL's $1, $2.
func (s *Store) rebind(q string) string {
	if s.kind != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unix is a time as the columns keep it: seconds, 0 for none.
func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

const upsertJob = `INSERT INTO jobs (cluster, job_id, run, array_job_id, array_task_id, uid, user_name, account, part, qos,
	name, state, submit_time, eligible_time, start_time, end_time, nodes, rec, het_job_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (cluster, job_id, run) DO UPDATE SET array_job_id = excluded.array_job_id, array_task_id = excluded.array_task_id,
	het_job_id = excluded.het_job_id,
	uid = excluded.uid, user_name = excluded.user_name, account = excluded.account, part = excluded.part, qos = excluded.qos,
	name = excluded.name, state = excluded.state, submit_time = excluded.submit_time, eligible_time = excluded.eligible_time,
	start_time = excluded.start_time, end_time = excluded.end_time, nodes = excluded.nodes, rec = excluded.rec`

const upsertStep = `INSERT INTO steps (cluster, job_id, run, step_id, state, start_time, end_time, rec)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (cluster, job_id, run, step_id) DO UPDATE SET state = excluded.state, start_time = excluded.start_time,
	end_time = excluded.end_time, rec = excluded.rec`

const upsertEvent = `INSERT INTO events (cluster, node, time_start, time_end, rec)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (cluster, node, time_start) DO UPDATE SET time_end = excluded.time_end, rec = excluded.rec`

const upsertUsage = `INSERT INTO step_usage (cluster, job_id, run, step_id, node, rec)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (cluster, job_id, run, step_id, node) DO UPDATE SET rec = excluded.rec`

// Put writes job, step and usage records, replacing earlier versions of
// the same runs, steps and nodes' reports, all in one transaction:
// writing the same records twice is harmless, which is what lets a
// writer retry after a failure.
func (s *Store) Put(ctx context.Context, b Batch) error {
	jobs, steps := b.Jobs, b.Steps
	if len(jobs) == 0 && len(steps) == 0 && len(b.Usage) == 0 && len(b.Events) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("accounting store: begin: %w", err)
	}
	defer tx.Rollback()
	if len(jobs) > 0 {
		st, err := tx.PrepareContext(ctx, s.rebind(upsertJob))
		if err != nil {
			return fmt.Errorf("accounting store: prepare: %w", err)
		}
		defer st.Close()
		for i := range jobs {
			j := &jobs[i]
			rec, err := json.Marshal(j)
			if err != nil {
				return fmt.Errorf("accounting store: encode job %d: %w", j.JobID, err)
			}
			if _, err := st.ExecContext(ctx, j.Cluster, int64(j.JobID), int64(j.Run), int64(j.ArrayJobID), int64(j.ArrayTaskID),
				int64(j.UID), j.User, j.Account, j.Partition, j.QOS, j.Name, j.State,
				unix(j.Submit), unix(j.Eligible), unix(j.Start), unix(j.End), j.Nodes, string(rec), int64(j.HetJobID)); err != nil {
				return fmt.Errorf("accounting store: write job %d: %w", j.JobID, err)
			}
		}
	}
	if len(steps) > 0 {
		st, err := tx.PrepareContext(ctx, s.rebind(upsertStep))
		if err != nil {
			return fmt.Errorf("accounting store: prepare: %w", err)
		}
		defer st.Close()
		for i := range steps {
			p := &steps[i]
			rec, err := json.Marshal(p)
			if err != nil {
				return fmt.Errorf("accounting store: encode step %d.%d: %w", p.JobID, p.StepID, err)
			}
			if _, err := st.ExecContext(ctx, p.Cluster, int64(p.JobID), int64(p.Run), int64(p.StepID), p.State,
				unix(p.Start), unix(p.End), string(rec)); err != nil {
				return fmt.Errorf("accounting store: write step %d.%d: %w", p.JobID, p.StepID, err)
			}
		}
	}
	if len(b.Events) > 0 {
		st, err := tx.PrepareContext(ctx, s.rebind(upsertEvent))
		if err != nil {
			return fmt.Errorf("accounting store: prepare: %w", err)
		}
		defer st.Close()
		for i := range b.Events {
			e := &b.Events[i]
			rec, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("accounting store: encode event of %s: %w", e.Node, err)
			}
			if _, err := st.ExecContext(ctx, e.Cluster, e.Node, unix(e.Start), unix(e.End), string(rec)); err != nil {
				return fmt.Errorf("accounting store: write event of %s: %w", e.Node, err)
			}
		}
	}
	if len(b.Usage) > 0 {
		st, err := tx.PrepareContext(ctx, s.rebind(upsertUsage))
		if err != nil {
			return fmt.Errorf("accounting store: prepare: %w", err)
		}
		defer st.Close()
		for i := range b.Usage {
			u := &b.Usage[i]
			rec, err := json.Marshal(u)
			if err != nil {
				return fmt.Errorf("accounting store: encode usage of %d.%d: %w", u.JobID, u.StepID, err)
			}
			if _, err := st.ExecContext(ctx, u.Cluster, int64(u.JobID), int64(u.Run), int64(u.StepID), u.Node, string(rec)); err != nil {
				return fmt.Errorf("accounting store: write usage of %d.%d: %w", u.JobID, u.StepID, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("accounting store: commit: %w", err)
	}
	return nil
}

// Filter selects job records; empty fields select everything.
type Filter struct {
	Clusters []string
	// JobIDs match a job's own id or its array's.
	JobIDs []uint32
	UIDs   []uint32
	// Users are user names.
	Users      []string
	Accounts   []string
	Partitions []string
	QOS        []string
	Names      []string
	States     []string
	// Start and End bound the time the jobs were in the system (sacct's
	// -S and -E): a job is selected when it was submitted before End and
	// had not ended before Start.
	Start, End time.Time
	// Limit caps the records returned (0: no cap).
	Limit int
	// These match what the records hold rather than columns: groups by
	// name or gid, the reason a job waited, its reservation, a node it
	// ran on, its exit code.
	Groups       []string
	Reasons      []string
	Reservations []string
	Nodes        []string
	ExitCodes    []int32
	// Duplicates keeps every run of a requeued job; without it only the
	// newest, as slurmdbd answers without show_duplicates.
	Duplicates bool
}

// keeps reports whether a job meets the conditions no column holds.
func (f *Filter) keeps(j *Job) bool {
	if len(f.Groups) > 0 && !slices.Contains(f.Groups, j.Group) && !slices.Contains(f.Groups, strconv.FormatUint(uint64(j.GID), 10)) {
		return false
	}
	if len(f.Reasons) > 0 && !slices.ContainsFunc(f.Reasons, func(r string) bool { return strings.EqualFold(r, j.Reason) }) {
		return false
	}
	if len(f.Reservations) > 0 && !slices.Contains(f.Reservations, j.Reservation) {
		return false
	}
	if len(f.ExitCodes) > 0 && !slices.Contains(f.ExitCodes, j.ExitCode) {
		return false
	}
	if len(f.Nodes) > 0 {
		nodes, err := hostlist.Expand(j.Nodes)
		if err != nil || !slices.ContainsFunc(nodes, func(n string) bool { return slices.Contains(f.Nodes, n) }) {
			return false
		}
	}
	return true
}

// Jobs returns the job records the filter selects, by job id and run.
func (s *Store) Jobs(ctx context.Context, f Filter) ([]Job, error) {
	q, args := jobsQuery(f)
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("accounting store: query jobs: %w", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		var (
			cluster, rec string
			id, run      int64
		)
		if err := rows.Scan(&cluster, &id, &run, &rec); err != nil {
			return nil, fmt.Errorf("accounting store: read jobs: %w", err)
		}
		var j Job
		if err := json.Unmarshal([]byte(rec), &j); err != nil {
			return nil, fmt.Errorf("accounting store: decode a job record: %w", err)
		}
		if f.keeps(&j) {
			out = append(out, j)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounting store: read jobs: %w", err)
	}
	slices.SortFunc(out, func(a, b Job) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), cmp.Compare(a.JobID, b.JobID), cmp.Compare(a.Run, b.Run))
	})
	if !f.Duplicates {
		kept := out[:0]
		for i, j := range out {
			if i+1 < len(out) && out[i+1].Cluster == j.Cluster && out[i+1].JobID == j.JobID {
				continue // a newer run follows
			}
			kept = append(kept, j)
		}
		out = kept
	}
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Steps returns the steps of the given runs, by job, run and step id,
// with what their nodes reported of their usage put together.
func (s *Store) Steps(ctx context.Context, runs []Job) ([]Step, error) {
	steps, err := readSteps(ctx, s, runs, "steps", func(rec string) (Step, error) {
		var p Step
		err := json.Unmarshal([]byte(rec), &p)
		return p, err
	})
	if err != nil || len(steps) == 0 {
		return steps, err
	}
	usage, err := readSteps(ctx, s, runs, "step_usage", func(rec string) (NodeUsage, error) {
		var u NodeUsage
		err := json.Unmarshal([]byte(rec), &u)
		return u, err
	})
	if err != nil {
		return nil, err
	}
	type key struct {
		cluster          string
		job, run, stepID uint32
	}
	byStep := map[key][]NodeUsage{}
	for _, u := range usage {
		k := key{u.Cluster, u.JobID, u.Run, u.StepID}
		byStep[k] = append(byStep[k], u)
	}
	for i := range steps {
		if us := byStep[key{steps[i].Cluster, steps[i].JobID, steps[i].Run, steps[i].StepID}]; len(us) > 0 {
			steps[i].Usage = combine(steps[i].Usage, us)
		}
	}
	return steps, nil
}

// combine puts the nodes' reports of a step together, as sacct's fields
// mean them: CPU times summed, the largest resident set and where it
// was, the average over every task, the most one task read and wrote.
func combine(u Usage, nodes []NodeUsage) Usage {
	var rssSum float64
	var tasks uint32
	for _, n := range nodes {
		u.UserCPU += n.Usage.UserCPU
		u.SystemCPU += n.Usage.SystemCPU
		if n.Usage.MaxRSS >= u.MaxRSS {
			u.MaxRSS, u.MaxRSSNode, u.MaxRSSTask = n.Usage.MaxRSS, n.Node, n.Usage.MaxRSSTask
		}
		rssSum += float64(n.Usage.AveRSS) * float64(n.Tasks)
		tasks += n.Tasks
		u.MaxDiskRead = max(u.MaxDiskRead, n.Usage.MaxDiskRead)
		u.MaxDiskWrite = max(u.MaxDiskWrite, n.Usage.MaxDiskWrite)
		u.MaxVMSize = max(u.MaxVMSize, n.Usage.MaxVMSize)
		u.Stats.Merge(n.Usage.Stats)
		u.MaxPages = max(u.MaxPages, n.Usage.MaxPages)
	}
	if tasks > 0 {
		u.AveRSS = uint64(rssSum / float64(tasks))
	}
	return u
}

// readSteps reads the rows of table (steps or step_usage) of the given runs.
func readSteps[T any](ctx context.Context, s *Store, runs []Job, table string, decode func(string) (T, error)) ([]T, error) {
	var out []T
	// A query per cluster and batch of jobs keeps the statements short.
	const batch = 500
	for i := 0; i < len(runs); i += batch {
		part := runs[i:min(i+batch, len(runs))]
		byCluster := map[string][]int64{}
		for _, j := range part {
			byCluster[j.Cluster] = append(byCluster[j.Cluster], int64(j.JobID))
		}
		for cluster, ids := range byCluster {
			args := []any{cluster}
			for _, id := range ids {
				args = append(args, id)
			}
			q := "SELECT rec FROM " + table + " WHERE cluster = ? AND job_id IN (" + strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",") +
				") ORDER BY job_id, run, step_id"
			rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
			if err != nil {
				return nil, fmt.Errorf("accounting store: query %s: %w", table, err)
			}
			for rows.Next() {
				var rec string
				if err := rows.Scan(&rec); err != nil {
					rows.Close()
					return nil, fmt.Errorf("accounting store: read steps: %w", err)
				}
				p, err := decode(rec)
				if err != nil {
					rows.Close()
					return nil, fmt.Errorf("accounting store: decode a %s record: %w", table, err)
				}
				out = append(out, p)
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, fmt.Errorf("accounting store: read steps: %w", err)
			}
		}
	}
	return out, nil
}

// Settings are slurm.conf's accounting storage lines.
type Settings struct {
	// Type is AccountingStorageType: empty or accounting_storage/slurmdbd
	// for the store embedded in the controller (SQLite under
	// StateSaveLocation), accounting_storage/pgsql for PostgreSQL,
	// accounting_storage/none for no accounting.
	Type string
	// Host, Port, User and Pass reach PostgreSQL (AccountingStorageHost,
	// AccountingStoragePort, AccountingStorageUser, AccountingStoragePass
	// or Drover's accounting-storage-pass setting); Loc is the database
	// (AccountingStorageLoc, slurm_acct_db by default, slurmdbd's name).
	Host, User, Pass, Loc string
	Port                  int
	// StateDir is StateSaveLocation.
	StateDir string
}

// Embedded is the file of the embedded store.
const Embedded = "job_acct.sqlite"

// DefaultDatabase is PostgreSQL's database unless AccountingStorageLoc
// names another (slurmdbd's StorageLoc default).
const DefaultDatabase = "slurm_acct_db"

// FromSettings chooses the store slurm.conf asks for; ok is false for
// accounting_storage/none.
func FromSettings(s Settings) (c Config, ok bool, err error) {
	switch s.Type {
	case "accounting_storage/none":
		return Config{}, false, nil
	case "", "accounting_storage/slurmdbd", "accounting_storage/sqlite":
		if s.StateDir == "" {
			return Config{}, false, errors.New("the embedded accounting store needs StateSaveLocation")
		}
		return Config{Kind: SQLite, Path: s.StateDir + "/" + Embedded}, true, nil
	case "accounting_storage/pgsql", "accounting_storage/postgresql":
		if s.Host == "" {
			return Config{}, false, fmt.Errorf("AccountingStorageType=%s needs AccountingStorageHost", s.Type)
		}
		u := url.URL{Scheme: "postgres", Host: s.Host, Path: "/" + DefaultDatabase}
		if s.Port != 0 {
			u.Host += ":" + strconv.Itoa(s.Port)
		}
		if strings.HasPrefix(s.Host, "/") {
			// The folder of the server's unix socket, as libpq takes a
			// host that begins with a slash: a database on the
			// controller's own host, reached without TCP.
			q := url.Values{"host": {s.Host}}
			if s.Port != 0 {
				q.Set("port", strconv.Itoa(s.Port))
			}
			u.Host, u.RawQuery = "", q.Encode()
		}
		if s.Loc != "" {
			u.Path = "/" + s.Loc
		}
		if s.User != "" {
			u.User = url.User(s.User)
			if s.Pass != "" {
				u.User = url.UserPassword(s.User, s.Pass)
			}
		}
		return Config{Kind: Postgres, DSN: u.String()}, true, nil
	}
	return Config{}, false, fmt.Errorf("AccountingStorageType=%s: not supported (accounting_storage/slurmdbd for the embedded store, accounting_storage/pgsql or accounting_storage/none)", s.Type)
}

// Lazy is a store opened on first use and opened again after a failure
// to open: a controller starts, and keeps its records, while its
// database is down.
type Lazy struct {
	cfg Config
	mu  sync.Mutex
	s   *Store
}

// NewLazy returns a store of c that is not opened yet.
func NewLazy(c Config) *Lazy { return &Lazy{cfg: c} }

func (l *Lazy) store(ctx context.Context) (*Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		return l.s, nil
	}
	s, err := Open(ctx, l.cfg)
	if err != nil {
		return nil, err
	}
	l.s = s
	return s, nil
}

// Put is Store.Put, once the store opens.
func (l *Lazy) Put(ctx context.Context, b Batch) error {
	s, err := l.store(ctx)
	if err != nil {
		return err
	}
	return s.Put(ctx, b)
}

// Jobs is Store.Jobs, once the store opens.
func (l *Lazy) Jobs(ctx context.Context, f Filter) ([]Job, error) {
	s, err := l.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.Jobs(ctx, f)
}

// Steps is Store.Steps, once the store opens.
func (l *Lazy) Steps(ctx context.Context, runs []Job) ([]Step, error) {
	s, err := l.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.Steps(ctx, runs)
}

// Usage is Store.Usage, once the store opens.
func (l *Lazy) Usage(ctx context.Context, q UsageQuery) ([]ClusterUsage, error) {
	s, err := l.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.Usage(ctx, q)
}

// ClusterSize is Store.ClusterSize, once the store opens.
func (l *Lazy) ClusterSize(ctx context.Context, cluster string) (uint32, time.Time, bool, error) {
	s, err := l.store(ctx)
	if err != nil {
		return 0, time.Time{}, false, err
	}
	return s.ClusterSize(ctx, cluster)
}

// Close closes the store if it was opened.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s == nil {
		return nil
	}
	err := l.s.Close()
	l.s = nil
	return err
}

// Describe names the database for a log line: "sqlite:PATH", or
// PostgreSQL's URL without its password.
func (l *Lazy) Describe() string {
	if l.cfg.Kind == SQLite {
		return "sqlite:" + l.cfg.Path
	}
	if u, err := url.Parse(l.cfg.DSN); err == nil {
		return u.Redacted()
	}
	return "postgres"
}

// Config is the store's configuration (PostgreSQL's password included).
func (l *Lazy) Config() Config { return l.cfg }
