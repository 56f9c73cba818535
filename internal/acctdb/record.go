// Package acctdb is the job accounting store: a record of every run of
// every job and of its steps, as slurmdbd keeps them, in SQLite (one file
// under StateSaveLocation, modernc.org/sqlite, no cgo) or PostgreSQL
// (jackc/pgx) for sites that outgrow one machine. One schema and one set
// of queries serve both; several clusters may share a PostgreSQL
// database, as several slurmctlds share one slurmdbd.
//
// The columns are the fields queries filter and sort on; each row also
// keeps its whole record as JSON, so that a field added to a record
// needs no migration.
package acctdb

import "github.com/droverhq/drover/internal/acctrec"

// The records the store keeps are defined in acctrec, which the
// controller's state machine shares without linking the SQL drivers; the
// store's API speaks of them under these names.
type (
	// Job is one run of a job (acctrec.Job).
	Job = acctrec.Job
	// Step is one step of one run (acctrec.Step).
	Step = acctrec.Step
	// Usage is what a step's processes used (acctrec.Usage).
	Usage = acctrec.Usage
	// NodeUsage is what one node's tasks of a step used (acctrec.NodeUsage).
	NodeUsage = acctrec.NodeUsage
	// Event is a period a node was out of service (acctrec.Event).
	Event = acctrec.Event
	// Batch is what one write puts in the store (acctrec.Batch).
	Batch = acctrec.Batch
)

// Step ids and the array task id that is none, as acctrec.StepBatch,
// acctrec.StepExtern and acctrec.NoTask.
const (
	StepBatch  = acctrec.StepBatch
	StepExtern = acctrec.StepExtern
	NoTask     = acctrec.NoTask
)
