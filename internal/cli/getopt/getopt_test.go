package getopt

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"
)

// testAliases are Normalize's aliases in testFlags.
var testAliases = map[string]string{"cluster": "clusters", "users": "user"}

// testFlags is a flag set shaped like squeue's: options with required,
// optional and no arguments, a letter without a long name, and aliases.
// Callbacks append "name=value" to *seen.
func testFlags(seen *[]string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	record := func(name string) func(string) error {
		return func(v string) error {
			if seen != nil {
				*seen = append(*seen, name+"="+v)
			}
			return nil
		}
	}
	for _, f := range []struct{ long, short string }{
		{"format", "o"}, {"Format", "O"}, {"user", "u"}, {"states", "t"},
		{"clusters", "M"}, {"accounts-U", "U"},
	} {
		fs.FuncP(f.long, f.short, "", record(f.long))
	}
	for _, f := range []struct{ long, short string }{{"jobs", "j"}, {"steps", "s"}} {
		fs.FuncP(f.long, f.short, "", record(f.long))
		fs.Lookup(f.long).NoOptDefVal = OptionalArg
	}
	for _, f := range []struct{ long, short string }{{"all", "a"}, {"long", "l"}, {"start", ""}, {"clean", ""}} {
		fs.BoolFuncP(f.long, f.short, "", record(f.long))
	}
	MarkShortOnly(fs, "accounts-U")
	DefineAliases(fs, testAliases)
	return fs
}

func TestNormalize(t *testing.T) {
	type result struct {
		Tokens, Operands []string
		Err              string
	}
	tests := map[string]struct {
		args []string
		want result
	}{
		"long with =":   {args: []string{"--format=%i"}, want: result{Tokens: []string{"--format=%i"}}},
		"long separate": {args: []string{"--format", "%i"}, want: result{Tokens: []string{"--format=%i"}}},
		"long empty":    {args: []string{"--format="}, want: result{Tokens: []string{"--format="}}},
		"abbreviation":  {args: []string{"--form=%i", "--lo"}, want: result{Tokens: []string{"--format=%i", "--long"}}},
		"case sensitive": {
			args: []string{"--F=x", "--f=y"},
			want: result{Tokens: []string{"--Format=x", "--format=y"}},
		},
		"alias becomes its option":  {args: []string{"--users=x", "--cluster", "c"}, want: result{Tokens: []string{"--user=x", "--clusters=c"}}},
		"aliases are not ambiguous": {args: []string{"--use=x"}, want: result{Tokens: []string{"--user=x"}}},
		"ambiguous": {
			args: []string{"--sta"},
			want: result{Err: "option '--sta' is ambiguous; possibilities: '--start' '--states'"},
		},
		"ambiguous lists aliases": {
			args: []string{"--cl=x"},
			want: result{Err: "option '--cl' is ambiguous; possibilities: '--clean' '--cluster' '--clusters'"},
		},
		"unrecognized keeps value": {
			args: []string{"--bogus=1"},
			want: result{Err: "unrecognized option '--bogus=1'"},
		},
		"empty long name": {args: []string{"--=x"}, want: result{Err: "unrecognized option '--=x'"}},
		"short only refuses its long name": {
			args: []string{"--accounts-U=x"},
			want: result{Err: "unrecognized option '--accounts-U=x'"},
		},
		"short only letter": {args: []string{"-Ux"}, want: result{Tokens: []string{"--accounts-U=x"}}},
		"short group": {
			args: []string{"-alo%i"},
			want: result{Tokens: []string{"--all", "--long", "--format=%i"}},
		},
		"short separate": {args: []string{"-o", "%i"}, want: result{Tokens: []string{"--format=%i"}}},
		"value looks like an option": {
			args: []string{"-o", "--all", "--format", "-l"},
			want: result{Tokens: []string{"--format=--all", "--format=-l"}},
		},
		"optional attached": {args: []string{"-j123", "--jobs=4"}, want: result{Tokens: []string{"--jobs=123", "--jobs=4"}}},
		"optional bare": {
			args: []string{"-j", "123", "--jobs", "-s"},
			want: result{Tokens: []string{"--jobs", "--jobs", "--steps"}, Operands: []string{"123"}},
		},
		"optional empty": {args: []string{"--jobs="}, want: result{Tokens: []string{"--jobs="}}},
		"operands are permuted": {
			args: []string{"a", "-l", "b", "-"},
			want: result{Tokens: []string{"--long"}, Operands: []string{"a", "b", "-"}},
		},
		"double dash ends options": {
			args: []string{"-l", "x", "--", "-a", "--"},
			want: result{Tokens: []string{"--long"}, Operands: []string{"x", "-a", "--"}},
		},
		"stops at the first error": {
			args: []string{"x", "-l", "--bogus", "-a", "y"},
			want: result{Tokens: []string{"--long"}, Operands: []string{"x"}, Err: "unrecognized option '--bogus'"},
		},
		"invalid short":   {args: []string{"-aZ"}, want: result{Tokens: []string{"--all"}, Err: "invalid option -- 'Z'"}},
		"dash in a group": {args: []string{"-a-"}, want: result{Tokens: []string{"--all"}, Err: "invalid option -- '-'"}},
		"non-ASCII short": {args: []string{"-\u00e9"}, want: result{Err: "invalid option -- '\xc3'"}},
		"missing short argument": {
			args: []string{"-lo"},
			want: result{Tokens: []string{"--long"}, Err: "option requires an argument -- 'o'"},
		},
		"missing long argument": {
			args: []string{"--form"},
			want: result{Err: "option '--format' requires an argument"},
		},
		"argument to a switch": {
			args: []string{"--lo=1"},
			want: result{Err: "option '--long' doesn't allow an argument"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tokens, operands, err := Normalize(testFlags(nil), tc.args, testAliases)
			got := result{Tokens: tokens, Operands: operands}
			if err != nil {
				var ge *Error
				if !errors.As(err, &ge) {
					t.Fatalf("error %v (%T) is not an *Error", err, err)
				}
				got.Err = err.Error()
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("Normalize(%q) (-want +got):\n%s", tc.args, d)
			}
		})
	}
}

// TestNormalizeParse checks that pflag accepts what Normalize produces and
// hands the callbacks getopt's values, OptionalArg for bare options.
func TestNormalizeParse(t *testing.T) {
	var seen []string
	fs := testFlags(&seen)
	tokens, _, err := Normalize(fs, []string{"-j", "--users", "u1", "-Ua", "--jobs=", "-j7", "-l"}, testAliases)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(tokens); err != nil {
		t.Fatal(err)
	}
	want := []string{"jobs=" + OptionalArg, "user=u1", "accounts-U=a", "jobs=", "jobs=7", "long=true"}
	if d := cmp.Diff(want, seen); d != "" {
		t.Errorf("callbacks (-want +got):\n%s", d)
	}
	if !fs.Lookup("accounts-U").Hidden {
		t.Error("MarkShortOnly left the flag visible")
	}
	if got := fs.Lookup("users").NoOptDefVal; got != "" {
		t.Errorf("alias users NoOptDefVal = %q, want its target's %q", got, "")
	}
}

// expandNames is a long-option table shaped like sinfo's.
var expandNames = []string{"all", "help", "hide", "cluster", "clusters", "comment", "nodes", "noconvert", "noheader", "Node", "format", "Format"}

var expandAliases = map[string]string{"clusters": "cluster"}

func TestExpandLong(t *testing.T) {
	type result struct {
		Args []string
		Err  string
	}
	tests := map[string]struct {
		args []string
		want result
	}{
		"exact":                 {args: []string{"--all", "--Node"}, want: result{Args: []string{"--all", "--Node"}}},
		"abbreviation":          {args: []string{"--al", "--hel"}, want: result{Args: []string{"--all", "--help"}}},
		"value kept":            {args: []string{"--form=%P", "--F=x="}, want: result{Args: []string{"--format=%P", "--Format=x="}}},
		"separate value kept":   {args: []string{"--form", "--al"}, want: result{Args: []string{"--format", "--all"}}},
		"case sensitive":        {args: []string{"--N", "--f"}, want: result{Args: []string{"--Node", "--format"}}},
		"aliases not ambiguous": {args: []string{"--clu=x"}, want: result{Args: []string{"--cluster=x"}}},
		"exact alias":           {args: []string{"--clusters=x"}, want: result{Args: []string{"--clusters=x"}}},
		"unknown passes through": {
			args: []string{"--bogus=1", "--x"},
			want: result{Args: []string{"--bogus=1", "--x"}},
		},
		"short options untouched": {args: []string{"-al", "-", "x"}, want: result{Args: []string{"-al", "-", "x"}}},
		"double dash ends expansion": {
			args: []string{"--al", "--", "--al", "--h"},
			want: result{Args: []string{"--all", "--", "--al", "--h"}},
		},
		"ambiguous": {
			args: []string{"--h"},
			want: result{Err: "option '--h' is ambiguous; possibilities: '--help' '--hide'"},
		},
		"ambiguous lists each option once": {
			args: []string{"--al", "--c=x"},
			want: result{Err: "option '--c' is ambiguous; possibilities: '--cluster' '--comment'"},
		},
		"ambiguous in table order": {
			args: []string{"--no"},
			want: result{Err: "option '--no' is ambiguous; possibilities: '--nodes' '--noconvert' '--noheader'"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := ExpandLong(tc.args, expandNames, expandAliases)
			got := result{Args: out}
			if err != nil {
				got.Err = err.Error()
			}
			if d := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("ExpandLong(%q) (-want +got):\n%s", tc.args, d)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	// pflagError parses args with a flag set like sinfo's, whose errors
	// Message rewords.
	pflagError := func(args ...string) error {
		fs := pflag.NewFlagSet("sinfo", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var b bool
		var s string
		fs.BoolVarP(&b, "all", "a", false, "")
		fs.StringVarP(&s, "format", "o", "", "")
		return fs.Parse(args)
	}
	_, ambiguousErr := ExpandLong([]string{"--h"}, expandNames, expandAliases)
	_, _, normalizeErr := Normalize(testFlags(nil), []string{"--bogus=1"}, testAliases)
	tests := map[string]struct {
		err  error
		want string
	}{
		"unrecognized long":    {err: pflagError("--bogus"), want: "sinfo: unrecognized option '--bogus'"},
		"invalid short":        {err: pflagError("-z"), want: "sinfo: invalid option -- 'z'"},
		"long needs argument":  {err: pflagError("--format"), want: "sinfo: option '--format' requires an argument"},
		"short needs argument": {err: pflagError("-o"), want: "sinfo: option requires an argument -- 'o'"},
		"argument to a switch": {err: pflagError("--all=x"), want: "sinfo: option '--all' doesn't allow an argument"},
		"ambiguous":            {err: ambiguousErr, want: "sinfo: option '--h' is ambiguous; possibilities: '--help' '--hide'"},
		"from Normalize":       {err: normalizeErr, want: "sinfo: unrecognized option '--bogus=1'"},
		"wrapped":              {err: fmt.Errorf("parse: %w", normalizeErr), want: "sinfo: unrecognized option '--bogus=1'"},
		"other errors as they are": {
			err: errors.New("bad value"), want: "sinfo: bad value",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("test case produced no error")
			}
			if d := cmp.Diff(tc.want, Message("sinfo", tc.err)); d != "" {
				t.Errorf("Message (-want +got):\n%s", d)
			}
		})
	}
}
