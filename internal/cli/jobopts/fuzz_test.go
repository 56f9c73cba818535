package jobopts

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/go-faster/jx"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// FuzzParse runs the whole option pipeline on arbitrary directive words,
// environment value and command line. It checks that nothing panics, that
// every refusal is an *Exit with one of Slurm's statuses and messages
// prefixed with the program name, and that an accepted job description
// survives a round trip through the wire encoding.
func FuzzParse(f *testing.F) {
	f.Add("-N2\x00--mem=1G", "15", "-J\x00x\x00--wrap=true")
	f.Add("--nosuch", "", "-n\x00abc")
	f.Add("-m\x00plane=2\x00-w\x00n[1-4]", "1-0", "--gres=gpu:2\x00--gpus-per-task=1\x00-c3")
	f.Add("--export=NONE", "UNLIMITED", "--begin=now+1hour\x00--deadline=tomorrow")
	f.Add("--exclusive=user\x00-B\x002:*:1", "x", "--signal=RB:USR1@30\x00--mail-type=ALL")
	f.Fuzz(func(t *testing.T, directives, timeEnv, args string) {
		in := input{
			directives: split0(directives),
			env:        map[string]string{"SBATCH_TIMELIMIT": timeEnv},
			args:       split0(args),
		}
		var o *Options
		var e *Exit
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			o, e = in.parse()
		}()
		if e != nil {
			switch e.Code {
			case 0:
				if e.Stdout == "" {
					t.Fatalf("exit 0 without output: %+v", e)
				}
			case 1, 255:
				// Messages quote user input, which may hold new
				// lines, so only the frame is checked.
				if !strings.HasPrefix(e.Stderr, "sbatch: ") || !strings.HasSuffix(e.Stderr, "\n") {
					t.Fatalf("stderr %q", e.Stderr)
				}
			default:
				t.Fatalf("exit status %d", e.Code)
			}
			return
		}
		d := o.JobDesc()
		enc := jx.Encoder{}
		d.Encode(&enc)
		var back v0044.V0044JobDescMsg
		if err := back.Decode(jx.DecodeBytes(enc.Bytes())); err != nil {
			t.Fatalf("decode %s: %v", enc.Bytes(), err)
		}
		if diff := cmp.Diff(d, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-sent +read):\n%s", diff)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("invalid job description %s: %v", enc.Bytes(), err)
		}
	})
}

// FuzzValues checks the value parsers: they never panic on any input, and
// numbers written in each accepted form read back as the same amount.
func FuzzValues(f *testing.F) {
	f.Add("2G", uint32(7), uint32(9))
	f.Add("1-4:2,9", uint32(0), uint32(0))
	f.Add("RB:SIGUSR1@300", uint32(1024), uint32(1))
	f.Add("block:*:fcyclic,pack", uint32(3), uint32(2))
	f.Fuzz(func(t *testing.T, s string, a, b uint32) {
		// No panics, whatever the text.
		strToMbytes(s)
		parseNodeCount(s)
		parseSignal(s)
		parseMailType(s)
		parseDistribution(s, func(string) string { return s })
		parseMemBind(s)
		parseProfile(s)
		resourceArgRange(s, "x")
		parseRlimits(s)
		splitQuoted(s, ',')
		parseTPT(s)

		n := uint64(a)
		for _, c := range []struct {
			in   string
			want uint64
		}{
			{strconv.FormatUint(n, 10), n},
			{strconv.FormatUint(n, 10) + "M", n},
			{strconv.FormatUint(n, 10) + "kb", (n + 1023) / 1024},
			{strconv.FormatUint(n, 10) + "G", n * 1024},
			{strconv.FormatUint(n, 10) + "t", n * 1024 * 1024},
		} {
			got, ok := strToMbytes(c.in)
			if !ok || got != c.want {
				t.Fatalf("strToMbytes(%q) = %d, %v; want %d", c.in, got, ok, c.want)
			}
		}
		lo, hi := int(min(a, b)%math.MaxInt32), int(max(a, b)%math.MaxInt32)
		if lo > hi {
			lo, hi = hi, lo
		}
		nc, err := parseNodeCount(strconv.Itoa(lo) + "-" + strconv.Itoa(hi))
		if err != nil || nc.Min != lo || nc.Max != hi {
			t.Fatalf("node range %d-%d read as %+v, %v", lo, hi, nc, err)
		}
	})
}

// FuzzSrunCommandLine runs srun's passes (environment, command line,
// checks) on an arbitrary argv and job environment. Nothing may panic; the
// operands ParseArgs returns are a suffix of argv, untouched; and every
// refusal is an *Exit with one of srun's statuses and messages prefixed
// with its name.
func FuzzSrunCommandLine(f *testing.F) {
	f.Add("-n2\x00-l\x00hostname", "8", "4", "")
	f.Add("-N2\x00--\x00a.out\x00-x", "8", "4", "2")
	f.Add("--cpu-bind=verbose,mask_cpu:0x3,f*2\x00--mpi=pmix\x00-K\x00x", "", "", "")
	f.Add("--hint=nomultithread\x00--threads-per-core=2\x00-W\x000\x00x", "3", "1", "")
	f.Add("-w\x00n[1-4]\x00-n2\x00-m\x00arbitrary\x00--jobid=12_3.4\x00x", "x", "", "")
	f.Add("--pty\x00-o\x00out\x00--exclusive\x00--overlap\x00--cpu\x00x", "1", "9", "1")
	f.Fuzz(func(t *testing.T, args, ntasks, nodes, perNode string) {
		argv := split0(args)
		env := map[string]string{"SLURM_JOB_ID": "7"}
		for k, v := range map[string]string{"SLURM_NTASKS": ntasks, "SLURM_JOB_NUM_NODES": nodes, "SLURM_NTASKS_PER_NODE": perNode} {
			if v != "" {
				env[k] = v
			}
		}
		p := NewSrun(run{env: env}.config("srun"))
		var e *Exit
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v", r)
				}
			}()
			if err := p.ParseEnv(); err != nil {
				if !errors.As(err, &e) {
					t.Fatalf("ParseEnv: %v", err)
				}
				return
			}
			ops, err := p.ParseArgs(argv)
			if err != nil {
				if !errors.As(err, &e) {
					t.Fatalf("ParseArgs: %v", err)
				}
				return
			}
			if len(ops) > len(argv) {
				t.Fatalf("operands %q longer than argv %q", ops, argv)
			}
			if diff := cmp.Diff(argv[len(argv)-len(ops):], ops, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("operands are not a suffix of argv %q (-want +got):\n%s", argv, diff)
			}
			if err := p.Finish(); err != nil && !errors.As(err, &e) {
				t.Fatalf("Finish: %v", err)
			}
		}()
		if e == nil {
			// -N0 with --ntasks-per-node runs no task, as in srun.
			if o := p.Options(); o.Tasks() < 0 {
				t.Fatalf("%d tasks", o.Tasks())
			}
			return
		}
		switch e.Code {
		case 0:
			if e.Stdout == "" {
				t.Fatalf("exit 0 without output: %+v", e)
			}
		case 1, 255:
			if e.Stderr == "" && e.Stdout == "" {
				t.Fatalf("exit %d without output", e.Code)
			}
			if e.Stderr != "" && (!strings.HasPrefix(e.Stderr, "srun: ") || !strings.HasSuffix(e.Stderr, "\n")) {
				t.Fatalf("stderr %q", e.Stderr)
			}
		default:
			t.Fatalf("exit status %d", e.Code)
		}
	})
}
