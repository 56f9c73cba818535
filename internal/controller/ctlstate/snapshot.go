package ctlstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/reservation"
)

// The snapshot is the JSON object json.Marshal(s) would produce (version 1
// state files hold exactly that), written a piece at a time: with 100,000
// jobs the whole object is about 130 MB, and building it in one buffer
// made the controller's resident memory several times its live heap.
// Members are written in the order of these names; restore reads them in
// any order.
const (
	snapNextJobID      = "next_job_id"
	snapSubmitSeq      = "submit_seq"
	snapLastJobUpdate  = "last_job_update"
	snapLastNodeUpdate = "last_node_update"
	snapCounters       = "counters"
	snapResvs          = "reservations"
	snapUsage          = "usage"
	snapUsageTime      = "usage_time"
	snapLimitUsage     = "limit_usage"
	snapAcct           = "accounting"
	snapSteps          = "steps"
	snapNextStep       = "next_step"
	snapDynNodes       = "dyn_nodes"
	snapParts          = "parts"
	snapPartsGone      = "parts_gone"
	snapNodes          = "nodes"
	snapOutbox         = "acct_outbox"
	snapRequests       = "submit_requests"
	snapJobs           = "jobs"
)

// Snapshot writes the state to w: the scalar fields, then the nodes and
// the jobs one at a time. json.Encoder reuses its encoding buffers, so the
// memory it needs is that of the largest job, not of the state.
func (s *State) Snapshot(w io.Writer) error {
	sw := snapshotWriter{w: w, enc: json.NewEncoder(w)}
	sw.raw("{")
	sw.member(snapNextJobID, s.NextJobID)
	sw.raw(",")
	sw.member(snapSubmitSeq, s.SubmitSeq)
	sw.raw(",")
	sw.member(snapLastJobUpdate, s.LastJobUpdate)
	sw.raw(",")
	sw.member(snapLastNodeUpdate, s.LastNodeUpdate)
	sw.raw(",")
	sw.member(snapCounters, s.Counters)
	sw.raw(",\"" + snapNodes + "\":{")
	names := make([]string, 0, len(s.Nodes))
	for name := range s.Nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		if i > 0 {
			sw.raw(",")
		}
		sw.member(name, s.Nodes[name])
	}
	sw.raw("},")
	sw.member(snapResvs, s.Resvs)
	sw.raw(",")
	sw.member(snapUsage, s.Usage)
	sw.raw(",")
	sw.member(snapUsageTime, s.UsageTime)
	sw.raw(",")
	sw.member(snapLimitUsage, s.LimitUsage)
	sw.raw(",")
	sw.member(snapAcct, s.Acct)
	sw.raw(",")
	sw.member(snapSteps, s.Steps)
	sw.raw(",")
	sw.member(snapNextStep, s.NextStep)
	sw.raw(",")
	sw.member(snapDynNodes, s.DynNodes)
	sw.raw(",")
	sw.member(snapParts, s.Parts)
	sw.raw(",")
	sw.member(snapPartsGone, s.PartsGone)
	sw.raw(",")
	sw.member(snapOutbox, s.Outbox)
	sw.raw(",")
	sw.member(snapRequests, s.Requests)
	sw.raw(",\"" + snapJobs + "\":{")
	var key []byte
	for i, id := range s.order {
		if i > 0 {
			sw.raw(",")
		}
		key = append(strconv.AppendUint(append(key[:0], '"'), uint64(id), 10), '"', ':')
		sw.write(key)
		sw.value(s.Jobs[id])
	}
	sw.raw("}}")
	if sw.err != nil {
		return fmt.Errorf("write snapshot: %w", sw.err)
	}
	return nil
}

// snapshotWriter keeps the first error, so that snapshot reads as the
// document it writes.
type snapshotWriter struct {
	w   io.Writer
	enc *json.Encoder
	err error
}

func (sw *snapshotWriter) write(b []byte) {
	if sw.err == nil {
		_, sw.err = sw.w.Write(b)
	}
}

func (sw *snapshotWriter) raw(s string) {
	if sw.err == nil {
		_, sw.err = io.WriteString(sw.w, s)
	}
}

// value writes v as JSON followed by a newline, which JSON allows between
// tokens and which keeps the file readable with line tools.
func (sw *snapshotWriter) value(v any) {
	if sw.err == nil {
		sw.err = sw.enc.Encode(v)
	}
}

func (sw *snapshotWriter) member(name string, v any) {
	if sw.err != nil {
		return
	}
	key, err := json.Marshal(name)
	if err != nil {
		sw.err = err
		return
	}
	sw.write(key)
	sw.raw(":")
	sw.value(v)
}

// Restore replaces the state with a snapshot read from r, decoding one job
// at a time. It reads what Snapshot writes and what json.Marshal(s) wrote
// before snapshots were streamed.
func (s *State) Restore(r io.Reader) error {
	n := New(s.NextJobID, s.acctOn)
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("decode snapshot: %w", err)
		}
		name, _ := tok.(string)
		switch name {
		case snapNextJobID:
			err = dec.Decode(&n.NextJobID)
		case snapSubmitSeq:
			err = dec.Decode(&n.SubmitSeq)
		case snapLastJobUpdate:
			err = dec.Decode(&n.LastJobUpdate)
		case snapLastNodeUpdate:
			err = dec.Decode(&n.LastNodeUpdate)
		case snapCounters:
			err = dec.Decode(&n.Counters)
		case snapResvs:
			err = dec.Decode(&n.Resvs)
		case snapUsage:
			err = dec.Decode(&n.Usage)
		case snapUsageTime:
			err = dec.Decode(&n.UsageTime)
		case snapLimitUsage:
			err = dec.Decode(&n.LimitUsage)
		case snapSteps:
			err = dec.Decode(&n.Steps)
		case snapNextStep:
			err = dec.Decode(&n.NextStep)
		case snapDynNodes:
			err = dec.Decode(&n.DynNodes)
		case snapParts:
			err = dec.Decode(&n.Parts)
		case snapPartsGone:
			err = dec.Decode(&n.PartsGone)
		case snapOutbox:
			err = dec.Decode(&n.Outbox)
		case snapRequests:
			err = dec.Decode(&n.Requests)
		case snapAcct:
			var m *assoc.Model
			err = dec.Decode(&m)
			n.Acct = m
		case snapNodes:
			err = decodeObject(dec, func(name string) error {
				a := &NodeAdmin{}
				if err := dec.Decode(a); err != nil {
					return fmt.Errorf("node %q: %w", name, err)
				}
				n.Nodes[name] = a
				return nil
			})
		case snapJobs:
			err = decodeObject(dec, func(key string) error {
				id, err := strconv.ParseUint(key, 10, 32)
				if err != nil {
					return fmt.Errorf("job id %q: %w", key, err)
				}
				j := &job.Job{}
				if err := dec.Decode(j); err != nil {
					return fmt.Errorf("job %d: %w", id, err)
				}
				n.Jobs[job.ID(id)] = j
				return nil
			})
		default:
			// A member this build does not know, as json.Unmarshal
			// ignores one.
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return fmt.Errorf("decode snapshot: %s: %w", name, err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fmt.Errorf("decode snapshot: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("decode snapshot: data after the state (%v)", err)
	}
	if n.Resvs == nil {
		n.Resvs = map[string]*reservation.Reservation{}
	}
	if n.Acct == nil {
		n.Acct = assoc.New()
	}
	if n.Steps == nil {
		n.Steps = map[job.ID][]*job.Step{}
	}
	if n.DynNodes == nil {
		n.DynNodes = map[string]*node.Node{}
	}
	if n.Parts == nil {
		n.Parts = map[string]*partition.Partition{}
	}
	if n.PartsGone == nil {
		n.PartsGone = map[string]bool{}
	}
	if n.NextStep == nil {
		n.NextStep = map[job.ID]uint32{}
	}
	if n.Usage != nil {
		n.Usage = upgradeUsage(n.Usage)
	}
	// A null entry is no request; the index is rebuilt here, under the
	// write lock, so that readers find it made.
	n.Requests = slices.DeleteFunc(n.Requests, func(r *SubmitRequest) bool { return r == nil })
	if len(n.Requests) == 0 {
		n.Requests = nil
	}
	n.indexRequests()
	n.order = slices.Sorted(maps.Keys(n.Jobs))
	*s = *n
	return nil
}

// decodeObject calls member for each member of the JSON object next in dec,
// with the decoder positioned at the member's value. null is an empty
// object, as json.Unmarshal reads a nil map.
func decodeObject(dec *json.Decoder, member func(name string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("got %v, want an object", tok)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if err := member(tok.(string)); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("got %v, want %v", tok, want)
	}
	return nil
}
