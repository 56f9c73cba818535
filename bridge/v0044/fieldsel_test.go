package v0044_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/fieldsel"
	"github.com/droverhq/drover/internal/job"
)

// listRecords asks GET /jobs with a field selection (none when fields is
// empty) and returns each record's members as raw JSON.
func (r *rest) listRecords(fields string) []map[string]json.RawMessage {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.url+v44+"/jobs/", nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("X-SLURM-USER-NAME", "root")
	if fields != "" {
		req.Header.Set(fieldsel.Header, fields)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		r.t.Fatalf("GET /jobs/ [%s]: HTTP %d %v %s", fields, resp.StatusCode, err, b)
	}
	var ans struct {
		Jobs []map[string]json.RawMessage `json:"jobs"`
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		r.t.Fatalf("GET /jobs/: %v", err)
	}
	return ans.Jobs
}

// TestJobFieldSelection checks that a selected member is the very member
// of the whole record, for every member and records of each kind
// (pending, held, running, an array meta-record and its tasks, memory per
// CPU, GPUs), and that nothing else is sent.
func TestJobFieldSelection(t *testing.T) {
	r := newREST(t)
	r.submitRaw("root", minimalDesc(`"hold":true,"name":"held","time_limit":{"set":true,"number":90}`))
	id := r.submitRaw("root", minimalDesc(`"array":"0-5%5","cpus_per_task":8,"standard_output":"/home/alice/project/%A_%a.out"`))
	r.c.Node.WaitLaunches(t, 4)
	r.submitRaw("nobody", minimalDesc(`"memory_per_cpu":{"set":true,"number":100},"tres_per_node":"gres/gpu:2","comment":"c"`))

	full := r.listRecords("")
	if len(full) != 7 {
		t.Fatalf("%d records, want 7 (job %d's array and two others)", len(full), id)
	}
	var names []string
	for name := range full[0] {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) < 100 {
		t.Fatalf("a whole record has only %d members", len(names))
	}
	for _, name := range names {
		sparse := r.listRecords(name)
		again := r.listRecords("")
		if len(sparse) != len(full) {
			t.Fatalf("[%s]: %d records, want %d", name, len(sparse), len(full))
		}
		for i, rec := range sparse {
			if len(rec) != 1 {
				t.Errorf("[%s] record %d has members %v", name, i, keysOf(rec))
				continue
			}
			got := rec[name]
			if !bytes.Equal(got, full[i][name]) && !bytes.Equal(got, again[i][name]) {
				t.Errorf("[%s] record %d: %s, whole record has %s", name, i, got, full[i][name])
			}
		}
	}

	// Several names, unknown ones ignored, spaces tolerated.
	sel := "job_id, name,user_name,no_such_member,,job_state"
	for i, rec := range r.listRecords(sel) {
		if got := keysOf(rec); !slices.Equal(got, []string{"job_id", "job_state", "name", "user_name"}) {
			t.Errorf("[%s] record %d has members %v", sel, i, got)
		}
	}
	// Only unknown names: nothing of the record is wanted.
	for i, rec := range r.listRecords("no_such_member") {
		if len(rec) != 0 {
			t.Errorf("record %d has members %v", i, keysOf(rec))
		}
	}
	// An oversized list is no selection at all.
	huge := strings.Repeat("job_id,", fieldsel.MaxFields+1)
	if got := r.listRecords(huge); len(got[0]) != len(full[0]) {
		t.Errorf("oversized selection: %d members, want the whole record's %d", len(got[0]), len(full[0]))
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestJobListStreamed checks that the streamed GET /jobs/ answer is the
// generated server's, byte for byte: with whole records and selected
// ones, with update_time, and with no job to list. A parameter the
// stream does not take (an unknown one here) sends the request to the
// generated server, which is what the stream is compared with.
func TestJobListStreamed(t *testing.T) {
	r := newREST(t)
	get := func(query, fields string) []byte {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, r.url+v44+"/jobs/"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-SLURM-USER-NAME", "root")
		if fields != "" {
			req.Header.Set(fieldsel.Header, fields)
		}
		resp, err := r.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /jobs/%s: HTTP %d %v %s", query, resp.StatusCode, err, b)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("GET /jobs/%s: Content-Type %q", query, ct)
		}
		return b
	}
	compare := func(what, query, fields string) {
		t.Helper()
		streamed, generated := get(query, fields), get(query+sep(query)+"unknown=1", fields)
		if !bytes.Equal(streamed, generated) {
			t.Errorf("%s: streamed answer differs from the generated server's:\n%s\n%s", what, streamed, generated)
		}
	}
	compare("no job", "", "")
	r.submitRaw("root", minimalDesc(`"hold":true,"name":"held"`))
	r.submitRaw("root", minimalDesc(`"array":"0-5%5","cpus_per_task":8`))
	r.c.Node.WaitLaunches(t, 4)
	compare("whole records", "", "")
	compare("selected members", "", "job_id,name,job_state,nodes")
	compare("update_time in the past", "?update_time=1", "")
	compare("update_time to come", "?update_time=99999999999", "")
	compare("flags", "?flags=DETAIL", "")
	// A list long enough to be encoded in parallel chunks, whose last
	// chunk is short.
	for i := range 3*256 + 17 {
		held := ctltest.Request(func(r *job.Request) { r.Name = "bulk" + strconv.Itoa(i) })
		if _, err := r.c.Ctl.Submit(context.Background(), ctltest.Alice, controller.Submission{Req: held, Hold: true}); err != nil {
			t.Fatal(err)
		}
	}
	compare("a long list", "", "")
	compare("a long list, selected members", "", "job_id,name,job_state")
}

func sep(query string) string {
	if query == "" {
		return "?"
	}
	return "&"
}
