package readmodel_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/jobstream"
	"github.com/droverhq/drover/internal/cli/readmodel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func TestAcctQueryV0044(t *testing.T) {
	tests := map[string]struct {
		q    readmodel.AcctQuery
		want v0044.SlurmdbV0044GetJobsParams
	}{
		"nothing": {},
		"everything": {
			q: readmodel.AcctQuery{
				Users: []string{"root", "alice"}, Accounts: []string{"a"}, Partitions: []string{"p"}, QOS: []string{"normal"},
				Names: []string{"n"}, States: []string{"COMPLETED", "FAILED"}, Clusters: []string{"c1"}, JobIDs: []string{"125", "131"},
				Duplicates: true, Start: time.Unix(100, 0), End: time.Unix(200, 0),
			},
			want: v0044.SlurmdbV0044GetJobsParams{
				Users: v0044.NewOptString("root,alice"), Account: v0044.NewOptString("a"), Partition: v0044.NewOptString("p"),
				Qos: v0044.NewOptString("normal"), JobName: v0044.NewOptString("n"), State: v0044.NewOptString("COMPLETED,FAILED"),
				Cluster: v0044.NewOptString("c1"), Step: v0044.NewOptString("125,131"), ShowDuplicates: v0044.NewOptString("true"),
				StartTime: v0044.NewOptString("100"), EndTime: v0044.NewOptString("200"),
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.q.V0044()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// GetAcctJobs hands every run to the caller, in the answer's order and
// read the same, whether the client streams the list or decodes it
// whole; a failed answer hands none and says why; an error of the
// caller's ends the read.
func TestGetAcctJobs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(clitest.ReferenceDir(t), "rest", "v0.0.44", "slurmdb_jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var whole v0044.V0044OpenapiSlurmdbdJobsResp
	if err := whole.Decode(jx.DecodeBytes(raw)); err != nil {
		t.Fatal(err)
	}
	var want []readmodel.AcctJob
	for i := range whole.Jobs {
		want = append(want, readmodel.FromV0044AcctJob(&whole.Jobs[i]))
	}
	status, body := http.StatusOK, string(raw)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	clients := map[string]clienv.API{}
	for name, rt := range map[string]http.RoundTripper{"streamed": jobstream.Transport(nil), "whole": http.DefaultTransport} {
		c, err := v0044.NewClient(srv.URL, clitest.NoCredentials, v0044.WithClient(&http.Client{Transport: rt}))
		if err != nil {
			t.Fatal(err)
		}
		clients[name] = c
	}
	ctx := context.Background()
	for name, api := range clients {
		t.Run(name, func(t *testing.T) {
			status, body = http.StatusOK, string(raw)
			var got []readmodel.AcctJob
			ans, err := readmodel.GetAcctJobs(ctx, api, readmodel.AcctQuery{}, func(j *readmodel.AcctJob) error {
				got = append(got, *j)
				return nil
			})
			if err != nil || ans.Failed() || len(ans.Records) != 0 {
				t.Fatalf("answer %+v, %v", ans, err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("runs (-whole answer +handed on):\n%s", d)
			}

			stop := errors.New("stop")
			n := 0
			_, err = readmodel.GetAcctJobs(ctx, api, readmodel.AcctQuery{}, func(*readmodel.AcctJob) error {
				n++
				return stop
			})
			if !errors.Is(err, stop) || n != 1 {
				t.Errorf("after the caller's error: %v, %d runs read", err, n)
			}

			status, body = http.StatusInternalServerError, `{"jobs":[{"job_id":1}],"errors":[{"description":"Slurm accounting storage is disabled","error_number":1}],"warnings":[],"meta":{}}`
			n = 0
			ans, err = readmodel.GetAcctJobs(ctx, api, readmodel.AcctQuery{}, func(*readmodel.AcctJob) error {
				n++
				return nil
			})
			wantAns := readmodel.Answer[readmodel.AcctJob]{Status: 500, Errors: []readmodel.Problem{{Number: 1, Description: "Slurm accounting storage is disabled"}}}
			if err != nil || n != 0 {
				t.Fatalf("failed answer: %v, %d runs handed on", err, n)
			}
			if d := cmp.Diff(wantAns, ans); d != "" {
				t.Errorf("failed answer (-want +got):\n%s", d)
			}
		})
	}
}
