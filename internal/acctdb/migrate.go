package acctdb

import (
	"context"
	"fmt"
)

// migrations are the schema's versions, in order: migration i brings
// the schema from version i to i+1. Each runs in one transaction, and
// the same statements serve SQLite and PostgreSQL. Never change one that
// has shipped; add the next.
var migrations = [][]string{
	{
		`CREATE TABLE jobs (
			cluster TEXT NOT NULL,
			job_id BIGINT NOT NULL,
			run BIGINT NOT NULL,
			array_job_id BIGINT NOT NULL,
			array_task_id BIGINT NOT NULL,
			uid BIGINT NOT NULL,
			user_name TEXT NOT NULL,
			account TEXT NOT NULL,
			part TEXT NOT NULL,
			qos TEXT NOT NULL,
			name TEXT NOT NULL,
			state TEXT NOT NULL,
			submit_time BIGINT NOT NULL,
			eligible_time BIGINT NOT NULL,
			start_time BIGINT NOT NULL,
			end_time BIGINT NOT NULL,
			nodes TEXT NOT NULL,
			rec TEXT NOT NULL,
			PRIMARY KEY (cluster, job_id, run)
		)`,
		`CREATE INDEX jobs_by_user ON jobs (cluster, uid, submit_time)`,
		`CREATE INDEX jobs_by_array ON jobs (cluster, array_job_id)`,
		`CREATE INDEX jobs_by_time ON jobs (cluster, submit_time)`,
		`CREATE INDEX jobs_by_end ON jobs (cluster, end_time)`,
		`CREATE TABLE steps (
			cluster TEXT NOT NULL,
			job_id BIGINT NOT NULL,
			run BIGINT NOT NULL,
			step_id BIGINT NOT NULL,
			state TEXT NOT NULL,
			start_time BIGINT NOT NULL,
			end_time BIGINT NOT NULL,
			rec TEXT NOT NULL,
			PRIMARY KEY (cluster, job_id, run, step_id)
		)`,
	},
	{
		`CREATE TABLE step_usage (
			cluster TEXT NOT NULL,
			job_id BIGINT NOT NULL,
			run BIGINT NOT NULL,
			step_id BIGINT NOT NULL,
			node TEXT NOT NULL,
			rec TEXT NOT NULL,
			PRIMARY KEY (cluster, job_id, run, step_id, node)
		)`,
	},
	{
		// sacct -u NAME: jobs_by_user is by uid.
		`CREATE INDEX jobs_by_user_name ON jobs (cluster, user_name, end_time)`,
		`CREATE TABLE events (
			cluster TEXT NOT NULL,
			node TEXT NOT NULL,
			time_start BIGINT NOT NULL,
			time_end BIGINT NOT NULL,
			rec TEXT NOT NULL,
			PRIMARY KEY (cluster, node, time_start)
		)`,
	},
	{
		// sacct -j LEADER lists every component of a heterogeneous job.
		`ALTER TABLE jobs ADD COLUMN het_job_id BIGINT NOT NULL DEFAULT 0`,
		`CREATE INDEX jobs_by_het ON jobs (cluster, het_job_id)`,
	},
}

// SchemaVersion is the version this build writes.
var SchemaVersion = len(migrations)

// migrate applies the migrations the database has not seen. A database
// of a newer schema than this build knows is refused: this build would
// not know what it may write there.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS acct_schema (version BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("accounting store: schema table: %w", err)
	}
	for {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("accounting store: begin migration: %w", err)
		}
		if s.kind == Postgres {
			// Two controllers sharing a database migrate one at a time.
			if _, err := tx.ExecContext(ctx, `LOCK TABLE acct_schema IN EXCLUSIVE MODE`); err != nil {
				tx.Rollback()
				return fmt.Errorf("accounting store: lock schema: %w", err)
			}
		}
		var v int
		err = tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM acct_schema`).Scan(&v)
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("accounting store: schema version: %w", err)
		}
		if v > len(migrations) {
			tx.Rollback()
			return fmt.Errorf("accounting store: schema version %d is newer than this build's %d", v, len(migrations))
		}
		if v == len(migrations) {
			return tx.Commit()
		}
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("accounting store: migration %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO acct_schema (version) VALUES (?)`), v+1); err != nil {
			tx.Rollback()
			return fmt.Errorf("accounting store: migration %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("accounting store: migration %d: %w", v+1, err)
		}
	}
}
