package jobstream_test

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/cli/jobstream"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// The answer reads the same however the connection hands it over: a
// byte at a time, in halves, with the end of the answer coming with its
// last bytes.
func TestSplitAnyChunking(t *testing.T) {
	chunkings := map[string]func(io.Reader) io.Reader{
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
		"eof last": iotest.DataErrReader,
	}
	for chunking, wrap := range chunkings {
		for name, raw := range references(t) {
			want, _, err := split(raw)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var jobs []v0044.V0044JobInfo
			rest, err := jobstream.Split(wrap(bytes.NewReader(raw)), func(j *v0044.V0044JobInfo) error {
				jobs = append(jobs, *j)
				return nil
			})
			if err != nil {
				t.Fatalf("%s, %s: %v", name, chunking, err)
			}
			got, err := whole(rest)
			if err != nil {
				t.Fatalf("%s, %s: rest: %v", name, chunking, err)
			}
			got.Jobs = jobs
			if d := cmp.Diff(want, got, cmp.AllowUnexported(v0044.V0044OpenapiJobInfoResp{}), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s, %s (-whole +chunked):\n%s", name, chunking, d)
			}
		}
		for name, raw := range acctReferences(t) {
			want, err := wholeAcct(raw)
			if err != nil {
				t.Fatal(err)
			}
			var jobs []v0044.V0044Job
			rest, err := jobstream.SplitAcct(wrap(bytes.NewReader(raw)), func(j *v0044.V0044Job) error {
				jobs = append(jobs, *j)
				return nil
			})
			if err != nil {
				t.Fatalf("%s, %s: %v", name, chunking, err)
			}
			got, err := wholeAcct(rest)
			if err != nil {
				t.Fatalf("%s, %s: rest: %v", name, chunking, err)
			}
			got.Jobs = jobs
			if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("%s, %s (-whole +chunked):\n%s", name, chunking, d)
			}
		}
	}
}

// Answers cut short or malformed around the records are refused, and
// nothing after the fault is handed on.
func TestSplitRefusesBrokenAnswers(t *testing.T) {
	for name, raw := range map[string]string{
		"empty":                ``,
		"cut in a record":      `{"jobs":[{"job_id":1},{"job_id":2,"name":"ab`,
		"cut after a record":   `{"jobs":[{"job_id":1}`,
		"cut in an escape":     `{"jobs":[{"name":"a\`,
		"cut before the end":   `{"jobs":[],"meta":{}`,
		"no comma":             `{"jobs":[{"job_id":1} {"job_id":2}]}`,
		"not a list":           `{"jobs":{"job_id":1}}`,
		"record not an object": `{"jobs":[1]}`,
		"bad member name":      `{jobs:[]}`,
		"no colon":             `{"jobs" []}`,
		"trailing data":        `{"jobs":[]} x`,
		"two answers":          `{"jobs":[]}{}`,
		"jobs twice":           `{"jobs":[],"jobs":[]}`,
		"bracket mismatch":     `{"jobs":[{"name":"x"]]}`,
	} {
		t.Run(name, func(t *testing.T) {
			var ids []int32
			_, err := jobstream.Split(bytes.NewReader([]byte(raw)), func(j *v0044.V0044JobInfo) error {
				ids = append(ids, j.JobID.Or(0))
				return nil
			})
			if err == nil {
				t.Fatalf("accepted %q", raw)
			}
			if len(ids) > 1 {
				t.Errorf("handed on %v before refusing it", ids)
			}
		})
	}
}
