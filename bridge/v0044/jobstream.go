package v0044

import (
	"bufio"
	"bytes"
	"net/http"
	"runtime"
	"strconv"
	"sync"

	"github.com/go-faster/jx"

	"github.com/droverhq/drover/internal/fieldsel"
	"github.com/droverhq/drover/internal/job"
	api "github.com/droverhq/drover/openapi/v0044"
)

// JobListPath is the path ServeJobList answers.
const JobListPath = "/slurm/v0.0.44/jobs/"

// streamBuffer is how much of a streamed answer is written at a time.
const streamBuffer = 64 << 10

// ServeJobList answers GET /jobs/ as SlurmV0044GetJobs does, byte for
// byte, but writes the records one at a time. The generated server builds
// the whole answer first: every record as a 3.5 KB struct and then the
// whole JSON text in one growing buffer, about 1 GB for a listing of
// 100,000 whole records, which a controller holding that many jobs
// cannot afford on each squeue. Each record still goes through the
// generated encoder; only the commas between them are written here.
//
// It reports false, having written nothing, for a request whose
// parameters it does not take as they are (an unknown or repeated
// parameter, a flags value outside the enumeration): the generated server
// then answers it, with its own error answers where they apply.
func (s *Server) ServeJobList(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.Path != JobListPath {
		return false
	}
	var params api.SlurmV0044GetJobsParams
	for key, vals := range r.URL.Query() {
		if len(vals) != 1 {
			return false
		}
		switch key {
		case "update_time":
			if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil && vals[0] != "" {
				return false
			}
			params.UpdateTime = api.NewOptString(vals[0])
		case "flags":
			f := api.SlurmV0044GetJobsFlags(vals[0])
			if f.Validate() != nil {
				return false
			}
			params.Flags = api.NewOptSlurmV0044GetJobsFlags(f)
		default:
			return false
		}
	}
	ctx := r.Context()
	resp, jobs, fail := s.jobList(ctx, params)
	if fail != nil {
		// Not reached: the parameters were checked above. The generated
		// server writes error answers.
		return false
	}
	var head jx.Encoder
	resp.Encode(&head)
	envelope := head.Bytes()
	// The answer without records has "jobs":[] where they go.
	at := bytes.Index(envelope, []byte(`"jobs":[]`))
	if at < 0 {
		return false
	}
	at += len(`"jobs":[`)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, streamBuffer)
	bw.Write(envelope[:at])
	jw := s.jobWriter(fieldsel.From(ctx))
	if !encodeRecords(jobs, jw, bw) {
		return true // the client went away
	}
	bw.Write(envelope[at:])
	bw.Flush()
	return true
}

// Records are encoded by chunks, on every CPU at once for a long list,
// and written in their order: encoding is most of a listing's cost (about
// 12 µs a whole record) and one request would otherwise use one CPU.
const (
	encodeChunk    = 256
	parallelListAt = 2 * encodeChunk
)

var chunkBuffers = sync.Pool{New: func() any { return new(jx.Encoder) }}

// encodeJobChunk writes the records of jobs[from:to] to e, each after a comma
// but the list's first.
func encodeJobChunk(jobs []*job.Job, from, to int, jw jobWriter, e *jx.Encoder) {
	var rec api.V0044JobInfo
	for i := from; i < to; i++ {
		jw.fill(jobs[i], &rec)
		if i > 0 {
			e.RawStr(",")
		}
		rec.Encode(e)
	}
}

// encodeRecords writes the records of jobs to bw; false when a write
// failed (the client went away).
func encodeRecords(jobs []*job.Job, jw jobWriter, bw *bufio.Writer) bool {
	workers := runtime.GOMAXPROCS(0)
	if len(jobs) < parallelListAt || workers < 2 {
		e := chunkBuffers.Get().(*jx.Encoder)
		defer chunkBuffers.Put(e)
		for from := 0; from < len(jobs); from += encodeChunk {
			e.Reset()
			encodeJobChunk(jobs, from, min(from+encodeChunk, len(jobs)), jw, e)
			if _, err := bw.Write(e.Bytes()); err != nil {
				return false
			}
		}
		return true
	}
	chunks := (len(jobs) + encodeChunk - 1) / encodeChunk
	results := make([]chan *jx.Encoder, chunks)
	for i := range results {
		results[i] = make(chan *jx.Encoder, 1)
	}
	// At most two chunks a worker wait to be written, so that memory
	// stays bounded whatever the list's length.
	slots := make(chan struct{}, 2*workers)
	next := make(chan int)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(next)
		for c := range chunks {
			select {
			case slots <- struct{}{}:
			case <-done:
				return
			}
			select {
			case next <- c:
			case <-done:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for c := range next {
				e := chunkBuffers.Get().(*jx.Encoder)
				e.Reset()
				from := c * encodeChunk
				encodeJobChunk(jobs, from, min(from+encodeChunk, len(jobs)), jw, e)
				results[c] <- e
			}
		}()
	}
	ok := true
	for c := range chunks {
		e := <-results[c]
		if ok {
			if _, err := bw.Write(e.Bytes()); err != nil {
				ok = false
			}
		}
		chunkBuffers.Put(e)
		<-slots
		if !ok {
			return false
		}
	}
	return ok
}
