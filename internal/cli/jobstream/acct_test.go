package jobstream_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/go-faster/jx"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/jobstream"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// acctReferences are the accounting job list answers captured from real
// slurmrestd (GET /slurmdb/v0.0.44/jobs and /job/{id}).
func acctReferences(tb testing.TB) map[string][]byte {
	tb.Helper()
	dir := filepath.Join(clitest.ReferenceDir(tb), "rest", "v0.0.44")
	names, err := filepath.Glob(filepath.Join(dir, "slurmdb_job*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		if resp, err := wholeAcct(raw); err == nil && len(resp.Jobs) > 0 {
			out[filepath.Base(name)] = raw
		}
	}
	if len(out) == 0 {
		tb.Fatal("no accounting job list in the references")
	}
	return out
}

// wholeAcct decodes an accounting answer as the generated client does.
func wholeAcct(raw []byte) (v0044.V0044OpenapiSlurmdbdJobsResp, error) {
	var resp v0044.V0044OpenapiSlurmdbdJobsResp
	d := jx.DecodeBytes(raw)
	if err := resp.Decode(d); err != nil {
		return resp, err
	}
	if err := d.Skip(); err != io.EOF {
		return resp, io.ErrUnexpectedEOF
	}
	return resp, resp.Validate()
}

// splitAcct decodes an answer as the stream does, and puts its records
// back.
func splitAcct(raw []byte) (v0044.V0044OpenapiSlurmdbdJobsResp, []byte, error) {
	return splitAcctFrom(bytes.NewReader(raw))
}

func splitAcctFrom(r io.Reader) (v0044.V0044OpenapiSlurmdbdJobsResp, []byte, error) {
	var jobs []v0044.V0044Job
	rest, err := jobstream.SplitAcct(r, func(j *v0044.V0044Job) error {
		jobs = append(jobs, *j)
		return nil
	})
	if err != nil {
		return v0044.V0044OpenapiSlurmdbdJobsResp{}, nil, err
	}
	resp, err := wholeAcct(rest)
	if err != nil {
		return resp, rest, err
	}
	resp.Jobs = jobs
	return resp, rest, nil
}

// The stream hands over every run, and the rest of the answer, as the
// generated client reads them from the whole answer.
func TestSplitAcctMatchesWholeDecoding(t *testing.T) {
	for name, raw := range acctReferences(t) {
		want, err := wholeAcct(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, rest, err := splitAcct(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s: stream differs from the whole answer (-whole +stream):\n%s", name, d)
		}
		if !bytes.Contains(rest, []byte(`"jobs":[]`)) {
			t.Errorf("%s: rest of the answer has no empty job list: %s", name, rest)
		}
	}
}

// A run's members and steps do not leak into the next run.
func TestSplitAcctResetsTheRecord(t *testing.T) {
	raw := []byte(`{"jobs":[{"job_id":1,"name":"a","steps":[{"step":{"id":"1.batch"}}]},{"job_id":2}],"meta":{},"errors":[],"warnings":[]}`)
	var names []string
	var steps []int
	_, err := jobstream.SplitAcct(bytes.NewReader(raw), func(j *v0044.V0044Job) error {
		names = append(names, j.Name.Or("-"))
		steps = append(steps, len(j.Steps))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "-"}, names); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]int{1, 0}, steps); d != "" {
		t.Error(d)
	}
}

// Through the generated client: the runs go to the caller and the answer
// comes back without them; an error answer reads as before; a request
// without WithAcct is not touched.
func TestTransportStreamsAcctList(t *testing.T) {
	body, ok := acctReferences(t)["slurmdb_jobs.json"]
	if !ok {
		t.Fatal("no slurmdb_jobs.json in the references")
	}
	want, err := wholeAcct(body)
	if err != nil {
		t.Fatal(err)
	}
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status == http.StatusOK {
			w.Write(body)
			return
		}
		io.WriteString(w, `{"jobs":[],"errors":[{"description":"Slurm accounting storage is disabled","error_number":1}],"warnings":[],"meta":{}}`)
	}))
	defer srv.Close()
	client, err := v0044.NewClient(srv.URL, clitest.NoCredentials, v0044.WithClient(&http.Client{Transport: jobstream.Transport(nil)}))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	ctx := jobstream.WithAcct(context.Background(), func(j *v0044.V0044Job) error {
		ids = append(ids, j.JobID.Or(0))
		return nil
	})
	res, err := client.SlurmdbV0044GetJobs(ctx, v0044.SlurmdbV0044GetJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res.(*v0044.V0044OpenapiSlurmdbdJobsResp)
	if !ok {
		t.Fatalf("answer %T", res)
	}
	if len(got.Jobs) != 0 || len(ids) != len(want.Jobs) {
		t.Fatalf("%d runs in the answer and %d streamed, want 0 and %d", len(got.Jobs), len(ids), len(want.Jobs))
	}
	for i := range ids {
		if ids[i] != want.Jobs[i].JobID.Or(0) {
			t.Errorf("run %d: job %d, want %d", i, ids[i], want.Jobs[i].JobID.Or(0))
		}
	}
	if d := cmp.Diff(want.Meta, got.Meta); d != "" {
		t.Errorf("meta: %s", d)
	}

	res, err = client.SlurmdbV0044GetJobs(context.Background(), v0044.SlurmdbV0044GetJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*v0044.V0044OpenapiSlurmdbdJobsResp); len(got.Jobs) != len(want.Jobs) {
		t.Errorf("without WithAcct: %d runs, want %d", len(got.Jobs), len(want.Jobs))
	}

	status = http.StatusInternalServerError
	res, err = client.SlurmdbV0044GetJobs(ctx, v0044.SlurmdbV0044GetJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	bad, ok := res.(*v0044.V0044OpenapiSlurmdbdJobsRespStatusCode)
	if !ok || bad.StatusCode != http.StatusInternalServerError || bad.Response.Errors[0].Description.Or("") != "Slurm accounting storage is disabled" {
		t.Errorf("error answer read as %#v", res)
	}
}

// FuzzSplitAcct holds the accounting stream to the generated client's
// whole decoding: on any input both accept it or both refuse it, and
// they read the same.
func FuzzSplitAcct(f *testing.F) {
	f.Add([]byte(`{"jobs":[{"job_id":1},{"job_id":2,"name":"b"}],"meta":{},"errors":[],"warnings":[]}`))
	f.Add([]byte(`{"jobs":[{"job_id":7,"state":{"current":["COMPLETED"],"reason":"None"},"time":{"limit":{"set":false,"infinite":true,"number":0},"start":5},` +
		`"priority":{"set":true,"number":1},"array":{"job_id":6,"task_id":{"set":true,"number":1},"task":""},"flags":["START_RECEIVED"],` +
		`"steps":[{"step":{"id":"7.batch","name":"batch"},"state":["COMPLETED"],"time":{"start":{"set":true,"number":5}},` +
		`"tres":{"allocated":[{"type":"cpu","name":"","id":1,"count":1}],"requested":{"max":[{"type":"mem","count":5}],"min":[],"average":[],"total":[]}}}],` +
		`"exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"number":0}}}],"meta":{"plugin":{"type":"openapi/slurmdbd"}},"errors":[],"warnings":[]}`))
	f.Add([]byte(`{"jobs":[],"jobs":[]}`))
	f.Add([]byte(`{"jobs":[{"state":{"current":["NOPE"]}}]}`))
	f.Add([]byte(`{"jobs":[{"steps":[{"state":["NOPE"]}]}]}`))
	f.Add([]byte(`{"jobs":[]} x`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := wholeAcct(raw)
		got, _, gerr := splitAcct(raw)
		if werr != nil {
			return // the stream may refuse less (a member twice), never more
		}
		if gerr != nil {
			if strings.Contains(gerr.Error(), "twice") {
				return
			}
			t.Fatalf("the whole answer decodes, the stream refuses it: %v", gerr)
		}
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("stream differs from the whole answer:\n%s", d)
		}
		// A byte at a time, the answer reads the same.
		bytewise, _, err := splitAcctFrom(iotest.OneByteReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("read a byte at a time: %v", err)
		}
		if d := cmp.Diff(got, bytewise, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("read a byte at a time, the stream differs:\n%s", d)
		}
	})
}
