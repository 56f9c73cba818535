package sbatch

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

var (
	str = v0044.NewOptString
	i32 = v0044.NewOptInt32
	yes = v0044.NewOptBool(true)
	no  = v0044.NewOptBool(false)
)

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSubmitRequest checks, field by field, the job description sent for a
// script with directives, environment variables and a rich command line.
func TestSubmitRequest(t *testing.T) {
	f := newFixture(t)
	cwd := f.h.Env.Cwd
	body := "#!/bin/bash\n" +
		"#SBATCH --comment=from-script --partition=dirpart\n" +
		"#SBATCH -N 1 --time=1:00:00   # a comment\n" +
		"#SBATCH --mail-type=END,FAIL --mail-user=alice@example.com\n" +
		"srun hostname\nsleep 60\n"
	writeScript(t, cwd, "rich.sh", body)
	f.h.Vars["SBATCH_PARTITION"] = "debug"
	f.h.Vars["SBATCH_ACCOUNT"] = "root"
	f.h.Vars["MYVAR"] = "hello"
	f.h.Vars["SLURM_UMASK"] = "0077"
	f.proc.limits = map[string]uint64{"NOFILE": 1024, "STACK": 8388608}

	got := f.run("", "-J", "rich_job", "-q", "normal", "-n2", "-c", "1", "--mem=200", "-t", "15",
		"-o", "rich_%j.out", "-e", "/home/alice/project/rich_%j.err", "--comment=rich submit example",
		"--gres=gpu:1", "-H", "--begin=now", "--no-requeue", "rich.sh", "first", "second arg")
	if diff := cmp.Diff(clitest.Run{Stdout: "Submitted batch job 138\n"}, got); diff != "" {
		t.Fatalf("run (-want +got):\n%s", diff)
	}
	job := f.srv.lastJob(t)

	wantEnv := []string{
		"HOME=/home/alice",
		"MYVAR=hello",
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"SBATCH_ACCOUNT=root",
		"SBATCH_PARTITION=debug",
		"SLURM_UMASK=0077",
		"USER=root",
		"SLURM_RLIMIT_STACK=8388608",
		"SLURM_RLIMIT_NOFILE=1024",
		"SLURM_PRIO_PROCESS=0",
		"SLURM_SUBMIT_DIR=" + cwd,
		"SLURM_SUBMIT_HOST=node0",
		"SLURM_TRES_PER_TASK=cpu=1",
		"OMPI_MCA_plm_slurm_args=--external-launcher",
		"PRTE_MCA_plm_slurm_args=--external-launcher",
		"HYDRA_BOOTSTRAP=slurm",
		"HYDRA_LAUNCHER_EXTRA_ARGS=--external-launcher",
		"I_MPI_HYDRA_BOOTSTRAP=slurm",
		"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS=--external-launcher",
		"SLURM_CPUS_PER_TASK=1",
		"SLURM_NPROCS=2",
		"SLURM_NTASKS=2",
	}
	// The harness's environment comes from a map, so the caller's own
	// variables have no defined order: compare them as a set.
	sortFirst := func(env []string, n int) []string {
		out := slices.Clone(env)
		if len(out) >= n {
			slices.Sort(out[:n])
		}
		return out
	}
	if diff := cmp.Diff(wantEnv, sortFirst(job.Environment, 7)); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	job.Environment = nil

	want := v0044.V0044JobDescMsg{
		Name:                    str("rich_job"),
		Partition:               str("debug"),
		Account:                 str("root"),
		Qos:                     str("normal"),
		Script:                  str(body),
		Argv:                    v0044.V0044StringArray{cwd + "/rich.sh", "first", "second arg"},
		CurrentWorkingDirectory: str(cwd),
		Tasks:                   i32(2),
		CpusPerTask:             i32(1),
		TresPerTask:             str("cpu=1"),
		MinimumNodes:            i32(1),
		MaximumNodes:            i32(1),
		MinimumCpus:             i32(2),
		MinimumCpusPerNode:      i32(1),
		MemoryPerNode: v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{
			Set: yes, Number: v0044.NewOptInt64(200),
		}),
		TimeLimit: v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
			Set: yes, Infinite: no, Number: i32(15),
		}),
		StandardOutput: str(cwd + "/rich_%j.out"),
		StandardError:  str("/home/alice/project/rich_%j.err"),
		StandardInput:  str("/dev/null"),
		Comment:        str("rich submit example"),
		TresPerNode:    str("gres/gpu:1"),
		Hold:           yes,
		BeginTime: v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{
			Set: yes, Number: v0044.NewOptInt64(now.Unix()),
		}),
		Requeue:  no,
		MailType: []v0044.V0044JobDescMsgMailTypeItem{"END", "FAIL"},
		MailUser: str("alice@example.com"),
		Flags:    []v0044.V0044JobDescMsgFlagsItem{"EXACT_TASK_COUNT_REQUESTED", "EXACT_CPU_COUNT_REQUESTED"},
	}
	if diff := cmp.Diff(want, job, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
}

// TestScriptSources covers where the script comes from and what sbatch
// derives from it: name, argv, and the --wrap script.
func TestScriptSources(t *testing.T) {
	const body = "#!/bin/sh\nhostname\n"
	tests := map[string]struct {
		files    map[string]string // relative to cwd; "/bin/..." under the PATH dir
		stdin    string
		args     []string
		wantName string
		wantArgv []string // "$CWD" and "$BIN" are replaced
		wantBody string
	}{
		"stdin": {
			stdin: body, wantName: "sbatch", wantBody: body,
		},
		"dash is stdin": {
			stdin: body, args: []string{"-", "a"}, wantName: "sbatch", wantArgv: []string{"-", "a"}, wantBody: body,
		},
		"dev stdin": {
			stdin: body, args: []string{"/dev/stdin"}, wantName: "stdin", wantArgv: []string{"/dev/stdin"}, wantBody: body,
		},
		"file in cwd with args": {
			files: map[string]string{"job.sh": body}, args: []string{"-N1", "job.sh", "-N2", "--x"},
			wantName: "job.sh", wantArgv: []string{"$CWD/job.sh", "-N2", "--x"}, wantBody: body,
		},
		"dot path taken from cwd": {
			files: map[string]string{"sub/job.sh": body}, args: []string{"./sub/job.sh"},
			wantName: "job.sh", wantArgv: []string{"$CWD/./sub/job.sh"}, wantBody: body,
		},
		"found in PATH": {
			files: map[string]string{"/bin/tool.sh": body}, args: []string{"tool.sh"},
			wantName: "tool.sh", wantArgv: []string{"$BIN/tool.sh"}, wantBody: body,
		},
		"wrap": {
			args: []string{"--wrap", "echo 'hi' && sleep 1"}, wantName: "wrap",
			wantBody: "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho 'hi' && sleep 1\n",
		},
		"after double dash": {
			files: map[string]string{"-odd.sh": body}, args: []string{"--", "-odd.sh"},
			wantName: "-odd.sh", wantArgv: []string{"$CWD/-odd.sh"}, wantBody: body,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			bin := t.TempDir()
			f.h.Vars["PATH"] = "/nonexistent:" + bin
			for p, b := range tc.files {
				if rest, ok := strings.CutPrefix(p, "/bin/"); ok {
					writeScript(t, bin, rest, b)
				} else {
					writeScript(t, f.h.Env.Cwd, p, b)
				}
			}
			got := f.run(tc.stdin, tc.args...)
			if got.Code != 0 {
				t.Fatalf("run: %+v", got)
			}
			job := f.srv.lastJob(t)
			var argv []string
			for _, a := range tc.wantArgv {
				a = strings.ReplaceAll(a, "$CWD", f.h.Env.Cwd)
				argv = append(argv, strings.ReplaceAll(a, "$BIN", bin))
			}
			gotView := []any{job.Name.Value, []string(job.Argv), job.Script.Value}
			wantView := []any{tc.wantName, argv, tc.wantBody}
			if diff := cmp.Diff(wantView, gotView, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestScriptReadBeforeSubmit checks that the script is read completely
// before the job is submitted, so callers may delete it as soon as sbatch
// returns: the server removes the file when the request arrives.
func TestScriptReadBeforeSubmit(t *testing.T) {
	f := newFixture(t)
	body := "#!/bin/sh\n#SBATCH -J gone\n" + strings.Repeat("echo filler\n", 10000)
	p := writeScript(t, f.h.Env.Cwd, "tmp.sh", body)
	f.srv.onSubmit = func() { os.Remove(p) }
	got := f.run("", "tmp.sh")
	job := f.srv.lastJob(t)
	if got.Code != 0 || job.Name.Value != "gone" || job.Script.Value != body {
		t.Fatalf("run: %+v", got)
	}
}

func TestOutput(t *testing.T) {
	heldWarnings := v0044.V0044OpenapiWarnings{
		{Description: str("Job submission resulted in non-zero return code: Job is in held state, pending scheduler release"), Source: str("slurm_submit_batch_job()")},
		{Description: str("Job is in held state, pending scheduler release"), Source: str("slurm_submit_batch_job()")},
	}
	tests := map[string]struct {
		args  []string
		reply v0044.SlurmV0044PostJobSubmitRes
		want  clitest.Run
	}{
		"held job prints no REST warning": {
			args: []string{"-H", "--wrap", "true"},
			reply: &v0044.V0044OpenapiJobSubmitResponse{
				JobID: i32(133), StepID: str("batch"), JobSubmitUserMsg: str(""), Warnings: heldWarnings,
			},
			want: clitest.Run{Stdout: "Submitted batch job 133\n"},
		},
		"parsable": {
			args:  []string{"--parsable", "--wrap", "true"},
			reply: ok(139),
			want:  clitest.Run{Stdout: "139\n"},
		},
		"array prints the array job id": {
			args:  []string{"--parsable", "--array=1-3", "--wrap", "true"},
			reply: ok(140),
			want:  clitest.Run{Stdout: "140\n"},
		},
		"quiet": {
			args:  []string{"-Q", "--wrap", "true"},
			reply: &v0044.V0044OpenapiJobSubmitResponse{JobID: i32(5), JobSubmitUserMsg: str("hello")},
			want:  clitest.Run{},
		},
		"job_submit message": {
			args:  []string{"--wrap", "true"},
			reply: &v0044.V0044OpenapiJobSubmitResponse{JobID: i32(5), JobSubmitUserMsg: str("line one\nline two\n")},
			want:  clitest.Run{Stdout: "Submitted batch job 5\n", Stderr: "sbatch: line one\nsbatch: line two\n"},
		},
		"help": {
			args: []string{"--usage"},
			want: clitest.Run{Stdout: "Usage: sbatch [-N nnodes] [-n ntasks]\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			if tc.reply != nil {
				f.srv.replies = []v0044.SlurmV0044PostJobSubmitRes{tc.reply}
			}
			got := f.run("", tc.args...)
			if name == "help" {
				got.Stdout = strings.SplitAfter(got.Stdout, "\n")[0]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestArraySubmit(t *testing.T) {
	f := newFixture(t)
	f.srv.replies = []v0044.SlurmV0044PostJobSubmitRes{ok(134)}
	got := f.run("#!/bin/bash\nsleep 30\n", "--array=0-3%1", "--mem=100", "-H", "-J", "rest_array")
	if got.Code != 0 {
		t.Fatalf("run: %+v", got)
	}
	job := f.srv.lastJob(t)
	want := []any{"0-3%1", "rest_array", int64(100), true}
	gotView := []any{job.Array.Value, job.Name.Value, job.MemoryPerNode.Value.Number.Value, job.Hold.Value}
	if diff := cmp.Diff(want, gotView); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPrecedence checks that the command line beats the environment, which
// beats the script's directives, in what is sent.
func TestPrecedence(t *testing.T) {
	script := "#!/bin/sh\n#SBATCH -p fromscript -t 5 -J script --qos=sq\n#SBATCH --comment=c\ntrue\n"
	tests := map[string]struct {
		env  map[string]string
		args []string
		want []string // partition, qos, name, comment
		time int32
	}{
		"script": {
			want: []string{"fromscript", "sq", "script", "c"}, time: 5,
		},
		"environment": {
			env:  map[string]string{"SBATCH_PARTITION": "fromenv", "SBATCH_TIMELIMIT": "6", "SBATCH_JOB_NAME": "env"},
			want: []string{"fromenv", "sq", "env", "c"}, time: 6,
		},
		"command line": {
			env:  map[string]string{"SBATCH_PARTITION": "fromenv", "SBATCH_TIMELIMIT": "6"},
			args: []string{"-p", "fromcli", "--time=7", "--qos=cq"},
			want: []string{"fromcli", "cq", "script", "c"}, time: 7,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			for k, v := range tc.env {
				f.h.Vars[k] = v
			}
			if got := f.run(script, tc.args...); got.Code != 0 {
				t.Fatalf("run: %+v", got)
			}
			job := f.srv.lastJob(t)
			got := []string{job.Partition.Value, job.Qos.Value, job.Name.Value, job.Comment.Value}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if job.TimeLimit.Value.Number.Value != tc.time {
				t.Errorf("time limit %d, want %d", job.TimeLimit.Value.Number.Value, tc.time)
			}
		})
	}
}

func TestExport(t *testing.T) {
	tests := map[string]struct {
		args []string
		want []string
	}{
		"NONE": {
			args: []string{"--export=NONE"},
			want: []string{"SLURM_EXPORT_ENV=NONE", "SLURM_GET_USER_ENV=1", "SLURM_PRIO_PROCESS=0",
				"SLURM_SUBMIT_DIR=$CWD", "SLURM_SUBMIT_HOST=node0", "SLURM_UMASK=0022"},
		},
		"list": {
			args: []string{"--export=HOME,X=1"},
			want: []string{"HOME=/home/alice", "SLURM_EXPORT_ENV=HOME,X=1", "SLURM_GET_USER_ENV=1", "SLURM_PRIO_PROCESS=0",
				"SLURM_SUBMIT_DIR=$CWD", "SLURM_SUBMIT_HOST=node0", "SLURM_UMASK=0022", "X=1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.h.Vars["SLURM_STEPMGR"] = "n1"
			if got := f.run("", append(tc.args, "--wrap", "true")...); got.Code != 0 {
				t.Fatalf("run: %+v", got)
			}
			var got []string
			for _, kv := range f.srv.lastJob(t).Environment {
				if !strings.Contains(kv, "launcher") && !strings.Contains(kv, "_BOOTSTRAP=") {
					got = append(got, kv)
				}
			}
			slices.Sort(got)
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "$CWD", f.h.Env.Cwd))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrors covers sbatch's refusals, with Slurm's messages and statuses.
func TestErrors(t *testing.T) {
	tests := map[string]struct {
		files map[string]string
		env   map[string]string
		stdin string
		args  []string
		reply v0044.SlurmV0044PostJobSubmitRes
		want  clitest.Run
	}{
		"empty script": {
			stdin: "",
			want:  clitest.Run{Code: 1, Stderr: "sbatch: error: Batch script is empty!\n"},
		},
		"blank script": {
			stdin: "  \n\n",
			want:  clitest.Run{Code: 1, Stderr: "sbatch: error: Batch script contains only whitespace!\n"},
		},
		"no shebang": {
			stdin: "hostname\n",
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: This does not look like a batch script.  The first\n" +
				"sbatch: error: line must start with #! followed by the path to an interpreter.\n" +
				"sbatch: error: For instance: #!/bin/sh\n"},
		},
		"NUL": {
			stdin: "#!/bin/sh\n\x00",
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: The Slurm controller does not allow scripts that\n" +
				"sbatch: error: contain a NULL character '\\0'.\n"},
		},
		"DOS": {
			files: map[string]string{"dos.sh": "#!/bin/sh\r\nhostname\r\n"},
			args:  []string{"dos.sh"},
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n" +
				"sbatch: error: instead of expected UNIX line breaks (\\n).\n"},
		},
		"SLURM_EXIT_ERROR": {
			env:   map[string]string{"SLURM_EXIT_ERROR": "7"},
			stdin: "",
			want:  clitest.Run{Code: 7, Stderr: "sbatch: error: Batch script is empty!\n"},
		},
		"missing file": {
			args: []string{"nosuch.sh"},
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: Unable to open file nosuch.sh\n"},
		},
		"wrap with arguments": {
			args: []string{"--wrap", "true", "extra"},
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: Script arguments not permitted with --wrap option\n"},
		},
		"unmatched quote": {
			files: map[string]string{"q.sh": "#!/bin/sh\n#SBATCH -J \"x\ntrue\n"},
			args:  []string{"q.sh"},
			want:  clitest.Run{Code: 1, Stderr: "sbatch: fatal: q.sh: line 2: Unmatched `\"` in [ \"x]\n"},
		},
		"invalid directive value": {
			stdin: "#!/bin/sh\n#SBATCH --time=abc\ntrue\n",
			args:  []string{"--time=10"},
			want:  clitest.Run{Code: 255, Stderr: "sbatch: error: Invalid --time specification\n"},
		},
		"legacy directive warns and applies": {
			stdin: "#!/bin/sh\n#SLURM --time=abc\ntrue\n",
			want: clitest.Run{Code: 255, Stderr: "sbatch: error: Change from #SLURM to #SBATCH in your script and verify the options are valid in sbatch\n" +
				"sbatch: error: Invalid --time specification\n"},
		},
		"array of a hetjob": {
			args: []string{"--array=1-2", "-N1", ":", "-N2", "--wrap", "true"},
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: Job arrays not supported with heterogeneous jobs\n"},
		},
		"unknown option after the script is read": {
			args: []string{"--bogus", "nosuch.sh"},
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: Unable to open file nosuch.sh\n"},
		},
		"rejected with detail": {
			args:  []string{"-p", "nosuch", "--wrap", "true"},
			reply: rejected(500, 2000, "Invalid partition name specified", "invalid partition specified: nosuch"),
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: invalid partition specified: nosuch\n" +
				"sbatch: error: Batch job submission failed: Invalid partition name specified\n"},
		},
		"rejected by real slurmrestd wording": {
			args:  []string{"--wrap", "true"},
			reply: rejected(422, 2127, "Environment is missing in job", "Batch job submission failed"),
			want:  clitest.Run{Code: 1, Stderr: "sbatch: error: Batch job submission failed: Environment is missing in job\n"},
		},
		"bad array": {
			args: []string{"--array=1-x", "--wrap", "true"},
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: Batch job submission failed: Invalid job array specification\n"},
		},
		"accepted without a job id": {
			args: []string{"--wrap", "true"},
			reply: &v0044.V0044OpenapiJobSubmitResponse{Warnings: v0044.V0044OpenapiWarnings{
				{Description: str("Expected integer but got string"), Source: str("tasks")},
			}},
			want: clitest.Run{Code: 1, Stderr: "sbatch: error: Batch job submission failed: Expected integer but got string\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			for p, b := range tc.files {
				writeScript(t, f.h.Env.Cwd, p, b)
			}
			for k, v := range tc.env {
				f.h.Vars[k] = v
			}
			if tc.reply != nil {
				f.srv.replies = []v0044.SlurmV0044PostJobSubmitRes{tc.reply}
			}
			got := f.run(tc.stdin, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// anonymous sends no credentials.
type anonymous struct{}

func (anonymous) BearerAuth(context.Context, v0044.OperationName) (v0044.BearerAuth, error) {
	return v0044.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}
func (anonymous) Token(context.Context, v0044.OperationName) (v0044.Token, error) {
	return v0044.Token{}, ogenerrors.ErrSkipClientSecurity
}
func (anonymous) User(context.Context, v0044.OperationName) (v0044.User, error) {
	return v0044.User{}, ogenerrors.ErrSkipClientSecurity
}

func TestControllerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	client, err := v0044.NewClient("http://"+addr, anonymous{})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.h.Env.Client = client
	got := f.run("", "--wrap", "true")
	want := clitest.Run{Code: 1, Stderr: "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRetryWhileBusy(t *testing.T) {
	f := newFixture(t)
	busy := rejected(500, 2016, "Requested nodes are busy", "Batch job submission failed")
	f.srv.replies = []v0044.SlurmV0044PostJobSubmitRes{busy, busy, ok(9)}
	got := f.run("", "--wrap", "true")
	want := clitest.Run{Stdout: "Submitted batch job 9\n", Stderr: "sbatch: Job creation temporarily disabled, retrying\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, f.proc.slept); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
}

func TestWait(t *testing.T) {
	job := func(state string, status string, rc int32) v0044.V0044JobInfo {
		return v0044.V0044JobInfo{
			JobState: []v0044.V0044JobInfoJobStateItem{v0044.V0044JobInfoJobStateItem(state)},
			ExitCode: v0044.NewOptV0044ProcessExitCodeVerbose(v0044.V0044ProcessExitCodeVerbose{
				Status: []v0044.V0044ProcessExitCodeVerboseStatusItem{v0044.V0044ProcessExitCodeVerboseStatusItem(status)},
				ReturnCode: v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
					Set: yes, Number: i32(rc),
				}),
			}),
		}
	}
	resp := func(jobs ...v0044.V0044JobInfo) v0044.SlurmV0044GetJobRes {
		return &v0044.V0044OpenapiJobInfoResp{Jobs: jobs}
	}
	f := newFixture(t)
	f.srv.replies = []v0044.SlurmV0044PostJobSubmitRes{ok(12)}
	f.srv.jobs = []v0044.SlurmV0044GetJobRes{
		resp(job("PENDING", "PENDING", 0)),
		resp(job("COMPLETED", "SUCCESS", 0), job("RUNNING", "PENDING", 0)),
		resp(job("COMPLETED", "SUCCESS", 0), job("FAILED", "ERROR", 3)),
	}
	got := f.run("", "-W", "--wrap", "true")
	if diff := cmp.Diff(clitest.Run{Code: 3, Stdout: "Submitted batch job 12\n"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{2 * time.Second, 8 * time.Second, 32 * time.Second}, f.proc.slept); diff != "" {
		t.Errorf("sleeps (-want +got):\n%s", diff)
	}
}

func TestRlimits(t *testing.T) {
	limits := map[string]uint64{"NOFILE": 1024, "CORE": 0, "AS": 18446744073709551615}
	tests := map[string]struct {
		args []string
		want []string
	}{
		"all by default": {
			want: []string{"SLURM_RLIMIT_AS=18446744073709551615", "SLURM_RLIMIT_CORE=0", "SLURM_RLIMIT_NOFILE=1024"},
		},
		"chosen by the user": {
			args: []string{"--propagate=NOFILE,RLIMIT_CORE"},
			want: []string{"SLURM_RLIMIT_CORE=U0", "SLURM_RLIMIT_NOFILE=U1024"},
		},
		"none": {
			args: []string{"--propagate=NONE"},
		},
		"not with get-user-env": {
			args: []string{"--get-user-env"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.proc.limits = limits
			if got := f.run("", append(tc.args, "--wrap", "true")...); got.Code != 0 {
				t.Fatalf("run: %+v", got)
			}
			var got []string
			for _, kv := range f.srv.lastJob(t).Environment {
				if strings.HasPrefix(kv, "SLURM_RLIMIT_") {
					got = append(got, kv)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A heterogeneous job's components come from "#SBATCH hetjob" sections
// and ":" on the command line, each section's options over what the one
// before it carries over (not its shape: nodes, tasks, partition...).
func TestHetJob(t *testing.T) {
	f := newFixture(t)
	script := "#!/bin/sh\n#SBATCH -J lead -N1 -n2 -p debug -A proj --mem-per-cpu=100\n#SBATCH hetjob\n#SBATCH -N2 --ntasks=3\nsrun true\n"
	got := f.run(script, "-t", "10", ":", "-c2", ":", "-J", "third")
	if got.Code != 0 || got.Stdout != "Submitted batch job 138\n" {
		t.Fatalf("sbatch: %+v", got)
	}
	f.srv.mu.Lock()
	req := f.srv.reqs[len(f.srv.reqs)-1]
	f.srv.mu.Unlock()
	if req.Job.Set || len(req.Jobs) != 3 {
		t.Fatalf("request has job=%v and %d components, want 3 components", req.Job.Set, len(req.Jobs))
	}
	type comp struct {
		name, partition, account  string
		nodes, tasks, cpusPerTask int32
		time                      int32
		script                    bool
	}
	var comps []comp
	for _, d := range req.Jobs {
		comps = append(comps, comp{
			name: d.Name.Or(""), partition: d.Partition.Or(""), account: d.Account.Or(""), nodes: d.MinimumNodes.Or(0),
			tasks: d.Tasks.Or(0), cpusPerTask: d.CpusPerTask.Or(0), time: d.TimeLimit.Value.Number.Or(0), script: d.Script.Or("") != "",
		})
	}
	want := []comp{
		{name: "lead", partition: "debug", account: "proj", nodes: 1, tasks: 2, time: 10, script: true},
		{name: "lead", account: "proj", nodes: 2, tasks: 3, cpusPerTask: 2, time: 10},
		{name: "third", account: "proj", time: 10},
	}
	if diff := cmp.Diff(want, comps, cmp.AllowUnexported(comp{})); diff != "" {
		t.Errorf("components (-want +got):\n%s", diff)
	}
	env := map[string]string{}
	for _, kv := range req.Jobs[0].Environment {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range map[string]string{
		"SLURM_NTASKS_HET_GROUP_0": "2", "SLURM_NPROCS_PACK_GROUP_1": "3", "SLURM_CPUS_PER_TASK_HET_GROUP_1": "2",
	} {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["SLURM_NTASKS"]; ok {
		t.Errorf("SLURM_NTASKS set for a heterogeneous job: the node daemon sets it from the first component")
	}
}
