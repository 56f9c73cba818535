// Package state is the controller's durable state layer: an ordered command
// log in a bbolt file that drives an in-memory finite-state machine.
//
// Every change to controller state is a record appended to the log and then
// applied, in log order, to an FSM. The shapes mirror hashicorp/raft (Apply
// returns the FSM's result to the proposer; FSM has Apply, Snapshot and
// Restore) so that the single-machine log can later be swapped for a
// replicated one without rewriting the FSM or its callers.
//
// On disk the bbolt file holds four buckets:
//
//	meta      "version" -> big-endian uint64 format version
//	log       big-endian uint64 index -> record, contiguous, starting after the snapshot
//	snapshot  "index" -> big-endian uint64, "file" -> the snapshot file's name,
//	          "size" -> big-endian uint64 byte count, "crc32c" -> big-endian uint32 CRC-32C
//	blobs     key -> bulky data a record refers to (ApplyWithBlobs)
//
// and the folder beside it (SnapshotDir) holds the snapshot files: what
// FSM.Snapshot wrote, streamed through a buffer and a checksum, synced and
// renamed into place before the bbolt transaction that names it. That
// transaction also truncates the log entries the snapshot covers, so a
// crash at any point leaves either the old snapshot and the full log or the
// new snapshot and the truncated log; both replay to the same state. A file
// no transaction names (a crash between the rename and the commit) is never
// read, and is deleted, as a superseded one is, by the next snapshot or
// Open. Open checks the named file's size and checksum before Restore reads
// it, and fails naming the file if either is wrong.
//
// Format version 1 kept the snapshot in the snapshot bucket ("data"). Such
// a file still opens; its first snapshot moves to a file and stamps it 2.
package state
