package jobopts

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/timefmt"
)

// run is one srun or salloc invocation: environment and command line.
type run struct {
	env   map[string]string
	args  []string
	uid   uint32
	files map[string]string
}

func (r run) config(prog string) Config {
	return Config{
		Prog: prog,
		Now:  testNow,
		Cwd:  "/home/alice/project",
		UID:  r.uid,
		LookupEnv: func(k string) (string, bool) {
			v, ok := r.env[k]
			return v, ok
		},
		ReadFile: func(name string) ([]byte, error) {
			if s, ok := r.files[name]; ok {
				return []byte(s), nil
			}
			return nil, errors.New("no such file")
		},
	}
}

// parse runs a srun or salloc parser's passes in Slurm's order:
// environment, command line, checks.
func (r run) parse(p *Parser) (*Options, []string, *Exit) {
	var operands []string
	steps := []func() error{
		p.ParseEnv,
		func() (err error) { operands, err = p.ParseArgs(r.args); return err },
		p.Finish,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			var e *Exit
			if !errors.As(err, &e) {
				panic(err)
			}
			return nil, nil, e
		}
	}
	return p.Options(), operands, nil
}

func (r run) srun() (*Options, []string, *Exit) { return r.parse(NewSrun(r.config("srun"))) }

func (r run) salloc() (*Options, []string, *Exit) { return r.parse(NewSalloc(r.config("salloc"))) }

// srunIgnore lists the fields srun tests do not look at unless they say so.
var srunIgnore = cmpopts.IgnoreFields(Options{}, "Sources", "impliedTasks", "Chdir", "EnvVars", "JobName", "CmdName")

// cmd appends a command to srun's arguments.
func cmd(args ...string) []string { return append(args, "hostname") }

func TestSrunOptions(t *testing.T) {
	tests := map[string]struct {
		in   run
		want Options
	}{
		"nothing":            {},
		"label":              {in: run{args: cmd("-l")}, want: Options{Label: true}},
		"label long":         {in: run{args: cmd("--label")}, want: Options{Label: true}},
		"unbuffered":         {in: run{args: cmd("-u")}, want: Options{Unbuffered: true}},
		"grouped flags":      {in: run{args: cmd("-luX")}, want: Options{Label: true, Unbuffered: true, DisableStatus: true}},
		"overlap":            {in: run{args: cmd("--overlap")}, want: Options{Overlap: true}},
		"overlap with value": {in: run{args: cmd("--overlap=force")}, want: Options{Overlap: true}},
		"exact":              {in: run{args: cmd("--exact")}, want: Options{Exact: true}},
		"whole":              {in: run{args: cmd("--whole")}, want: Options{Whole: true}},
		"exclusive is exact for a step": {
			in:   run{args: cmd("--exclusive")},
			want: Options{Shared: SharedNone, Exact: true},
		},
		"exclusive user is not": {in: run{args: cmd("--exclusive=user")}, want: Options{Shared: SharedUser}},
		"kill on bad exit":      {in: run{args: cmd("-K")}, want: Options{KillOnBadExit: Some(1)}},
		"kill on bad exit 0":    {in: run{args: cmd("-K0")}, want: Options{KillOnBadExit: Some(0)}},
		"kill on bad exit long": {in: run{args: cmd("--kill-on-bad-exit=1")}, want: Options{KillOnBadExit: Some(1)}},
		"optional -K does not take the next word": {
			in:   run{args: []string{"-K", "0", "x"}},
			want: Options{KillOnBadExit: Some(1)},
		},
		"wait":                 {in: run{args: cmd("-W", "30")}, want: Options{WaitSec: Some(30)}},
		"wait zero":            {in: run{args: cmd("--wait=0")}, want: Options{WaitSec: Some(0)}},
		"wait is not wait-for": {in: run{args: cmd("--wait-for-children")}, want: Options{WaitForChildren: true}},
		"relative":             {in: run{args: cmd("-r", "2")}, want: Options{Relative: Some(2)}},
		"relative zero":        {in: run{args: cmd("--relative=0")}, want: Options{Relative: Some(0)}},
		"cpu bind":             {in: run{args: cmd("--cpu-bind=cores")}, want: Options{CPUBind: "cores"}},
		"cpu bind underscore":  {in: run{args: cmd("--cpu_bind=map_cpu:0,1*2")}, want: Options{CPUBind: "map_cpu:0,1*2"}},
		"cpu bind mask list":   {in: run{args: cmd("--cpu-bind=verbose,mask_cpu:0x3,0xc,f")}, want: Options{CPUBind: "verbose,mask_cpu:0x3,0xc,f"}},
		"cpu bind none":        {in: run{args: cmd("--cpu-bind=no")}, want: Options{CPUBind: "no"}},
		"cpu bind ldom":        {in: run{args: cmd("--cpu-bind=rank_ldom,v")}, want: Options{CPUBind: "rank_ldom,v"}},
		"cpu bind rank is obsolete": {
			in:   run{args: cmd("--cpu-bind=rank")},
			want: Options{CPUBind: "rank", Messages: []string{"Ignoring --cpu-bind=rank. Rank binding is obsolete."}},
		},
		"mpi none":         {in: run{args: cmd("--mpi", "none")}, want: Options{MPI: "none"}},
		"mpi pmi2":         {in: run{args: cmd("--mpi=pmi2")}, want: Options{MPI: "pmi2"}},
		"disable status":   {in: run{args: cmd("-X")}, want: Options{DisableStatus: true}},
		"quit on int":      {in: run{args: cmd("--quit-on-interrupt")}, want: Options{QuitOnInterrupt: true}},
		"-q is the qos":    {in: run{args: cmd("-q", "high")}, want: Options{QOS: "high"}},
		"multi prog":       {in: run{args: cmd("--multi-prog")}, want: Options{MultiProg: true}},
		"pty":              {in: run{args: cmd("--pty")}, want: Options{Pty: true, Unbuffered: true}},
		"pty fd":           {in: run{args: cmd("--pty=3")}, want: Options{Pty: true, PtyFD: "3", Unbuffered: true}},
		"threads":          {in: run{args: cmd("-T", "4")}, want: Options{Threads: Some(4)}},
		"many threads":     {in: run{args: cmd("--threads=61")}, want: Options{Threads: Some(61), Messages: []string{"error: Thread value --threads=61 exceeds recommended limit of 60"}}},
		"slurmd debug":     {in: run{args: cmd("--slurmd-debug=debug")}, want: Options{SlurmdDebug: Some(5)}},
		"slurmd debug max": {in: run{args: cmd("--slurmd-debug=9")}, want: Options{SlurmdDebug: Some(6), Messages: []string{"Using max slurmd-debug value of 'debug2'"}}},
		"slurmd debug min": {in: run{args: cmd("--slurmd-debug=quiet")}, want: Options{SlurmdDebug: Some(2), Messages: []string{"Using min slurmd-debug level of error"}}},
		"slurmd debug error for anyone": {
			in:   run{uid: 1000, args: cmd("--slurmd-debug=error")},
			want: Options{SlurmdDebug: Some(2)},
		},
		"jobid":           {in: run{args: cmd("--jobid=123")}, want: Options{JobID: Some(uint32(123))}},
		"jobid array":     {in: run{args: cmd("--jobid=123_4")}, want: Options{JobID: Some(uint32(123)), ArrayTaskID: Some(uint32(4))}},
		"jobid step":      {in: run{args: cmd("--jobid=123.4")}, want: Options{JobID: Some(uint32(123))}},
		"jobid het":       {in: run{args: cmd("--jobid=123+1")}, want: Options{JobID: Some(uint32(123))}},
		"jobid junk is 0": {in: run{args: cmd("--jobid=abc")}, want: Options{JobID: Some(uint32(0))}},
		"test only needs no command": {
			in:   run{args: []string{"--test-only", "-n4"}},
			want: Options{TestOnly: true, Ntasks: Some(4)},
		},
		"preserve env": {in: run{args: cmd("-E")}, want: Options{PreserveEnv: true}},
		"task prolog and epilog": {
			in:   run{args: cmd("--task-prolog=/bin/pre", "--task-epilog", "post")},
			want: Options{TaskProlog: "/bin/pre", TaskEpilog: "post"},
		},
		"prolog and epilog": {
			in:   run{args: cmd("--prolog=a", "--epilog=b")},
			want: Options{Prolog: "a", Epilog: "b"},
		},
		"send libs":    {in: run{args: cmd("--send-libs")}, want: Options{SendLibs: Some(true)}},
		"send libs no": {in: run{args: cmd("--send-libs=N")}, want: Options{SendLibs: Some(false)}},
		"no allocate": {
			in:   run{args: cmd("-Z", "-w", "n1")},
			want: Options{NoAllocate: true, NodeList: "n1", Nodes: Some(NodeCount{Min: 1}), Ntasks: Maybe[int]{}},
		},
		"immediate":         {in: run{args: cmd("-I")}, want: Options{Immediate: Some(1)}},
		"immediate secs":    {in: run{args: cmd("-I5")}, want: Options{Immediate: Some(5)}},
		"immediate long":    {in: run{args: cmd("--immediate=0")}, want: Options{Immediate: Some(0)}},
		"external launcher": {in: run{args: cmd("--external-launcher")}, want: Options{ExternalLauncher: true}},
		"accel bind":        {in: run{args: cmd("--accel-bind=gv")}, want: Options{AccelBind: "gv"}},
		"treewidth":         {in: run{args: cmd("--treewidth=off")}, want: Options{TreeWidth: Some(0xfffd)}},
		"io patterns stay as given": {
			in:   run{args: cmd("-o", "out-%t.txt", "-e", "err", "-i", "0")},
			want: Options{Output: "out-%t.txt", Error: "err", Input: "0"},
		},
		"io none":            {in: run{args: cmd("-i", "none", "-o", "NONE")}, want: Options{Input: "/dev/null", Output: "/dev/null"}},
		"io all":             {in: run{args: cmd("--input=all")}, want: Options{Input: "all"}},
		"allow task sharing": {in: run{args: cmd("--gres-flags=allow-task-sharing")}, want: Options{GRESAllowTaskSharing: true}},
		"hint binds threads": {
			in:   run{args: cmd("--hint=nomultithread")},
			want: Options{Hint: "nomultithread", ThreadsPerCore: Some(1), CPUBind: "threads,one_thread"},
		},
		"hint compute bound": {
			in:   run{args: cmd("--hint=compute_bound")},
			want: Options{Hint: "compute_bound", ThreadsPerCore: Some(1), CPUBind: "cores"},
		},
		"cli hint beats env cpu bind, keeps verbose": {
			in:   run{env: map[string]string{"SLURM_CPU_BIND": "verbose,cores"}, args: cmd("--hint=multithread")},
			want: Options{Hint: "multithread", NtasksPerCore: Some(0xffff), CPUBind: "verbose,threads"},
		},
		"cli cpu bind beats hint": {
			in:   run{args: cmd("--hint=multithread", "--cpu-bind=sockets")},
			want: Options{CPUBind: "sockets"},
		},
		"verbose cpu bind keeps hint": {
			in:   run{args: cmd("--hint=compute_bound", "--cpu-bind=v")},
			want: Options{Hint: "compute_bound", ThreadsPerCore: Some(1), CPUBind: "v,cores"},
		},
		"env hint loses to env threads per core": {
			in:   run{env: map[string]string{"SLURM_HINT": "nomultithread", "SLURM_THREADS_PER_CORE": "2"}},
			want: Options{ThreadsPerCore: Some(2), CPUBind: "threads"},
		},
		"threads per core binds to threads": {
			in:   run{args: cmd("--threads-per-core=2")},
			want: Options{ThreadsPerCore: Some(2), CPUBind: "threads"},
		},
		"threads per core keeps verbose": {
			in:   run{args: cmd("--threads-per-core=2", "--cpu-bind=v")},
			want: Options{ThreadsPerCore: Some(2), CPUBind: "threads,verbose"},
		},
		"threads per core leaves other binding": {
			in:   run{args: cmd("--threads-per-core=2", "--cpu-bind=sockets")},
			want: Options{ThreadsPerCore: Some(2), CPUBind: "sockets"},
		},
		"ntasks per core binds to cores": {
			in:   run{args: cmd("--ntasks-per-core=1")},
			want: Options{NtasksPerCore: Some(1), CPUBind: "cores"},
		},
		"ntasks per core 2 binds to threads": {
			in:   run{args: cmd("--ntasks-per-core=2", "--cpu-bind=verbose")},
			want: Options{NtasksPerCore: Some(2), CPUBind: "verbose,threads"},
		},
		"ntasks per socket binds to sockets": {
			in:   run{args: cmd("--ntasks-per-socket=2", "-n4")},
			want: Options{NtasksPerSocket: Some(2), Ntasks: Some(4), CPUBind: "sockets"},
		},
		"shared options keep their meaning": {
			in: run{args: cmd("-n8", "-N2", "-c2", "-m", "cyclic", "-w", "n[1-2]", "-x", "n3",
				"--ntasks-per-node=4", "--gres=gpu:2", "--gpus-per-task=1", "--gpu-bind=closest", "--mem=1G", "-p", "gpu", "-t", "10")},
			want: Options{
				Ntasks: Some(8), Nodes: Some(NodeCount{Min: 2, Max: 2}), CPUsPerTask: Some(2), MinCPUs: Some(2),
				Distribution: "cyclic", NodeList: "n[1-2]", Exclude: "n3", NtasksPerNode: Some(4),
				GRES: "gres/gpu:2", GPUsPerTask: "1", GPUBind: "closest",
				TRESBind: "gres/gpu:closest", TRESPerTask: "cpu=2,gres/gpu=1",
				Mem: Some(uint64(1024)), Partition: "gpu", TimeLimit: Some(timefmt.Limit{Minutes: 10}),
			},
		},
		"pack with inherited node count": {
			in:   run{env: map[string]string{"SLURM_JOB_NUM_NODES": "4"}, args: cmd("-m", "block,pack")},
			want: Options{Nodes: Some(NodeCount{Min: 1, Max: 4}), Distribution: "block", DistPack: "pack"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.in.args == nil {
				tc.in.args = cmd()
			}
			got, _, e := tc.in.srun()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			if diff := cmp.Diff(tc.want, *got, srunIgnore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSrunNames(t *testing.T) {
	tests := map[string]struct {
		in                      run
		job, step, cmdName, cwd string
	}{
		"named after the command": {
			in:  run{args: []string{"/usr/bin/hostname", "-f"}},
			job: "hostname", step: "hostname", cmdName: "hostname", cwd: "/home/alice/project",
		},
		"job name from the command line names the step": {
			in:  run{args: []string{"-J", "x", "-D", "sub", "a.out"}},
			job: "x", step: "x", cmdName: "a.out", cwd: "/home/alice/project/sub",
		},
		"inherited job name does not": {
			in:  run{env: map[string]string{"SLURM_JOB_NAME": "batch", "SLURM_WORKING_DIR": "/tmp"}, args: []string{"./a.out"}},
			job: "batch", step: "a.out", cmdName: "a.out", cwd: "/tmp",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, _, e := tc.in.srun()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			got := []string{o.JobName.Val, o.StepName(), o.CmdName, o.Chdir}
			if diff := cmp.Diff([]string{tc.job, tc.step, tc.cmdName, tc.cwd}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSrunErrors(t *testing.T) {
	tests := map[string]struct {
		in   run
		want Exit
	}{
		"unknown option": {
			in:   run{args: cmd("--nosuchoption")},
			want: Exit{Code: 255, Stderr: "srun: unrecognized option '--nosuchoption'\nTry \"srun --help\" for more information\n"},
		},
		"unknown short option": {
			in:   run{args: cmd("-y")},
			want: Exit{Code: 255, Stderr: "srun: invalid option -- 'y'\nTry \"srun --help\" for more information\n"},
		},
		"missing argument": {
			in:   run{args: []string{"-n"}},
			want: Exit{Code: 255, Stderr: "srun: option requires an argument -- 'n'\nTry \"srun --help\" for more information\n"},
		},
		"ambiguous": {
			in:   run{args: cmd("--cpu=1")},
			want: Exit{Code: 255, Stderr: "srun: option '--cpu=1' is ambiguous; possibilities: '--cpu-bind' '--cpu-freq' '--cpus-per-gpu' '--cpus-per-task'\nTry \"srun --help\" for more information\n"},
		},
		"sbatch only option": {
			in:   run{args: cmd("--array=1-3")},
			want: Exit{Code: 255, Stderr: "srun: unrecognized option '--array=1-3'\nTry \"srun --help\" for more information\n"},
		},
		"no command": {
			in:   run{args: []string{"-n2"}},
			want: Exit{Code: 1, Stderr: "srun: fatal: No command given to execute.\n"},
		},
		"bad task count": {
			in:   run{args: cmd("-n", "abc")},
			want: Exit{Code: 1, Stderr: "srun: error: Invalid numeric value \"abc\" for --ntasks.\n"},
		},
		"bad inherited task count": {
			in:   run{env: map[string]string{"SLURM_NTASKS": "x"}, args: cmd("--help")},
			want: Exit{Code: 1, Stderr: "srun: error: Invalid numeric value \"x\" for --ntasks.\n"},
		},
		"bad kill on bad exit": {
			in:   run{args: cmd("--kill-on-bad-exit=yes")},
			want: Exit{Code: 1, Stderr: "srun: error: Invalid numeric value \"yes\" for --kill-on-bad-exit.\n"},
		},
		"negative wait": {
			in:   run{args: cmd("-W", "-1")},
			want: Exit{Code: 1, Stderr: "srun: error: Invalid numeric value \"-1\" for --wait.\n"},
		},
		"zero threads": {
			in:   run{args: cmd("-T0")},
			want: Exit{Code: 1, Stderr: "srun: error: Invalid numeric value \"0\" for --threads.\n"},
		},
		"bad immediate": {
			in:   run{args: cmd("--immediate=soon")},
			want: Exit{Code: 1, Stderr: "srun: error: Invalid numeric value \"soon\" for immediate.\n"},
		},
		"bad send libs": {
			in:   run{args: cmd("--send-libs=maybe")},
			want: Exit{Code: 255, Stderr: "srun: error: Invalid --send-libs specification\n"},
		},
		"bad accel bind": {
			in:   run{args: cmd("--accel-bind=x")},
			want: Exit{Code: 255, Stderr: "srun: error: Invalid --accel-bind specification\n"},
		},
		"bad treewidth": {
			in:   run{args: cmd("--treewidth=wide")},
			want: Exit{Code: 255, Stderr: "srun: error: Invalid --treewidth value: wide\n"},
		},
		"slurmd debug for root only": {
			in:   run{uid: 1000, args: cmd("--slurmd-debug=debug")},
			want: Exit{Code: 255, Stderr: "srun: error: Use of --slurmd-debug is allowed only for root and SlurmUser(root)\n"},
		},
		"bad step": {
			in:   run{args: cmd("--jobid=12.x")},
			want: Exit{Code: 1, Stderr: "srun: fatal: Bad step specified: 12\n"},
		},
		"bad array task": {
			in:   run{args: cmd("--jobid=12_x")},
			want: Exit{Code: 1, Stderr: "srun: fatal: Bad job array element specified: 12\n"},
		},
		"bad cpu bind": {
			in: run{args: cmd("--cpu-bind=cores,bogus")},
			want: Exit{Code: 1, Stderr: "srun: error: unrecognized --cpu-bind argument \"bogus\"\n" +
				"srun: fatal: Failed to parse --cpu-bind= values.\n"},
		},
		"empty cpu bind": {
			in: run{args: cmd("--cpu-bind=")},
			want: Exit{Code: 1, Stderr: "srun: error: unrecognized --cpu-bind argument \"\"\n" +
				"srun: fatal: Failed to parse --cpu-bind= values.\n"},
		},
		"cpu bind map without list": {
			in: run{args: cmd("--cpu-bind=map_cpu")},
			want: Exit{Code: 1, Stderr: "srun: error: missing list for \"--cpu-bind=map_cpu:<list>\"\n" +
				"srun: fatal: Failed to parse --cpu-bind= values.\n"},
		},
		"cpu bind map with hex": {
			in: run{args: cmd("--cpu-bind=map_cpu:0,a")},
			want: Exit{Code: 1, Stderr: "srun: error: Failed to validate number: a, the offending character is a\n" +
				"srun: fatal: Failed to parse --cpu-bind= values.\n"},
		},
		"cpu bind mask": {
			in: run{args: cmd("--cpu-bind=mask_cpu:0x3,0xg")},
			want: Exit{Code: 1, Stderr: "srun: error: Failed to validate number: g, the offending character is g\n" +
				"srun: fatal: Failed to parse --cpu-bind= values.\n"},
		},
		"cpu bind multiplier": {
			in: run{args: cmd("--cpu-bind=map_cpu:1*0")},
			want: Exit{Code: 1, Stderr: "srun: error: Invalid map_cpu multiplier: 0\n" +
				"srun: error: Failed to expand list: '1*0'\n" +
				"srun: fatal: Failed to parse --cpu-bind= values.\n"},
		},
		"cpu bind help": {
			in:   run{args: cmd("--cpu-bind=help")},
			want: Exit{Code: 1, Stdout: cpuBindHelp},
		},
		"hint help": {
			in:   run{args: cmd("--hint=help")},
			want: Exit{Code: 1, Stdout: hintHelp},
		},
		"mem bind help": {
			in:   run{args: cmd("--mem-bind=help")},
			want: Exit{Code: 0, Stdout: memBindHelp},
		},
		"mpi list": {
			in:   run{args: []string{"--mpi=list"}},
			want: Exit{Code: 0, Stdout: "MPI plugin types are...\n\tnone\n\tpmi2\n"},
		},
		"unknown mpi": {
			in: run{args: cmd("--mpi=openmpi5")},
			want: Exit{Code: 1, Stderr: "srun: error: MPI: Cannot create context for mpi/openmpi5\n" +
				"srun: error: MPI: Unable to load any plugin\n" +
				"srun: error: Invalid MPI type 'openmpi5', --mpi=list for acceptable types\n"},
		},
		"unknown inherited mpi": {
			in: run{env: map[string]string{"SLURM_MPI_TYPE": "pmi"}, args: cmd()},
			want: Exit{Code: 1, Stderr: "srun: error: MPI: Cannot create context for mpi/pmi\n" +
				"srun: error: MPI: Unable to load any plugin\n" +
				"srun: error: Invalid MPI type 'pmi', --mpi=list for acceptable types\n"},
		},
		"problems are reported together": {
			in: run{args: cmd("-v", "-Q", "--exact", "--whole", "--exclusive", "--overlap")},
			want: Exit{Code: 1, Stderr: "srun: error: don't specify both --verbose (-v) and --quiet (-Q)\n" +
				"srun: error: --exact and --whole are mutually exclusive.\n" +
				"srun: error: --exclusive and --overlap are mutually exclusive\n"},
		},
		"then a fatal one": {
			in: run{args: cmd("--exact", "--whole", "--cpu-bind=x")},
			want: Exit{Code: 1, Stderr: "srun: error: --exact and --whole are mutually exclusive.\n" +
				"srun: error: unrecognized --cpu-bind argument \"x\"\n" +
				"srun: fatal: Failed to parse --cpu-bind= values.\n"},
		},
		"no allocate without node list": {
			in: run{args: cmd("-Z", "-x", "n1", "-r1")},
			want: Exit{Code: 1, Stderr: "srun: error: must specify a node list with -Z, --no-allocate.\n" +
				"srun: error: can not specify --exclude list with -Z, --no-allocate.\n" +
				"srun: error: do not specify -r,--relative with -Z,--no-allocate.\n" +
				"srun: error: -r,--relative not allowed with -w,--nodelist or -x,--exclude.\n"},
		},
		"ntasks per core above threads per core": {
			in:   run{args: cmd("--ntasks-per-core=4", "--threads-per-core=2")},
			want: Exit{Code: 1, Stderr: "srun: error: --ntasks-per-core (4) can not be bigger than --threads-per-core (2)\n"},
		},
		"pty with io": {
			in:   run{args: cmd("--pty", "-o", "out")},
			want: Exit{Code: 1, Stderr: "srun: error: --error/--input/--output are incompatible with --pty\n"},
		},
		"deadline before begin": {
			in:   run{args: cmd("--begin=now+1hour", "--deadline=now")},
			want: Exit{Code: 1, Stderr: "srun: error: Incompatible begin and deadline time specification\n"},
		},
		"gres flags combo": {
			in:   run{args: cmd("--gres-flags=enforce-binding,disable-binding")},
			want: Exit{Code: 255, Stderr: "srun: error: Invalid --gres-flags combo: disable-binding and enforce-binding are mutually exclusive.\n"},
		},
		"unsupported option": {
			in:   run{args: cmd("--bcast=/tmp/x")},
			want: Exit{Code: 255, Stderr: "srun: error: --bcast is not supported by Drover\n"},
		},
		"-N with an arbitrary distribution": {
			in:   run{args: cmd("-N2", "-m", "arbitrary", "-w", "n1,n1")},
			want: Exit{Code: 1, Stderr: "srun: error: --nodes is incompatible with --distribution=arbitrary\n"},
		},
		"an error before --version wins": {
			in:   run{args: cmd("--bogus-later", "-V")},
			want: Exit{Code: 255, Stderr: "srun: unrecognized option '--bogus-later'\nTry \"srun --help\" for more information\n"},
		},
		"--version where it stands": {
			in:   run{args: cmd("-V", "--bogus-later")},
			want: Exit{Code: 0, Stdout: "slurm 25.11.0\n"},
		},
		"error exit from the environment": {
			in:   run{env: map[string]string{"SLURM_EXACT": "1"}, args: cmd("--whole", "-v", "-Q")},
			want: Exit{Code: 1, Stderr: "srun: error: don't specify both --verbose (-v) and --quiet (-Q)\nsrun: error: --exact and --whole are mutually exclusive.\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, got := tc.in.srun()
			if got == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSrunErrorExit(t *testing.T) {
	p := NewSrun(Config{ErrorExit: 7, LookupEnv: func(string) (string, bool) { return "", false }})
	if _, err := p.ParseArgs(cmd("--exact", "--whole")); err != nil {
		t.Fatal(err)
	}
	var e *Exit
	if err := p.Finish(); !errors.As(err, &e) || e.Code != 7 {
		t.Fatalf("Finish: %v", err)
	}
}

func TestSrunEnv(t *testing.T) {
	tests := map[string]struct {
		env  map[string]string
		args []string
		want Options
	}{
		"task and node counts": {
			env:  map[string]string{"SLURM_NTASKS": "8", "SLURM_JOB_NUM_NODES": "4"},
			want: Options{Ntasks: Some(8), Nodes: Some(NodeCount{Min: 4, Max: 4})},
		},
		"SLURM_NTASKS wins over SLURM_NPROCS": {
			env:  map[string]string{"SLURM_NPROCS": "3", "SLURM_NTASKS": "5"},
			want: Options{Ntasks: Some(5)},
		},
		"SLURM_NPROCS alone": {
			env:  map[string]string{"SLURM_NPROCS": "3"},
			want: Options{Ntasks: Some(3)},
		},
		"SLURM_NNODES and SLURM_JOBID are not read": {
			env:  map[string]string{"SLURM_NNODES": "4", "SLURM_JOBID": "12"},
			want: Options{},
		},
		"job": {
			env: map[string]string{"SLURM_JOB_ID": "12", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_NAME": "train"},
			want: Options{JobID: Some(uint32(12)), AllocNodeList: "n[1-2]",
				JobName: Some("train")},
		},
		"cpus per task": {
			env:  map[string]string{"SLURM_CPUS_PER_TASK": "4"},
			want: Options{CPUsPerTask: Some(4), MinCPUs: Some(4), TRESPerTask: "cpu=4"},
		},
		"distribution": {
			env:  map[string]string{"SLURM_DISTRIBUTION": "cyclic:block,nopack"},
			want: Options{Distribution: "cyclic:block", DistPack: "nopack"},
		},
		"ntasks per node": {
			env:  map[string]string{"SLURM_NTASKS_PER_NODE": "2"},
			want: Options{NtasksPerNode: Some(2), Ntasks: Some(2)},
		},
		"flags": {
			env: map[string]string{"SLURM_OVERLAP": "", "SLURM_EXACT": "1", "SLURM_LABELIO": "yes", "SLURM_UNBUFFEREDIO": "1",
				"SLURM_DISABLE_STATUS": "1", "SLURM_SRUN_MULTI": "1"},
			want: Options{Overlap: true, Exact: true, Label: true, Unbuffered: true, DisableStatus: true, MultiProg: true},
		},
		"false flags": {
			env:  map[string]string{"SLURM_EXACT": "0", "SLURM_LABELIO": "no", "SLURM_UNBUFFEREDIO": "x"},
			want: Options{},
		},
		"overlap takes an optional argument, so any value sets it": {
			env:  map[string]string{"SLURM_OVERLAP": "0"},
			want: Options{Overlap: true},
		},
		"kill on bad exit": {
			env:  map[string]string{"SLURM_KILL_BAD_EXIT": "0"},
			want: Options{KillOnBadExit: Some(0)},
		},
		"kill on bad exit empty": {
			env:  map[string]string{"SLURM_KILL_BAD_EXIT": ""},
			want: Options{KillOnBadExit: Some(1)},
		},
		"wait and threads": {
			env:  map[string]string{"SLURM_WAIT": "10", "SLURM_THREADS": "2"},
			want: Options{WaitSec: Some(10), Threads: Some(2)},
		},
		"binding": {
			env:  map[string]string{"SLURM_CPU_BIND": "quiet,mask_cpu:0x1,0x2", "SLURM_GPU_BIND": "closest", "SLURM_MEM_BIND": "local"},
			want: Options{CPUBind: "quiet,mask_cpu:0x1,0x2", GPUBind: "closest", TRESBind: "gres/gpu:closest", MemBind: "local"},
		},
		"mpi": {
			env:  map[string]string{"SLURM_MPI_TYPE": "pmi2"},
			want: Options{MPI: "pmi2"},
		},
		"names": {
			env: map[string]string{"SLURM_PARTITION": "p", "SLURM_ACCOUNT": "a", "SLURM_QOS": "q",
				"SLURM_TIMELIMIT": "5", "SLURM_RESERVATION": "r", "SLURM_WCKEY": "w", "SLURM_CONSTRAINT": "c"},
			want: Options{Partition: "p", Account: "a", QOS: "q", TimeLimit: Some(timefmt.Limit{Minutes: 5}),
				Reservation: "r", WCKey: "w", Constraint: "c"},
		},
		"io": {
			env:  map[string]string{"SLURM_STDOUTMODE": "old", "SRUN_OUTPUT": "new-%t", "SRUN_ERROR": "none", "SLURM_STDINMODE": "0"},
			want: Options{Output: "new-%t", Error: "/dev/null", Input: "0"},
		},
		"export": {
			env:  map[string]string{"SLURM_EXPORT_ENV": "NONE", "SRUN_EXPORT_ENV": "ALL"},
			want: Options{Export: Some("ALL")},
		},
		"prologs": {
			env:  map[string]string{"SLURM_TASK_PROLOG": "a", "SLURM_TASK_EPILOG": "b", "SLURM_PROLOG": "c", "SLURM_EPILOG": "d"},
			want: Options{TaskProlog: "a", TaskEpilog: "b", Prolog: "c", Epilog: "d"},
		},
		"debug levels": {
			env:  map[string]string{"SLURM_DEBUG": "2", "SLURMD_DEBUG": "debug2"},
			want: Options{Verbose: 2, SlurmdDebug: Some(6)},
		},
		"send libs": {
			env:  map[string]string{"SLURM_SEND_LIBS": "no"},
			want: Options{SendLibs: Some(false)},
		},
		"gpus": {
			env:  map[string]string{"SLURM_GPUS_PER_TASK": "1", "SLURM_TRES_PER_TASK": "cpu=2,gres/gpu=1", "SLURM_CPUS_PER_TASK": "2"},
			want: Options{GPUsPerTask: "1", CPUsPerTask: Some(2), MinCPUs: Some(2), TRESPerTask: "cpu=2,gres/gpu=1", TRESBind: "gres/gpu:per_task:1"},
		},
		"command line beats environment": {
			env:  map[string]string{"SLURM_PARTITION": "p", "SLURM_LABELIO": "1", "SLURM_WAIT": "10"},
			args: []string{"-p", "q", "-W", "0"},
			want: Options{Partition: "q", Label: true, WaitSec: Some(0)},
		},
		"a job's environment": {
			env: map[string]string{"SLURM_JOB_ID": "7", "SLURM_JOBID": "7", "SLURM_NTASKS": "4", "SLURM_NPROCS": "4",
				"SLURM_JOB_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NODELIST": "n[1-2]",
				"SLURM_JOB_NAME": "job", "SLURM_MEM_PER_NODE": "1024", "SLURM_CPUS_ON_NODE": "4",
				"SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_SUBMIT_DIR": "/home/alice", "SLURM_CLUSTER_NAME": "c"},
			want: Options{JobID: Some(uint32(7)), Ntasks: Some(4), Nodes: Some(NodeCount{Min: 2, Max: 2}),
				AllocNodeList: "n[1-2]", JobName: Some("job"), Mem: Some(uint64(1024))},
		},
	}
	ignore := cmpopts.IgnoreFields(Options{}, "Sources", "impliedTasks", "Chdir", "EnvVars", "CmdName")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.want.JobName == (Maybe[string]{}) {
				tc.want.JobName = Some("hostname")
			}
			o, _, e := run{env: tc.env, args: cmd(tc.args...)}.srun()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			if diff := cmp.Diff(tc.want, *o, ignore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSrunInheritedCounts checks how srun combines the task and node counts
// a job passes down (SLURM_NTASKS, SLURM_JOB_NUM_NODES,
// SLURM_NTASKS_PER_NODE) with its own command line.
func TestSrunInheritedCounts(t *testing.T) {
	// job is the environment of "sbatch -N4 -n8".
	job := map[string]string{"SLURM_JOB_ID": "7", "SLURM_NTASKS": "8", "SLURM_NPROCS": "8", "SLURM_JOB_NUM_NODES": "4"}
	// perNode is "sbatch -N4 --ntasks-per-node=2".
	perNode := map[string]string{"SLURM_JOB_ID": "7", "SLURM_NTASKS": "8", "SLURM_JOB_NUM_NODES": "4", "SLURM_NTASKS_PER_NODE": "2"}
	nodes := func(lo, hi int) NodeCount { return NodeCount{Min: lo, Max: hi} }
	type want struct {
		Tasks       int
		Nodes       NodeCount
		NodesSource Source
		PerNode     Maybe[int]
		NodeList    string
		Warnings    []string
	}
	tests := map[string]struct {
		in   run
		want want
	}{
		"srun in the job runs the job's tasks": {
			in:   run{env: job, args: cmd()},
			want: want{Tasks: 8, Nodes: nodes(4, 4), NodesSource: FromEnv},
		},
		"-N keeps the inherited task count": {
			in:   run{env: job, args: cmd("-N2")},
			want: want{Tasks: 8, Nodes: nodes(2, 2), NodesSource: FromCommandLine},
		},
		"-n below the node count shrinks it": {
			in: run{env: job, args: cmd("-n2")},
			want: want{Tasks: 2, Nodes: nodes(2, 2), NodesSource: FromCommandLine,
				Warnings: []string{"can't run 2 processes on 4 nodes, setting nnodes to 2"}},
		},
		"-n1": {
			in: run{env: job, args: cmd("-n1")},
			want: want{Tasks: 1, Nodes: nodes(1, 1), NodesSource: FromCommandLine,
				Warnings: []string{"can't run 1 processes on 4 nodes, setting nnodes to 1"}},
		},
		"-n and -N": {
			in:   run{env: job, args: cmd("-n3", "-N1")},
			want: want{Tasks: 3, Nodes: nodes(1, 1), NodesSource: FromCommandLine},
		},
		"-N with inherited tasks per node drops the inherited task count": {
			in:   run{env: perNode, args: cmd("-N1")},
			want: want{Tasks: 2, Nodes: nodes(1, 1), NodesSource: FromCommandLine, PerNode: Some(2)},
		},
		"inherited tasks per node alone": {
			in:   run{env: perNode, args: cmd()},
			want: want{Tasks: 8, Nodes: nodes(4, 4), NodesSource: FromEnv, PerNode: Some(2)},
		},
		"--ntasks-per-node that cannot hold the inherited tasks is ignored": {
			in: run{env: job, args: cmd("--ntasks-per-node=1")},
			want: want{Tasks: 8, Nodes: nodes(4, 4), NodesSource: FromEnv,
				Warnings: []string{"can't honor --ntasks-per-node set to 1 which doesn't match the requested tasks 8 with the maximum number of requested nodes 4. Ignoring --ntasks-per-node."}},
		},
		"--ntasks-per-node that holds them is kept": {
			in:   run{env: job, args: cmd("--ntasks-per-node=2")},
			want: want{Tasks: 8, Nodes: nodes(4, 4), NodesSource: FromEnv, PerNode: Some(2)},
		},
		"too many tasks for tasks per node in a job": {
			in: run{env: perNode, args: cmd("-n16")},
			want: want{Tasks: 16, Nodes: nodes(4, 4), NodesSource: FromEnv,
				Warnings: []string{"can't honor --ntasks-per-node set to 2 which doesn't match the requested tasks 16 with the maximum number of requested nodes 4. Ignoring --ntasks-per-node."}},
		},
		"same outside a job keeps tasks per node": {
			in:   run{args: cmd("-n16", "-N4", "--ntasks-per-node=2")},
			want: want{Tasks: 16, Nodes: nodes(4, 4), NodesSource: FromCommandLine, PerNode: Some(2)},
		},
		"-N alone: one task per node": {
			in:   run{args: cmd("-N3")},
			want: want{Tasks: 3, Nodes: nodes(3, 3), NodesSource: FromCommandLine},
		},
		"-N range: one task": {
			in:   run{args: cmd("-N2-4")},
			want: want{Tasks: 1, Nodes: nodes(2, 4), NodesSource: FromCommandLine},
		},
		"-N with tasks per node": {
			in:   run{args: cmd("-N3", "--ntasks-per-node=2")},
			want: want{Tasks: 6, Nodes: nodes(3, 3), NodesSource: FromCommandLine, PerNode: Some(2)},
		},
		"node list sets the node count": {
			in:   run{args: cmd("-w", "n[1-3],n1")},
			want: want{Tasks: 3, Nodes: nodes(3, 0), NodesSource: Source(-1), NodeList: "n[1-3],n1"},
		},
		"fewer tasks than listed nodes trims the list": {
			in: run{args: cmd("-w", "n3,n1,n2,n4", "-n2")},
			want: want{Tasks: 2, Nodes: nodes(2, 2), NodesSource: FromCommandLine, NodeList: "n[1-2]",
				Warnings: []string{"can't run 2 processes on 4 nodes, setting nnodes to 2"}},
		},
		"sockets cores and threads": {
			in:   run{args: cmd("-N2", "-B", "2:*:2", "--sockets-per-node=2", "--threads-per-core=2")},
			want: want{Tasks: 2, Nodes: nodes(2, 2), NodesSource: FromCommandLine},
		},
		"arbitrary distribution ignores inherited counts": {
			in:   run{env: job, args: cmd("-m", "arbitrary", "-w", "n1,n1,n2")},
			want: want{Tasks: 3, Nodes: nodes(2, 2), NodesSource: Source(-1), NodeList: "n1,n1,n2"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, _, e := tc.in.srun()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			src, ok := o.Sources["nodes"]
			if !ok {
				src = Source(-1)
			}
			got := want{Tasks: o.Tasks(), Nodes: o.Nodes.Val, NodesSource: src, PerNode: o.NtasksPerNode,
				NodeList: o.NodeList, Warnings: o.Warnings}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSrunOperands(t *testing.T) {
	tests := map[string]struct {
		args []string
		want []string
	}{
		"command and its options": {args: []string{"-n2", "hostname", "-n", "4"}, want: []string{"hostname", "-n", "4"}},
		"double dash":             {args: []string{"-l", "--", "-weird", "x"}, want: []string{"-weird", "x"}},
		"value like an option":    {args: []string{"-J", "--label", "a.out"}, want: []string{"a.out"}},
		"separate value":          {args: []string{"--ntasks", "2", "a.out", "--", "b"}, want: []string{"a.out", "--", "b"}},
		"lone dash":               {args: []string{"-l", "-", "x"}, want: []string{"-", "x"}},
		"optional argument stays": {args: []string{"-K", "1", "x"}, want: []string{"1", "x"}},
		"heterogeneous separator": {args: []string{"-n1", ":", "-n2", "b"}, want: []string{":", "-n2", "b"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := NewSrun(Config{})
			got, err := p.ParseArgs(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSrunStdio(t *testing.T) {
	tests := map[string]struct {
		v    string
		want Stdio
	}{
		"unset":         {v: "", want: Stdio{Kind: StdioAll}},
		"all":           {v: "ALL", want: Stdio{Kind: StdioAll}},
		"dash":          {v: "-", want: Stdio{Kind: StdioAll}},
		"none":          {v: "/dev/null", want: Stdio{Kind: StdioNone}},
		"task":          {v: "3", want: Stdio{Kind: StdioTask, Task: 3}},
		"task too high": {v: "8", want: Stdio{Kind: StdioFile, Pattern: "8"}},
		"pattern":       {v: "out-%t.log", want: Stdio{Kind: StdioFile, Pattern: "out-%t.log"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SrunStdio(tc.v, 8)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSrunHelp(t *testing.T) {
	_, _, e := run{args: []string{"--help"}}.srun()
	if e == nil || e.Code != 0 {
		t.Fatalf("--help: %+v", e)
	}
	for _, want := range []string{
		"Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]] [ : [OPTIONS(N)...]] executable(N) [args(N)...]\n\nParallel run options:\n",
		"  -K, --kill-on-bad-exit      kill the job if any task terminates with a\n                              non-zero exit code\n",
		"  -l, --label                 prepend task number to lines of stdout/err\n",
		"      --cpu-bind=             Bind tasks to CPUs\n",
		"\nConstraint options:\n",
		"  -W, --wait=sec              seconds to wait after first task exits\n                              before killing job\n",
		"  -V, --version               output version information and exit\n",
	} {
		if !contains(e.Stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	if !contains(e.Stdout, "      --het-group=value       hetjob component allocation(s) in which to launch\n") {
		t.Errorf("help lacks --het-group")
	}
	for _, refused := range []string{"--bcast", "Copy executable", "--power"} {
		if contains(e.Stdout, refused) {
			t.Errorf("help lists %q", refused)
		}
	}
	_, _, e = run{args: []string{"--usage", "x"}}.srun()
	if e == nil || e.Code != 0 || !contains(e.Stdout, "Usage: srun [-N nnodes] [-n ntasks] [-i in] [-o out] [-e err]\n") {
		t.Fatalf("--usage: %+v", e)
	}
}

// TestTables builds every command's table (a name without a definition
// panics) and checks the short options against Slurm's option strings.
func TestTables(t *testing.T) {
	shorts := func(p *Parser) string {
		var s []byte
		for _, d := range p.defs {
			if d.short != 0 {
				s = append(s, d.short)
			}
		}
		return string(s)
	}
	got := []string{shorts(NewSbatch(Config{})), shorts(NewSrun(Config{})), shorts(NewSalloc(Config{}))}
	// The short options of slurm_option_table_create's option strings,
	// in table order.
	want := []string{
		"AabDMCScdmexBGhHiJLkFwNnoOspqQtvVW",
		"AbDMCScdXmexBGhHIiJKlLTZkFwNnoOspEqQrtuvVW",
		"AbDMCScdmxBGhHIJKLkFwNnOspqQtvV",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("short options (-want +got):\n%s", diff)
	}
}

// TestStepEnvironment: what srun --export passes its tasks of its own
// environment, as srun's _build_user_env builds it; SRUN_EXPORT_ENV
// overrides SLURM_EXPORT_ENV.
func TestStepEnvironment(t *testing.T) {
	own := []string{"PATH=/bin", "FOO=own", "BAR=b", "SLURM_JOB_ID=7", "SPANK_X=1"}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{nil, nil, own},
		{[]string{"--export=ALL"}, nil, own},
		{[]string{"--export=NONE"}, nil, []string{"SLURM_JOB_ID=7", "SPANK_X=1"}},
		{[]string{"--export=FOO,BAZ=z"}, nil, []string{"FOO=own", "BAZ=z", "SLURM_JOB_ID=7", "SPANK_X=1"}},
		{[]string{"--export=ALL,FOO=set"}, nil, []string{"FOO=own", "PATH=/bin", "BAR=b", "SLURM_JOB_ID=7", "SPANK_X=1"}},
		{[]string{"--export=NONE,FOO"}, nil, []string{"SLURM_JOB_ID=7", "SPANK_X=1"}},
		{nil, map[string]string{"SLURM_EXPORT_ENV": "NONE"}, []string{"SLURM_JOB_ID=7", "SPANK_X=1"}},
		{nil, map[string]string{"SLURM_EXPORT_ENV": "NONE", "SRUN_EXPORT_ENV": "ALL"}, own},
	} {
		o, _, e := run{args: cmd(tc.args...), env: tc.env}.srun()
		if e != nil {
			t.Fatalf("%v: %+v", tc.args, e)
		}
		got := o.StepEnvironment(NewEnviron(own)).List()
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%v %v (-want +got):\n%s", tc.args, tc.env, diff)
		}
	}
}
