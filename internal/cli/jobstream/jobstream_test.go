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

	"github.com/go-faster/jx"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/jobstream"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// references are the job list answers captured from real slurmrestd.
func references(tb testing.TB) map[string][]byte {
	tb.Helper()
	dir := filepath.Join(clitest.ReferenceDir(tb), "rest", "v0.0.44")
	names, err := filepath.Glob(filepath.Join(dir, "job*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]byte{}
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		var resp v0044.V0044OpenapiJobInfoResp
		if resp.Decode(jx.DecodeBytes(raw)) == nil && len(resp.Jobs) > 0 {
			out[filepath.Base(name)] = raw
		}
	}
	if len(out) == 0 {
		tb.Fatal("no job list in the references")
	}
	return out
}

// whole decodes an answer as the generated client does.
func whole(raw []byte) (v0044.V0044OpenapiJobInfoResp, error) {
	var resp v0044.V0044OpenapiJobInfoResp
	if err := resp.Decode(jx.DecodeBytes(raw)); err != nil {
		return resp, err
	}
	return resp, resp.Validate()
}

// split decodes an answer as the stream does, and puts its records back.
func split(raw []byte) (v0044.V0044OpenapiJobInfoResp, []byte, error) {
	var jobs []v0044.V0044JobInfo
	rest, err := jobstream.Split(bytes.NewReader(raw), func(j *v0044.V0044JobInfo) error {
		jobs = append(jobs, *j)
		return nil
	})
	if err != nil {
		return v0044.V0044OpenapiJobInfoResp{}, nil, err
	}
	var resp v0044.V0044OpenapiJobInfoResp
	if err := resp.Decode(jx.DecodeBytes(rest)); err != nil {
		return resp, rest, err
	}
	resp.Jobs = jobs
	return resp, rest, nil
}

// The stream hands over every record, and the rest of the answer, as
// the generated client reads them from the whole answer: each record
// starts from nothing, whatever the one before it held.
func TestSplitMatchesWholeDecoding(t *testing.T) {
	for name, raw := range references(t) {
		want, err := whole(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, rest, err := split(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(want, got, cmp.AllowUnexported(v0044.V0044OpenapiJobInfoResp{}), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s: stream differs from the whole answer (-whole +stream):\n%s", name, d)
		}
		if !bytes.Contains(rest, []byte(`"jobs":[]`)) {
			t.Errorf("%s: rest of the answer has no empty job list: %s", name, rest)
		}
	}
}

// Records that differ in which members they carry do not leak members
// from one to the next.
func TestSplitResetsTheRecord(t *testing.T) {
	raw := []byte(`{"jobs":[{"job_id":1,"name":"a","comment":"x"},{"job_id":2}],"meta":{},"errors":[],"warnings":[]}`)
	var names, comments []string
	_, err := jobstream.Split(bytes.NewReader(raw), func(j *v0044.V0044JobInfo) error {
		names = append(names, j.Name.Or("-"))
		comments = append(comments, j.Comment.Or("-"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a", "-"}, names); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"x", "-"}, comments); d != "" {
		t.Error(d)
	}
}

// Through the generated client: the records go to the command, the
// answer it returns has the rest; an error answer is the generated
// client's as before; a request without With is not touched.
func TestTransportThroughTheGeneratedClient(t *testing.T) {
	var body []byte
	for _, raw := range references(t) {
		body = raw
		break
	}
	want, err := whole(body)
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
		io.WriteString(w, `{"jobs":[],"last_backfill":{},"last_update":{},"errors":[{"error":"Invalid job id specified","error_number":2017}],"warnings":[],"meta":{}}`)
	}))
	defer srv.Close()
	client, err := v0044.NewClient(srv.URL, clitest.NoCredentials, v0044.WithClient(&http.Client{Transport: jobstream.Transport(nil)}))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	ctx := jobstream.With(context.Background(), func(j *v0044.V0044JobInfo) error {
		ids = append(ids, j.JobID.Or(0))
		return nil
	})
	res, err := client.SlurmV0044GetJobs(ctx, v0044.SlurmV0044GetJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res.(*v0044.V0044OpenapiJobInfoResp)
	if !ok {
		t.Fatalf("answer %T", res)
	}
	if len(got.Jobs) != 0 || len(ids) != len(want.Jobs) {
		t.Fatalf("%d records in the answer and %d streamed, want 0 and %d", len(got.Jobs), len(ids), len(want.Jobs))
	}
	for i := range ids {
		if ids[i] != want.Jobs[i].JobID.Or(0) {
			t.Errorf("record %d: job %d, want %d", i, ids[i], want.Jobs[i].JobID.Or(0))
		}
	}
	if d := cmp.Diff(want.LastUpdate, got.LastUpdate); d != "" {
		t.Errorf("last_update: %s", d)
	}

	res, err = client.SlurmV0044GetJobs(context.Background(), v0044.SlurmV0044GetJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(*v0044.V0044OpenapiJobInfoResp); len(got.Jobs) != len(want.Jobs) {
		t.Errorf("without With: %d records, want %d", len(got.Jobs), len(want.Jobs))
	}

	status = http.StatusNotFound
	res, err = client.SlurmV0044GetJobs(ctx, v0044.SlurmV0044GetJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	bad, ok := res.(*v0044.V0044OpenapiJobInfoRespStatusCode)
	if !ok || bad.StatusCode != http.StatusNotFound || bad.Response.Errors[0].Error.Or("") != "Invalid job id specified" {
		t.Errorf("error answer read as %#v", res)
	}
}

// FuzzSplit holds the stream to the generated client's whole decoding:
// on any input, both accept it or both refuse it, and they read the same.
func FuzzSplit(f *testing.F) {
	// The captured answers (10 KB and more) are TestSplitMatchesWholeDecoding's:
	// the fuzzer spends minutes minimizing each input that large.
	f.Add([]byte(`{"jobs":[{"job_id":1},{"job_id":2,"name":"b"}],"meta":{},"errors":[],"warnings":[]}`))
	f.Add([]byte(`{"jobs":[{"job_id":7,"job_state":["PENDING","REQUEUED"],"time_limit":{"set":true,"infinite":false,"number":60},` +
		`"nodes":"n[1-2]","flags":["EXACT_CPU_COUNT_REQUESTED"],"gres_detail":["gpu:1"],"exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"number":0}}}],` +
		`"last_backfill":{"set":true,"number":5},"last_update":{"set":true,"number":6},"meta":{"plugin":{"type":"openapi/slurmctld"}},"errors":[],"warnings":[]}`))
	f.Add([]byte(`{"jobs":[],"jobs":[]}`))
	f.Add([]byte(`{"jobs":[{"job_state":["NOPE"]}]}`))
	f.Add([]byte(`{"jobs":[]} x`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := whole(raw)
		got, _, gerr := split(raw)
		if werr != nil {
			return // the stream may refuse less (a member twice), never more
		}
		if gerr != nil {
			if strings.Contains(gerr.Error(), "twice") {
				return
			}
			t.Fatalf("the whole answer decodes, the stream refuses it: %v", gerr)
		}
		if d := cmp.Diff(want, got, cmp.AllowUnexported(v0044.V0044OpenapiJobInfoResp{}), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("stream differs from the whole answer:\n%s", d)
		}
	})
}

// A node list answer streams through the generated client as a job list
// does: every node in order, and the rest of the answer (its errors
// included) as the client would read the whole.
func TestNodeListThroughTheGeneratedClient(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(clitest.ReferenceDir(t), "rest", "v0.0.44", "nodes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want v0044.V0044OpenapiNodesResp
	if err := want.Decode(jx.DecodeBytes(body)); err != nil || len(want.Nodes) == 0 {
		t.Fatalf("reference node list: %v (%d nodes)", err, len(want.Nodes))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	client, err := v0044.NewClient(srv.URL, clitest.NoCredentials, v0044.WithClient(&http.Client{Transport: jobstream.Transport(nil)}))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []v0044.V0044Node
	ctx := jobstream.WithNodes(context.Background(), func(n *v0044.V0044Node) error {
		nodes = append(nodes, *n)
		return nil
	})
	res, err := client.SlurmV0044GetNodes(ctx, v0044.SlurmV0044GetNodesParams{})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := res.(*v0044.V0044OpenapiNodesResp)
	if !ok {
		t.Fatalf("answer %T", res)
	}
	if len(got.Nodes) != 0 {
		t.Errorf("%d records left in the answer, want 0", len(got.Nodes))
	}
	got.Nodes = nodes
	if d := cmp.Diff(want, *got, cmp.AllowUnexported(v0044.V0044OpenapiNodesResp{}), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("stream differs from the whole answer (-whole +stream):\n%s", d)
	}
}
