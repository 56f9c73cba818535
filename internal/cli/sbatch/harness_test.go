package sbatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// now is the fixed clock of the tests (the captures' day).
var now = time.Date(2026, 11, 29, 14, 59, 45, 0, time.UTC)

// fakeProcess stands for sbatch's own process: nice 0, umask 022, the
// resource limits listed, and a clock that does not sleep.
type fakeProcess struct {
	limits map[string]uint64
	mu     sync.Mutex
	slept  []time.Duration
}

func (*fakeProcess) nice() (int, bool)     { return 0, true }
func (*fakeProcess) umask() (uint32, bool) { return 0o022, true }
func (f *fakeProcess) rlimit(name string) (uint64, bool) {
	v, ok := f.limits[name]
	return v, ok
}
func (f *fakeProcess) sleep(_ context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slept = append(f.slept, d)
	return nil
}

// server answers job submissions with a fixed reply and records the
// requests; its GetJob answers come from jobs, one per call.
type server struct {
	v0044.UnimplementedHandler
	mu      sync.Mutex
	reqs    []v0044.V0044JobSubmitReq
	replies []v0044.SlurmV0044PostJobSubmitRes
	jobs    []v0044.SlurmV0044GetJobRes
	gets    int
	// onSubmit runs when a submission arrives.
	onSubmit func()
}

func (s *server) SlurmV0044PostJobSubmit(_ context.Context, req v0044.OptV0044JobSubmitReq) (v0044.SlurmV0044PostJobSubmitRes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req.Value)
	if s.onSubmit != nil {
		s.onSubmit()
	}
	if len(s.replies) == 0 {
		return ok(138), nil
	}
	r := s.replies[0]
	if len(s.replies) > 1 {
		s.replies = s.replies[1:]
	}
	return r, nil
}

func (s *server) SlurmV0044GetJob(_ context.Context, _ v0044.SlurmV0044GetJobParams) (v0044.SlurmV0044GetJobRes, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	r := s.jobs[0]
	if len(s.jobs) > 1 {
		s.jobs = s.jobs[1:]
	}
	return r, nil
}

// lastJob returns the job description of the last submission.
func (s *server) lastJob(t *testing.T) v0044.V0044JobDescMsg {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("no job submitted")
	}
	return s.reqs[len(s.reqs)-1].Job.Value
}

func ok(id int32) *v0044.V0044OpenapiJobSubmitResponse {
	return &v0044.V0044OpenapiJobSubmitResponse{
		JobID:  v0044.NewOptInt32(id),
		StepID: v0044.NewOptString("batch"),
	}
}

// rejected is slurmrestd's error envelope for a refused submission.
func rejected(status int, number int32, text, detail string) *v0044.V0044OpenapiJobSubmitResponseStatusCode {
	return &v0044.V0044OpenapiJobSubmitResponseStatusCode{
		StatusCode: status,
		Response: v0044.V0044OpenapiJobSubmitResponse{
			Errors: v0044.V0044OpenapiErrors{{
				Description: v0044.NewOptString(detail),
				ErrorNumber: v0044.NewOptInt32(number),
				Error:       v0044.NewOptString(text),
				Source:      v0044.NewOptString("slurm_submit_batch_job()"),
			}},
		},
	}
}

// fixture is a harness around a recording server, with a minimal caller
// environment and a fake process.
type fixture struct {
	h    *clitest.Harness
	srv  *server
	proc *fakeProcess
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := &server{}
	h := clitest.New(t, srv, now)
	h.Env.Cwd = t.TempDir()
	h.Vars["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	h.Vars["HOME"] = "/home/alice"
	h.Vars["USER"] = "root"
	return &fixture{h: h, srv: srv, proc: &fakeProcess{}}
}

// run runs sbatch with the fixture's fake process.
func (f *fixture) run(stdin string, args ...string) clitest.Run {
	cmd := clienv.Command(func(ctx context.Context, env *clienv.Env, args []string) int {
		return run(ctx, env, args, f.proc)
	})
	return f.h.Run(cmd, "sbatch", stdin, args...)
}
