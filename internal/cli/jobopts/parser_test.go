package jobopts

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/timefmt"
)

var testNow = time.Date(2026, 11, 29, 14, 59, 45, 0, time.UTC)

// input is one invocation: directive words, environment, command line.
type input struct {
	directives []string
	env        map[string]string
	args       []string
	uid        uint32
	files      map[string]string
}

func (in input) parser() *Parser {
	return NewSbatch(Config{
		Prog: "sbatch",
		Now:  testNow,
		Cwd:  "/home/alice/project",
		UID:  in.uid,
		LookupEnv: func(k string) (string, bool) {
			v, ok := in.env[k]
			return v, ok
		},
		ReadFile: func(name string) ([]byte, error) {
			if s, ok := in.files[name]; ok {
				return []byte(s), nil
			}
			return nil, errors.New("no such file")
		},
		LookupGroup: func(s string) (uint32, error) {
			if s == "root" || s == "0" {
				return 0, nil
			}
			return 0, errors.New("unknown group")
		},
		LookupUser: func(s string) (uint32, error) {
			switch s {
			case "root", "0":
				return 0, nil
			case "alice", "1000":
				return 1000, nil
			case "nobody", "99":
				return 99, nil
			}
			return 0, errors.New("unknown user")
		},
	})
}

// parse runs sbatch's passes in order and returns the options or the Exit.
func (in input) parse() (*Options, *Exit) {
	p := in.parser()
	steps := []func() error{
		func() error { _, err := p.ParseEarly(in.args); return err },
		func() error { return p.ParseDirectives(in.directives) },
		p.ParseEnv,
		func() error { return p.ParseCommandLine(in.args) },
		p.Finish,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			var e *Exit
			if !errors.As(err, &e) {
				panic(err)
			}
			return nil, e
		}
	}
	return p.Options(), nil
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		in   input
		want Exit
	}{
		"unknown option": {
			in:   input{args: []string{"--nosuchoption", "--wrap", "sleep 1"}},
			want: Exit{Code: 255, Stderr: "sbatch: unrecognized option '--nosuchoption'\nTry \"sbatch --help\" for more information\n"},
		},
		"unknown directive": {
			in:   input{directives: []string{"--nosuchdirective=5"}},
			want: Exit{Code: 255, Stderr: "sbatch: unrecognized option '--nosuchdirective=5'\nTry \"sbatch --help\" for more information\n"},
		},
		"directive errors come before command line errors": {
			in:   input{directives: []string{"--time=abc"}, args: []string{"--bogus"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --time specification\n"},
		},
		"non-option directive": {
			in:   input{directives: []string{"-N1", "hostname"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid directive found in batch script: hostname\n"},
		},
		"invalid time": {
			in:   input{args: []string{"--time=abc"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --time specification\n"},
		},
		"invalid time in environment": {
			in:   input{env: map[string]string{"SBATCH_TIMELIMIT": "x"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --time specification\n"},
		},
		"invalid mem": {
			in:   input{args: []string{"--mem=10Q"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --mem specification\n"},
		},
		"ntasks not a number exits 1": {
			in:   input{args: []string{"-n", "abc"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: Invalid numeric value \"abc\" for --ntasks.\n"},
		},
		"ntasks zero": {
			in:   input{args: []string{"--ntasks=0"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: Invalid numeric value \"0\" for --ntasks.\n"},
		},
		"cpus too large": {
			in:   input{args: []string{"-c", "99999999999"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: Numeric argument (99999999999) too large for --cpus-per-task.\n"},
		},
		"bad node count": {
			in:   input{args: []string{"-N", "x"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: \"x\" is not a valid node count\n"},
		},
		"node range backwards": {
			in:   input{args: []string{"-N", "4-2"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Maximum node count 2 is less than minimum node count 4\n"},
		},
		"bad begin": {
			in:   input{args: []string{"--begin=25:00"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid time specification (pos=0): 25:00\nsbatch: error: Invalid --begin specification\n"},
		},
		"bad mail type": {
			in:   input{args: []string{"--mail-type=nothing"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --mail-type specification\n"},
		},
		"bad open mode": {
			in:   input{args: []string{"--open-mode=x"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --open-mode specification\n"},
		},
		"bad exclusive": {
			in:   input{args: []string{"--exclusive=all"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --exclusive specification\n"},
		},
		"bad signal": {
			in:   input{args: []string{"--signal=NOPE@10"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --signal specification\n"},
		},
		"nice out of range": {
			in:   input{args: []string{"--nice=3000000000"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)\n"},
		},
		"negative priority": {
			in:   input{args: []string{"--priority=-1"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Priority must be >= 0\n"},
		},
		"uid needs root": {
			in:   input{uid: 1000, args: []string{"--uid=alice"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: --uid only permitted by root user\n"},
		},
		"uid unknown": {
			in:   input{args: []string{"--uid=mallory"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --uid specification\n"},
		},
		"uid nobody": {
			in:   input{args: []string{"--uid=nobody"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Rejecting --uid as nobody specification\n"},
		},
		"mem options exclusive": {
			in:   input{directives: []string{"--mem=1G"}, args: []string{"--mem-per-cpu=100"}},
			want: Exit{Code: 1, Stderr: "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"},
		},
		"exclusive and oversubscribe": {
			in:   input{args: []string{"--exclusive", "-s"}},
			want: Exit{Code: 1, Stderr: "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive\n"},
		},
		"verbose and quiet": {
			in:   input{args: []string{"-v", "-Q"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)\n"},
		},
		"unsupported option": {
			in:   input{args: []string{"--test-only"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: --test-only is not supported by Drover\n"},
		},
		"ambiguous": {
			in:   input{args: []string{"--cl=x"}},
			want: Exit{Code: 255, Stderr: "sbatch: option '--cl=x' is ambiguous; possibilities: '--cluster-constraint' '--cluster' '--clusters'\nTry \"sbatch --help\" for more information\n"},
		},
		"cpus per gpu without gpus": {
			in: input{args: []string{"--cpus-per-gpu=4"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: Requested cpus_per_tres=gres/gpu:4 but did not request any GPU.\n" +
				"sbatch: error: Invalid generic resource (gres) specification\n"},
		},
		"bad gres": {
			in:   input{args: []string{"--gres=gpu:a:b:c"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: Invalid generic resource (gres) specification\n"},
		},
		"bad propagate": {
			in:   input{args: []string{"--propagate=NOFILE,BOGUS"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: Bad rlimit name: BOGUS\nsbatch: error: --propagate=NOFILE,BOGUS is not valid.\n"},
		},
		"bad hint": {
			in:   input{args: []string{"--hint=fast"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: unrecognized --hint argument \"fast\", see --hint=help\n"},
		},
		"deadline before begin": {
			in:   input{args: []string{"--begin=now+1hour", "--deadline=now"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: Incompatible begin and deadline time specification\n"},
		},
		"core and thread spec": {
			in:   input{directives: []string{"-S", "2"}, args: []string{"--thread-spec=1"}},
			want: Exit{Code: 1, Stderr: "sbatch: fatal: -S/--core-spec and --thred-spec options are mutually exclusive\n"},
		},
		"tres per task mem": {
			in:   input{args: []string{"--tres-per-task=mem=1"}},
			want: Exit{Code: 1, Stderr: "sbatch: fatal: Invalid TRES for --tres-per-task: mem\n"},
		},
		"cpus per task twice": {
			in:   input{args: []string{"-c2", "--tres-per-task=cpu=4"}},
			want: Exit{Code: 1, Stderr: "sbatch: fatal: You can not have --tres-per-task=cpu= and --cpus-per-task please use one or the other\n"},
		},
		"version": {
			in:   input{args: []string{"--bogus", "-V"}},
			want: Exit{Code: 0, Stdout: "slurm 25.11.0\n"},
		},
		"plane without size": {
			in:   input{args: []string{"-m", "plane"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid plane size or size not specified\nsbatch: error: Invalid --distribution specification\n"},
		},
		"arbitrary without nodelist": {
			in:   input{args: []string{"-m", "arbitrary"}},
			want: Exit{Code: 1, Stderr: "sbatch: error: With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option\n"},
		},
		"missing nodefile": {
			in:   input{args: []string{"--nodefile=hosts"}},
			want: Exit{Code: 255, Stderr: "sbatch: error: Invalid --nodefile node file\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, got := tc.in.parse()
			if got == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// ignore lists the Options fields a test does not look at.
var ignore = cmpopts.IgnoreFields(Options{}, "Sources", "impliedTasks", "Chdir", "Input", "EnvVars")

func TestParseValues(t *testing.T) {
	minutes := func(m uint32) Maybe[timefmt.Limit] { return Some(timefmt.Limit{Minutes: m}) }
	tests := map[string]struct {
		in   input
		want Options
	}{
		"nothing": {},
		"counts": {
			in: input{args: []string{"-N2-4", "-n8", "-c2", "--ntasks-per-node=4"}},
			want: Options{
				Nodes: Some(NodeCount{Min: 2, Max: 4}), Ntasks: Some(8), CPUsPerTask: Some(2),
				NtasksPerNode: Some(4), MinCPUs: Some(2), TRESPerTask: "cpu=2",
			},
		},
		"node count suffix and list": {
			in:   input{args: []string{"-N", "1k"}},
			want: Options{Nodes: Some(NodeCount{Min: 1024, Max: 1024})},
		},
		"node sizes": {
			in:   input{args: []string{"--nodes=1,4,8"}},
			want: Options{Nodes: Some(NodeCount{Min: 1, Max: 8, Sizes: "1,4,8"})},
		},
		"memory units": {
			in:   input{args: []string{"--mem=2G", "--tmp=1500K"}},
			want: Options{Mem: Some(uint64(2048)), TmpDisk: Some(uint64(2))},
		},
		"mem per cpu": {
			in:   input{args: []string{"--mem-per-cpu=512MB"}},
			want: Options{MemPerCPU: Some(uint64(512))},
		},
		"time": {
			in:   input{args: []string{"-t", "1-00:00:30", "--time-min=0"}},
			want: Options{TimeLimit: minutes(1441), TimeMin: Some(timefmt.Unlimited)},
		},
		"names": {
			in: input{args: []string{"-Jx", "-Aacct", "-pdebug", "-qnormal", "--reservation=r", "--comment=c", "-Cfeat", "--wckey=w"}},
			want: Options{JobName: Some("x"), Account: "acct", Partition: "debug", QOS: "normal",
				Reservation: "r", Comment: "c", Constraint: "feat", WCKey: "w"},
		},
		"hold and requeue": {
			in:   input{args: []string{"-H", "--requeue=expedite"}},
			want: Options{Hold: Some(true), Requeue: Some(true), Expedite: true},
		},
		"no-requeue": {
			in:   input{args: []string{"--no-requeue"}},
			want: Options{Requeue: Some(false)},
		},
		"nice default": {
			in:   input{args: []string{"--nice"}},
			want: Options{Nice: Some(100)},
		},
		"nice ignores junk like strtoll": {
			in:   input{args: []string{"--nice=-5x"}},
			want: Options{Nice: Some(-5)},
		},
		"exclusive user": {
			in:   input{args: []string{"--exclusive=user"}},
			want: Options{Shared: SharedUser},
		},
		"mail": {
			in:   input{args: []string{"--mail-type=fail,BEGIN,bogus", "--mail-user=a@b"}},
			want: Options{MailType: Some([]string{"BEGIN", "FAIL"}), MailUser: "a@b"},
		},
		"mail all": {
			in:   input{args: []string{"--mail-type=ALL"}},
			want: Options{MailType: Some([]string{"BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT", "INVALID_DEPENDENCY"})},
		},
		"signal": {
			in:   input{args: []string{"--signal=RB:SIGUSR2@120"}},
			want: Options{Signal: Some(Signal{Signal: "12", Delay: 120, Batch: true, Reservation: true})},
		},
		"signal default delay": {
			in:   input{args: []string{"--signal=10"}},
			want: Options{Signal: Some(Signal{Signal: "10", Delay: 60})},
		},
		"output none and relative": {
			in:   input{args: []string{"-o", "none", "-e", "err_%j.txt"}},
			want: Options{Output: "/dev/null", Error: "/home/alice/project/err_%j.txt"},
		},
		"chdir relative": {
			in:   input{args: []string{"-D", "sub", "-o", "out"}},
			want: Options{Output: "/home/alice/project/sub/out"},
		},
		"gres": {
			in:   input{args: []string{"--gres=gpu:2,gres/nic:1", "-G", "a100:1"}},
			want: Options{GRES: "gres/gpu:2,gres/nic:1", GPUs: "a100:1"},
		},
		"gpus per task feed tres per task": {
			in: input{args: []string{"--gpus-per-task=2", "-c4"}},
			want: Options{GPUsPerTask: "2", CPUsPerTask: Some(4), MinCPUs: Some(4),
				TRESPerTask: "cpu=4,gres/gpu=2", TRESBind: "gres/gpu:per_task:2"},
		},
		"tres per task sets cpus": {
			in:   input{args: []string{"--tres-per-task=cpu=3"}},
			want: Options{CPUsPerTask: Some(3), MinCPUs: Some(3), TRESPerTask: "cpu=3"},
		},
		"fixed nodes imply tasks from -B": {
			in: input{args: []string{"-N2", "-B", "2:*:1"}},
			want: Options{Nodes: Some(NodeCount{Min: 2, Max: 2}), Ntasks: Some(4),
				SocketsPerNode: Some(2), ThreadsPerCore: Some(1)},
		},
		"few tasks shrink nodes": {
			in: input{args: []string{"-N4", "-n2"}},
			want: Options{Nodes: Some(NodeCount{Min: 2, Max: 2}), Ntasks: Some(2),
				Warnings: []string{"can't run 2 processes on 4 nodes, setting nnodes to 2"}},
		},
		"nodelist sets node count": {
			in:   input{args: []string{"-w", "n[1-3],n2"}},
			want: Options{NodeList: "n[1-3],n2", Nodes: Some(NodeCount{Min: 3})},
		},
		"nodefile": {
			in:   input{args: []string{"-F", "hosts"}, files: map[string]string{"/home/alice/project/hosts": "n1 n2\n# c\nn[3-4]\n"}},
			want: Options{NodeFile: "hosts", NodeList: "n1,n2,n3,n4", Nodes: Some(NodeCount{Min: 4})},
		},
		"hint": {
			in:   input{args: []string{"--hint=nomultithread"}},
			want: Options{Hint: "nomultithread", ThreadsPerCore: Some(1)},
		},
		"hint loses to cli sibling": {
			in:   input{env: map[string]string{"SLURM_HINT": "compute_bound"}, args: []string{"--threads-per-core=2"}},
			want: Options{ThreadsPerCore: Some(2)},
		},
		"distribution": {
			in:   input{args: []string{"-m", "Block:*,nopack"}},
			want: Options{Distribution: "block:cyclic", DistPack: "nopack"},
		},
		"plane from environment size": {
			in:   input{env: map[string]string{"SLURM_DIST_PLANESIZE": "4"}, args: []string{"-m", "plane"}},
			want: Options{Distribution: "plane", PlaneSize: Some(4)},
		},
		"uid": {
			in:   input{args: []string{"--uid=alice", "--gid=0"}, uid: 0},
			want: Options{UID: Some(uint32(1000)), GID: Some(uint32(0))},
		},
		"early options": {
			in:   input{args: []string{"-vv", "--wrap", "hostname", "--parsable"}},
			want: Options{Verbose: 2, Wrap: Some("hostname"), Parsable: true},
		},
		"wrap in directive is ignored": {
			in:   input{directives: []string{"--wrap=hostname", "-v"}},
			want: Options{},
		},
		"profile": {
			in:   input{args: []string{"--profile=Task,energy"}},
			want: Options{Profile: []string{"ENERGY", "TASK"}},
		},
		"switches": {
			in:   input{args: []string{"--switches=2@10:00"}},
			want: Options{Switches: Some(2), SwitchWait: Some(600)},
		},
		"core spec then thread spec": {
			in:   input{env: map[string]string{"SBATCH_CORE_SPEC": "2"}, args: []string{"--thread-spec=1"}},
			want: Options{ThreadSpec: Some(1)},
		},
		"mem bind": {
			in:   input{args: []string{"--mem-bind=verbose,map_mem:0,1"}},
			want: Options{MemBind: "verbose,map_mem:0,1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, e := tc.in.parse()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			if diff := cmp.Diff(tc.want, *got, ignore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrecedence checks Slurm's order: command line over environment over
// directives.
func TestPrecedence(t *testing.T) {
	tests := map[string]struct {
		in         input
		partition  string
		time       uint32
		name       string
		wantSource Source
	}{
		"directive only": {
			in:        input{directives: []string{"-p", "dir", "-t", "5", "-J", "d"}},
			partition: "dir", time: 5, name: "d", wantSource: FromScript,
		},
		"environment beats directive": {
			in: input{directives: []string{"-p", "dir", "-t", "5", "-J", "d"},
				env: map[string]string{"SBATCH_PARTITION": "env", "SBATCH_TIMELIMIT": "6", "SBATCH_JOB_NAME": "e"}},
			partition: "env", time: 6, name: "e", wantSource: FromEnv,
		},
		"command line beats both": {
			in: input{directives: []string{"-p", "dir", "-t", "5", "-J", "d"},
				env:  map[string]string{"SBATCH_PARTITION": "env", "SBATCH_TIMELIMIT": "6", "SBATCH_JOB_NAME": "e"},
				args: []string{"--partition=cli", "--time=7", "-J", "c"}},
			partition: "cli", time: 7, name: "c", wantSource: FromCommandLine,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, e := tc.in.parse()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			got := []any{o.Partition, o.TimeLimit.Val.Minutes, o.JobName.Val, o.Sources["partition"]}
			want := []any{tc.partition, tc.time, tc.name, tc.wantSource}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvFlags(t *testing.T) {
	tests := map[string]struct {
		value string
		want  Options
	}{
		"empty sets":     {value: "", want: Options{Requeue: Some(false)}},
		"yes sets":       {value: "YES", want: Options{Requeue: Some(false)}},
		"number sets":    {value: "1", want: Options{Requeue: Some(false)}},
		"zero resets":    {value: "0", want: Options{}},
		"no resets":      {value: "no", want: Options{}},
		"junk resets":    {value: "1x", want: Options{}},
		"reset wins too": {value: "false", want: Options{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := input{directives: []string{"--no-requeue"}, env: map[string]string{"SBATCH_NO_REQUEUE": tc.value}}
			if tc.want.Requeue.Set {
				in.directives = nil
			}
			o, e := in.parse()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			if diff := cmp.Diff(tc.want, *o, ignore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMemoryEnvironmentLosesToCommandLine(t *testing.T) {
	o, e := input{env: map[string]string{"SBATCH_MEM_PER_CPU": "100"}, args: []string{"--mem=1G"}}.parse()
	if e != nil {
		t.Fatalf("exit: %+v", e)
	}
	if diff := cmp.Diff([]any{Some(uint64(1024)), false}, []any{o.Mem, o.MemPerCPU.Set}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHelp(t *testing.T) {
	_, e := input{args: []string{"--help"}}.parse()
	if e == nil || e.Code != 0 || e.Stdout == "" {
		t.Fatalf("--help: %+v", e)
	}
	for _, want := range []string{
		"Usage: sbatch [OPTIONS...] script [args...]\n",
		"  -J, --job-name=jobname      name of job\n",
		"      --nice[=value]          decrease scheduling priority by value\n",
		"  -V, --version               output version information and exit\n",
	} {
		if !contains(e.Stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if contains(e.Stdout, "--test-only") {
		t.Error("help lists an unsupported option")
	}
	_, e = input{args: []string{"--usage"}}.parse()
	if e == nil || e.Code != 0 || !contains(e.Stdout, "Usage: sbatch [-N nnodes] [-n ntasks]\n") {
		t.Fatalf("--usage: %+v", e)
	}
}

func contains(s, sub string) bool {
	return len(sub) <= len(s) && (func() bool {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
		return false
	})()
}

func TestFlagSet(t *testing.T) {
	p := input{}.parser()
	if err := p.ParseCommandLine([]string{"-N2", "--part=debug"}); err != nil {
		t.Fatal(err)
	}
	f := p.FlagSet().Lookup("partition")
	if f == nil || !f.Changed || f.Shorthand != "p" || f.Value.String() != "debug" {
		t.Fatalf("partition flag: %+v", f)
	}
	if p.FlagSet().Lookup("nodes").Value.Type() != "string" || p.FlagSet().Lookup("hold").Value.Type() != "bool" {
		t.Error("flag types")
	}
}

func TestFlagSetSet(t *testing.T) {
	p := input{}.parser()
	if err := p.FlagSet().Set("partition", "debug"); err != nil {
		t.Fatal(err)
	}
	if err := p.FlagSet().Set("hold", ""); err != nil {
		t.Fatal(err)
	}
	err := p.FlagSet().Set("time", "abc")
	var e *Exit
	if !errors.As(err, &e) || e.Code != 255 {
		t.Fatalf("bad --time: %v", err)
	}
	o := p.Options()
	if diff := cmp.Diff([]any{"debug", Some(true), FromCommandLine}, []any{o.Partition, o.Hold, o.Sources["hold"]}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
