// Package state is the controller's durable state layer: an ordered command
// log in a bbolt file that drives an in-memory finite-state machine.
//
// Every change to controller state is a record appended to the log and then
// applied, in log order, to an FSM. The shapes mirror hashicorp/raft (Apply
// returns the FSM's result to the proposer; FSM has Apply, Snapshot and
// Restore) so that the single-machine log can later be swapped for a
// replicated one without rewriting the FSM or its callers.
//
// On disk the file holds three buckets:
//
//	meta      "version" -> big-endian uint64 format version
//	log       big-endian uint64 index -> record, contiguous, starting after the snapshot
//	snapshot  "index" -> big-endian uint64, "data" -> FSM.Snapshot output
//
// A snapshot and the truncation of the log entries it covers are written in
// one transaction, so a crash at any point leaves either the old snapshot and
// the full log or the new snapshot and the truncated log; both replay to the
// same state.
package state
