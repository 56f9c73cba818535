package sacct_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/jobstream"
	"github.com/droverhq/drover/internal/cli/sacct"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from this sacct's output")

// The goldens print times in UTC, wherever the tests run.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}

// captureNow is a few minutes after the reference captures' jobs ran.
var captureNow = time.Unix(1795964400, 0)

// answerBody is one accounting job list answer: the records real
// slurmdbd sent (shared/reference) and testdata/records.json's, which
// add what the captures lack (arrays, heterogeneous jobs, requeued runs,
// step usage, unset and missing members).
func answerBody(t testing.TB) []byte {
	t.Helper()
	var all v0044.V0044OpenapiSlurmdbdJobsResp
	for _, name := range []string{"slurmdb_jobs.json", "slurmdb_job_running.json"} {
		var r v0044.V0044OpenapiSlurmdbdJobsResp
		clitest.LoadReference(t, name, &r)
		all.Jobs = append(all.Jobs, r.Jobs...)
		all.Meta = r.Meta
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var synth v0044.V0044OpenapiSlurmdbdJobsResp
	if err := synth.Decode(jx.DecodeBytes(raw)); err != nil {
		t.Fatalf("testdata/records.json: %v", err)
	}
	all.Jobs = append(all.Jobs, synth.Jobs...)
	all.Errors, all.Warnings = v0044.V0044OpenapiErrors{}, v0044.V0044OpenapiWarnings{}
	var e jx.Encoder
	all.Encode(&e)
	return e.Bytes()
}

// server answers every request with status and body, and remembers the
// requests' paths.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	status   int
	ctype    string
	body     []byte
	requests []string
}

func newServer(t testing.TB, body []byte) *server {
	s := &server{status: http.StatusOK, ctype: "application/json", body: body}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
		status, ctype, body := s.status, s.ctype, s.body
		s.mu.Unlock()
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

// client reaches s as the commands do: streamed is the shipped client's
// transport (jobstream under the generated client), otherwise a plain
// one that decodes each answer whole.
func (s *server) client(t testing.TB, streamed bool) clienv.API {
	t.Helper()
	hc := &http.Client{}
	if streamed {
		hc.Transport = jobstream.Transport(nil)
	}
	c, err := v0044.NewClient(s.URL, clitest.NoCredentials, v0044.WithClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// run runs sacct args against api, as root, at captureNow.
func run(api clienv.API, vars map[string]string, args ...string) clitest.Run {
	var out, errb bytes.Buffer
	env := clienv.Env{
		Prog: "sacct", Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return nil },
		Now: func() time.Time { return captureNow }, Client: api,
		User: clienv.User{Name: "root"}, Hostname: "node0", Cwd: "/home/u",
		Call: func(_ context.Context, method, path string, _, _ any) error {
			return fmt.Errorf("%s %s: not served", method, path)
		},
	}
	code := sacct.Run(context.Background(), &env, args)
	return clitest.Run{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// runCase is one sacct invocation of the goldens.
type runCase struct {
	args []string
	vars map[string]string
	// status, ctype and body replace the answer when set.
	status int
	ctype  string
	body   string
}

// allFields is every field sacct -e lists, in its order.
func allFields(t testing.TB, api clienv.API) string {
	t.Helper()
	r := run(api, nil, "-e")
	if r.Code != 0 {
		t.Fatalf("sacct -e: %+v", r)
	}
	return strings.Join(strings.Fields(r.Stdout), ",")
}

func runCases(all string) map[string]runCase {
	usage := "JobID,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxVMSize,AveVMSize,MaxDiskRead,AveDiskWrite,TRESUsageInMax,TRESUsageOutTot,NTasks,NNodes"
	return map[string]runCase{
		"default":          {args: nil},
		"jobs":             {args: []string{"-j", "125,126,127,128,200,300,400"}},
		"all_P":            {args: []string{"-P", "-o", all}},
		"all_fixed":        {args: []string{"-o", all}},
		"long_P":           {args: []string{"-l", "-P"}},
		"long":             {args: []string{"-l"}},
		"allocations":      {args: []string{"-X", "-o", "JobID,JobIDRaw,JobName,State,ExitCode,DerivedExitCode,Timelimit,TimelimitRaw,Priority"}},
		"duplicates":       {args: []string{"-D", "-o", "JobID,State,Restarts,Start,End,Elapsed"}},
		"duplicates_X":     {args: []string{"-D", "-X", "-j", "400"}},
		"array_task":       {args: []string{"-j", "200_3", "-P", "-o", all}},
		"array_tasks":      {args: []string{"-j", "200_[1,3-5]"}},
		"array_whole":      {args: []string{"-j", "200", "-o", "JobID%20,JobIDRaw,State,Start,Elapsed"}},
		"het":              {args: []string{"-j", "300", "-o", "JobID,JobIDRaw,NodeList,State"}},
		"het_component":    {args: []string{"-j", "300+1"}},
		"step":             {args: []string{"-j", "201.0,125.batch", "-P"}},
		"units":            {args: []string{"--units=M", "-P", "-o", usage}},
		"noconvert":        {args: []string{"--noconvert", "-P", "-o", usage}},
		"parsable":         {args: []string{"-p", "-n"}},
		"delimiter":        {args: []string{"-P", "--delimiter=,", "-b"}},
		"filters":          {args: []string{"-a", "-u", "root,alice", "-A", "proj", "-r", "batch", "-q", "normal", "--name", "arr", "-s", "CD,F", "-M", "c1", "-D", "-S", "2026-11-29", "-E", "now"}},
		"time_format":      {args: []string{"-o", "JobID,Submit,Start,End,Eligible"}, vars: map[string]string{"SLURM_TIME_FORMAT": "%s"}},
		"sacct_format":     {vars: map[string]string{"SACCT_FORMAT": "JobID,User,Group,UID,GID,Cluster,Partition%3"}},
		"json":             {args: []string{"--json", "-j", "125"}},
		"json_all":         {args: []string{"--json"}},
		"yaml":             {args: []string{"--yaml", "-j", "500"}},
		"error_described":  {status: 500, body: `{"jobs":[],"meta":{},"errors":[{"error":"x","error_number":1,"description":"Slurm accounting storage is disabled"}],"warnings":[]}`},
		"error_status":     {status: 404, body: `{"jobs":[],"meta":{},"errors":[{"error":"Unspecified error","error_number":1}],"warnings":[]}`},
		"error_not_json":   {status: 500, ctype: "text/plain", body: "Unspecified error"},
		"error_empty_list": {body: `{"jobs":[],"meta":{},"errors":[],"warnings":[]}`},
	}
}

// TestGolden runs sacct on the reference and synthetic records and
// compares what it prints, and what it asked, with testdata/golden.
func TestGolden(t *testing.T) {
	body := answerBody(t)
	s := newServer(t, body)
	api := s.client(t, true)
	for name, tc := range runCases(allFields(t, api)) {
		t.Run(name, func(t *testing.T) {
			got := s.transcript(t, api, tc, body)
			file := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("(-golden +got):\n%s", d)
			}
		})
	}
}

// transcript runs one case and writes down the request it made and what
// it printed.
func (s *server) transcript(t testing.TB, api clienv.API, tc runCase, body []byte) string {
	t.Helper()
	s.mu.Lock()
	s.status, s.ctype, s.body, s.requests = http.StatusOK, "application/json", body, nil
	if tc.status != 0 {
		s.status = tc.status
	}
	if tc.ctype != "" {
		s.ctype = tc.ctype
	}
	if tc.body != "" {
		s.body = []byte(tc.body)
	}
	s.mu.Unlock()
	r := run(api, tc.vars, tc.args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("$ sacct %s\n%s\n--- stdout\n%s--- stderr\n%s--- exit %d\n",
		strings.Join(tc.args, " "), strings.Join(s.requests, "\n"), r.Stdout, r.Stderr, r.Code)
}

// The list read record by record as it arrives and the list decoded
// whole print the same, byte for byte, in every case of the goldens.
func TestStreamedMatchesWhole(t *testing.T) {
	body := answerBody(t)
	s := newServer(t, body)
	streamed, whole := s.client(t, true), s.client(t, false)
	for name, tc := range runCases(allFields(t, whole)) {
		t.Run(name, func(t *testing.T) {
			want := s.transcript(t, whole, tc, body)
			got := s.transcript(t, streamed, tc, body)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-whole +streamed):\n%s", d)
			}
		})
	}
}

// An answer that breaks off, or is not the schema's, prints the error
// and nothing else, however many records came before it.
func TestBrokenAnswerPrintsOnlyTheError(t *testing.T) {
	body := answerBody(t)
	s := newServer(t, body)
	broken := map[string][]byte{
		"cut":           body[:len(body)*2/3],
		"bad record":    bytes.Replace(body, []byte(`"job_id":501`), []byte(`"job_id":"x"`), 1),
		"trailing data": append(bytes.Clone(body), " x"...),
	}
	for name, b := range broken {
		for _, streamed := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/streamed=%v", name, streamed), func(t *testing.T) {
				s.mu.Lock()
				s.body = b
				s.mu.Unlock()
				r := run(s.client(t, streamed), nil, "-P")
				if r.Code != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "sacct: error: ") || strings.Count(r.Stderr, "\n") != 1 {
					t.Errorf("got exit %d, stdout %q, stderr %q; want 1, nothing, one error line", r.Code, r.Stdout, r.Stderr)
				}
			})
		}
	}
}

// bigAnswer is an answer of n runs made from the reference's completed
// job (one batch step, 3.8 KB a record), each with its own id.
func bigAnswer(b *testing.B, n int) []byte {
	b.Helper()
	var ref v0044.V0044OpenapiSlurmdbdJobsResp
	clitest.LoadReference(b, "slurmdb_job_completed.json", &ref)
	rec := ref.Jobs[0]
	var e jx.Encoder
	e.ObjStart()
	e.FieldStart("jobs")
	e.ArrStart()
	for i := range n {
		rec.JobID = v0044.NewOptInt32(int32(1000 + i))
		rec.Steps[0].Step.Value.ID = v0044.NewOptString(fmt.Sprintf("%d.batch", 1000+i))
		rec.Encode(&e)
	}
	e.ArrEnd()
	e.FieldStart("meta")
	ref.Meta.Value.Encode(&e)
	e.FieldStart("errors")
	e.ArrStart()
	e.ArrEnd()
	e.FieldStart("warnings")
	e.ArrStart()
	e.ArrEnd()
	e.ObjEnd()
	return e.Bytes()
}

// BenchmarkLargeList is sacct -P over 100,000 runs as the shipped client
// reads them. peak-heap-MB is the most the heap held during a run,
// garbage not yet collected included, beyond what it held before.
func BenchmarkLargeList(b *testing.B) {
	s := newServer(b, bigAnswer(b, 100_000))
	api := s.client(b, true)
	b.ReportAllocs()
	b.ResetTimer()
	var peak uint64
	for range b.N {
		var r clitest.Run
		peak = max(peak, peakHeap(func() { r = run(api, nil, "-P", "-a") }))
		if r.Code != 0 {
			b.Fatal(errors.New(r.Stderr))
		}
		if n := strings.Count(r.Stdout, "\n"); n != 200_001 {
			b.Fatalf("%d lines", n)
		}
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}

// peakHeap runs f and returns the most the heap's objects took
// meanwhile beyond what they took before, sampled every millisecond.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if v := read(); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return max(peak.Load(), base) - base
}
