// Package jobcomp is slurm.conf's JobCompType=jobcomp/filetxt: one line of
// Key=value words for every run of a job that ends, appended to
// JobCompLoc, as slurmctld's plugin writes it. A job requeued after a node
// failure leaves a NODE_FAIL line for the run that was lost, so the record
// survives without accounting.
package jobcomp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
)

// DefaultLoc is JobCompLoc's default for jobcomp/filetxt.
const DefaultLoc = "/var/log/slurm_jobcomp.log"

// Writer appends job records to a file. The zero Writer, or nil, writes
// nothing (jobcomp/none).
type Writer struct {
	path    string
	cluster string
	mu      sync.Mutex
}

// New returns the writer for JobCompType and JobCompLoc, nil for
// jobcomp/none, or an error for a plugin Drover does not have.
func New(jobCompType, loc, cluster string) (*Writer, error) {
	switch jobCompType {
	case "", "jobcomp/none":
		return nil, nil
	case "jobcomp/filetxt":
		if loc == "" {
			loc = DefaultLoc
		}
		return &Writer{path: loc, cluster: cluster}, nil
	}
	return nil, fmt.Errorf("JobCompType=%s: not supported (jobcomp/none or jobcomp/filetxt)", jobCompType)
}

// Record appends one line a run, in order.
func (w *Writer) Record(runs []job.Job) error {
	if w == nil || len(runs) == 0 {
		return nil
	}
	var b strings.Builder
	for i := range runs {
		b.WriteString(Line(&runs[i], w.cluster))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("job completion log: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("job completion log %s: %w", w.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("job completion log %s: %w", w.path, err)
	}
	return nil
}

// Line is one run's record, as jobcomp/filetxt writes it (times local, a
// space before the newline).
func Line(j *job.Job, cluster string) string {
	r := &j.Req
	limit := "UNLIMITED"
	if r.TimeLimit != job.Infinite {
		limit = strconv.FormatUint(uint64(r.TimeLimit), 10)
	}
	nodes, nodeCnt, procs := "(null)", 0, uint32(0)
	if j.Alloc != nil && len(j.Alloc.Nodes) > 0 {
		nodes, nodeCnt, procs = hostlist.Compress(j.Alloc.NodeNames()), len(j.Alloc.Nodes), j.Alloc.TotalCPUs()
	}
	// A job that never ran started when it ended, as slurmctld sets it.
	start := j.StartTime
	if start.IsZero() {
		start = j.EndTime
	}
	// The TRES the job asked for, not those it was given.
	asked := *j
	asked.Alloc = nil
	array := ""
	if j.ArrayTaskID != job.NoTask && !j.IsArrayMeta() {
		array = fmt.Sprintf(" ArrayJobId=%d ArrayTaskId=%d", j.ArrayJobID, j.ArrayTaskID)
	}
	return fmt.Sprintf("JobId=%d UserId=%s(%d) GroupId=%s(%d) Name=%s JobState=%s Partition=%s TimeLimit=%s "+
		"StartTime=%s EndTime=%s NodeList=%s NodeCnt=%d ProcCnt=%d WorkDir=%s ReservationName=%s Tres=%s "+
		"Account=%s QOS=%s WcKey=%s Cluster=%s SubmitTime=%s EligibleTime=%s%s DerivedExitCode=0:0 ExitCode=%d:%d \n",
		j.ID, r.UserName, r.UserID, r.GroupName, r.GroupID, r.Name, j.State, r.Partition, limit,
		stamp(start), stamp(j.EndTime), nodes, nodeCnt, procs, r.WorkDir, r.Reservation, asked.ReqTRES(),
		r.Account, r.QOS, "", cluster, stamp(j.SubmitTime), stamp(j.EligibleTime), array, j.ExitCode, j.Signal)
}

// stamp is a time as Slurm prints one (local, "Unknown" for none).
func stamp(t time.Time) string {
	if t.IsZero() {
		return "Unknown"
	}
	return t.Local().Format("2006-01-02T15:04:05")
}
