package trace

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ReadGPU parses a GPU job trace: a CSV with the header
// job_id,submission_time,duration,num_gpu (times in seconds). The trace
// has no runtime estimates and no record of the site's own waits. A job
// without GPUs or with a negative duration is skipped and counted.
func ReadGPU(r io.Reader, name string) (*Trace, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	need := []string{"job_id", "submission_time", "duration", "num_gpu"}
	for _, n := range need {
		if _, ok := col[n]; !ok {
			return nil, fmt.Errorf("header: no %s column (want %s)", n, strings.Join(need, ","))
		}
	}
	t := &Trace{Name: name, Kind: GPU}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		num := func(name string) (int64, error) {
			s := strings.TrimSpace(rec[col[name]])
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v != v || v > 1e15 || v < -1e15 {
				return 0, fmt.Errorf("line %d: %s %q is not a number", line, name, s)
			}
			return int64(v), nil
		}
		submit, err := num("submission_time")
		if err != nil {
			return nil, err
		}
		dur, err := num("duration")
		if err != nil {
			return nil, err
		}
		gpus, err := num("num_gpu")
		if err != nil {
			return nil, err
		}
		if gpus <= 0 || gpus > 1<<20 || dur < 0 || submit < 0 {
			t.Skipped++
			continue
		}
		t.Jobs = append(t.Jobs, Job{ID: rec[col["job_id"]], Submit: submit, Run: dur, GPUs: int(gpus), Wait: -1})
	}
	slices.SortStableFunc(t.Jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
	return t, nil
}
