package trace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// SWF field numbers (1-based, as the format's definition counts them).
const (
	swfJob       = 1
	swfSubmit    = 2
	swfWait      = 3
	swfRun       = 4
	swfAllocProc = 5
	swfReqProc   = 8
	swfReqTime   = 9
	swfUser      = 12
	swfFields    = 18
)

// ReadSWF parses the Standard Workload Format: ';' header comments (of
// which MaxProcs, MaxNodes and UnixStartTime are kept) and lines of 18 numbers, -1 for unknown. A job
// without run time or processors is skipped and counted. The requested
// processors are used where given, the allocated ones otherwise (some
// logs, CTC's among them, record only those).
func ReadSWF(r io.Reader, name string) (*Trace, error) {
	t := &Trace{Name: name, Kind: CPU}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line := 0
	var f [swfFields]float64
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, ";") {
			header := strings.TrimSpace(text[1:])
			for _, h := range []struct {
				key string
				to  *int
			}{{"MaxProcs:", &t.MaxProcs}, {"MaxNodes:", &t.MaxNodes}, {"UnixStartTime:", &t.Start}} {
				if v, ok := strings.CutPrefix(header, h.key); ok {
					if n, err := strconv.Atoi(strings.Fields(v + " x")[0]); err == nil && n > 0 {
						*h.to = n
					}
				}
			}
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != swfFields {
			return nil, fmt.Errorf("line %d: %d fields, SWF has %d", line, len(fields), swfFields)
		}
		for i, s := range fields {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e15 {
				return nil, fmt.Errorf("line %d: field %d: %q is not a number", line, i+1, s)
			}
			f[i] = v
		}
		get := func(n int) int64 { return int64(f[n-1]) }
		procs := get(swfReqProc)
		if procs <= 0 {
			procs = get(swfAllocProc)
		}
		if get(swfRun) < 0 || procs <= 0 || get(swfSubmit) < 0 || procs > math.MaxInt32 {
			t.Skipped++
			continue
		}
		est := get(swfReqTime)
		if est < 0 {
			est = 0
		}
		t.Jobs = append(t.Jobs, Job{
			ID:       fields[swfJob-1],
			Submit:   get(swfSubmit),
			Run:      get(swfRun),
			Estimate: est,
			Procs:    int(procs),
			Wait:     max(get(swfWait), -1),
			User:     int(get(swfUser)),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return t, nil
}
