package jobopts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scanView is what a test compares of a scan: options as "name=value"
// ("name" without value), errors as "!message".
func scanView(items []item) []string {
	var out []string
	for _, it := range items {
		switch {
		case it.err != "":
			out = append(out, "!"+it.err)
		case it.hasValue:
			out = append(out, it.spec.id+"="+it.value)
		default:
			out = append(out, it.spec.id)
		}
	}
	return out
}

func testScanner() *scanner {
	defs := sbatchOptions()
	specs := make([]*spec, len(defs))
	for i, d := range defs {
		specs[i] = &d.spec
	}
	return newScanner(specs)
}

func TestScan(t *testing.T) {
	tests := map[string]struct {
		args     []string
		want     []string
		operands int
	}{
		"long with =":      {args: []string{"--nodes=2"}, want: []string{"nodes=2"}},
		"long separate":    {args: []string{"--nodes", "2"}, want: []string{"nodes=2"}},
		"long empty value": {args: []string{"--comment="}, want: []string{"comment="}},
		"short attached":   {args: []string{"-N2", "-Jname"}, want: []string{"nodes=2", "job-name=name"}},
		"short separate":   {args: []string{"-N", "2"}, want: []string{"nodes=2"}},
		"short group":      {args: []string{"-HvN3"}, want: []string{"hold", "verbose", "nodes=3"}},
		"value looks like option": {
			args: []string{"-J", "--hold", "--comment", "-x"},
			want: []string{"job-name=--hold", "comment=-x"},
		},
		"stops at script": {
			args: []string{"-N1", "job.sh", "-N2", "--bogus"},
			want: []string{"nodes=1"}, operands: 3,
		},
		"double dash": {
			args: []string{"-N1", "--", "-script"},
			want: []string{"nodes=1"}, operands: 1,
		},
		"lone dash is an operand": {
			args: []string{"-H", "-", "x"},
			want: []string{"hold"}, operands: 2,
		},
		"abbreviation": {
			args: []string{"--part=debug", "--job=x", "--mem-per-c=10"},
			want: []string{"partition=debug", "job-name=x", "mem-per-cpu=10"},
		},
		"exact match beats prefix": {
			args: []string{"--mem=1", "--gpus=2", "--cluster=x"},
			want: []string{"mem=1", "gpus=2", "cluster=x"},
		},
		"alias is not ambiguous": {
			args: []string{"--tasks-per=2"},
			want: []string{"ntasks-per-node=2"},
		},
		"ambiguous": {
			args: []string{"--cpus=2"},
			want: []string{"!option '--cpus=2' is ambiguous; possibilities: '--cpus-per-gpu' '--cpus-per-task'"},
		},
		"unrecognized keeps value": {
			args: []string{"--nosuchdirective=5", "-N1"},
			want: []string{"!unrecognized option '--nosuchdirective=5'", "nodes=1"},
		},
		"flag with value": {
			args: []string{"--hold=yes"},
			want: []string{"!option '--hold' doesn't allow an argument"},
		},
		"abbreviated flag with value names the option": {
			args: []string{"--hol=yes"},
			want: []string{"!option '--hold' doesn't allow an argument"},
		},
		"missing argument long": {
			args: []string{"--time"},
			want: []string{"!option '--time' requires an argument"},
		},
		"missing argument short": {
			args: []string{"-H", "-t"},
			want: []string{"hold", "!option requires an argument -- 't'"},
		},
		"invalid short continues group": {
			args: []string{"-ZH"},
			want: []string{"!invalid option -- 'Z'", "hold"},
		},
		"optional long": {
			args: []string{"--nice", "--nice=5", "--exclusive", "--exclusive=user"},
			want: []string{"nice", "nice=5", "exclusive", "exclusive=user"},
		},
		"optional does not take next word": {
			args: []string{"--requeue", "expedite"},
			want: []string{"requeue"}, operands: 1,
		},
		"optional short": {
			args: []string{"-k", "-kno"},
			want: []string{"no-kill", "no-kill=no"},
		},
	}
	s := testScanner()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			items, optind := s.scan(tc.args)
			if diff := cmp.Diff(tc.want, scanView(items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if got := len(tc.args) - optind; got != tc.operands {
				t.Errorf("operands = %d, want %d", got, tc.operands)
			}
		})
	}
}

// FuzzScan checks that the getopt scanner never panics, that optind stays
// in range, that it only stops early at a non-option or after "--", and
// that re-encoding what it read as "--name=value" words reads back the same.
func FuzzScan(f *testing.F) {
	for _, a := range [][]string{
		{"-N2", "--job-name", "x y", "script", "arg"},
		{"--nosuch=1", "-Zk", "--", "-x"},
		{"--cpus=1", "--hold=1", "-t"},
		{"-HvQ", "--exclusive", "--nice=-5", "-"},
	} {
		f.Add(join0(a))
	}
	s := testScanner()
	f.Fuzz(func(t *testing.T, packed string) {
		args := split0(packed)
		items, optind := s.scan(args)
		if optind < 0 || optind > len(args) {
			t.Fatalf("optind %d out of range for %d args", optind, len(args))
		}
		if optind < len(args) && (optind == 0 || args[optind-1] != "--") {
			a := args[optind]
			if len(a) >= 2 && a[0] == '-' && a != "--" {
				// Stopped on something that looks like an option:
				// only allowed when it was consumed as a value.
				t.Fatalf("stopped at option-like %q", a)
			}
		}
		var again []string
		var want []string
		for _, it := range items {
			if it.err != "" || it.spec.long == "" {
				continue
			}
			w := "--" + it.spec.long
			if it.hasValue {
				w += "=" + it.value
			}
			if it.spec.arg == requiredArgument && !it.hasValue {
				t.Fatalf("%s without its argument", it.spec.long)
			}
			again = append(again, w)
			want = append(want, scanView([]item{it})...)
		}
		items2, optind2 := s.scan(again)
		if optind2 != len(again) {
			t.Fatalf("re-scan of %q stopped at %d", again, optind2)
		}
		if diff := cmp.Diff(want, scanView(items2)); diff != "" {
			t.Fatalf("re-scan of %q (-want +got):\n%s", again, diff)
		}
	})
}

func join0(a []string) string {
	s := ""
	for i, x := range a {
		if i > 0 {
			s += "\x00"
		}
		s += x
	}
	return s
}

func split0(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
