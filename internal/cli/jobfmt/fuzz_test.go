package jobfmt

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fuzzJobs are jobs every fuzzed format is rendered for: one of each kind
// of record squeue prints.
var fuzzJobs = []Job{
	{JobID: 128, ArrayTaskID: NoVal, Name: "running_job", Partition: "debug", UserName: "root", State: StateRunning,
		StartTime: 1795964386, EndTime: 1795967986, SubmitTime: 1795964385, TimeLimit: 60, NumNodes: 1, NumCPUs: 1,
		Nodes: "rc[1-2]", MinMemory: 100, SocketsPerNode: NoVal16, CoresPerSocket: NoVal16, ThreadsPerCore: NoVal16,
		CoreSpec: NoVal16, CPUsPerTask: 1, BoardsPerNode: NoVal16, OverSubscribe: "OK", ExitCode: ExitCode{Present: true, Exited: true}},
	{JobID: 131, ArrayJobID: 131, ArrayTaskID: NoVal, ArrayTaskStr: "0-9%2", Name: "", State: StatePending,
		Reason: "Resources", TimeLimit: Infinite, SocketsPerNode: 2, CoresPerSocket: Infinite16, PreemptTime: int64(NoVal)},
	{JobID: 7, HetJobID: 6, HetJobOffset: 1, ArrayTaskID: NoVal, State: StateFailed | FlagCompleting, TimeLimit: NoVal,
		StartTime: 5, EndTime: 1, Nodes: "bad[", CoreSpec: coreSpecThread | 3},
}

func fuzzContext() *Context {
	return &Context{Now: time.Unix(1795964461, 0).UTC(), TimeFormat: "relative"}
}

// checkRoundTrip asserts that a parsed format writes back to a
// specification with the same columns, and that rendering never panics
// and keeps left-justified fixed-width columns at their width.
func checkRoundTrip(t *testing.T, spec string, f Format, parse func(string) (Format, []string)) {
	again, _ := parse(f.Spec())
	if diff := cmp.Diff(view(f), view(again)); diff != "" {
		t.Fatalf("%q: Spec %q parses differently (-first +second):\n%s", spec, f.Spec(), diff)
	}
	ctx := fuzzContext()
	f.Header()
	for i := range fuzzJobs {
		f.Row(&fuzzJobs[i], ctx)
		for _, col := range f.Columns {
			if col.Field == nil || col.Right || col.Width <= 0 {
				continue
			}
			single := Format{Columns: []Column{{Field: col.Field, Width: col.Width}}}
			got := single.Row(&fuzzJobs[i], ctx)
			if c := col.Field.value(&fuzzJobs[i], ctx); c.omit {
				continue
			}
			if len(got) != col.Width {
				t.Fatalf("%q: field %s width %d rendered %q", spec, col.Field.Name, col.Width, got)
			}
		}
	}
}

// FuzzParseFormat fuzzes the -o parser: no panics, Spec round trips, fixed
// widths hold.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{
		"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R",
		"%.10i %.9P %.12j %.8u %.2t %.10M %.10l %.6D %C %m %b %r %R %Q %p %S %V %e %Z %a %g %o %q %y %k %L %f %E %A %F %K %T %h %x %n %v %w %z",
		"%all", "pre%i post", "%5!x%.", "%%", "", "%-10j", "%999999999999i", "%.0k%3k",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if len(spec) > 1<<12 {
			return
		}
		parsed, invalid := ParseFormat(spec)
		for _, col := range parsed.Columns {
			if col.Width > MaxWidth || col.Width < 0 {
				t.Fatalf("%q: width %d out of bounds", spec, col.Width)
			}
		}
		if len(invalid) > strings.Count(spec, "%") {
			t.Fatalf("%q: %d invalid codes for %d '%%'", spec, len(invalid), strings.Count(spec, "%"))
		}
		checkRoundTrip(t, spec, parsed, ParseFormat)
	})
}

// FuzzParseLongFormat fuzzes the -O parser the same way.
func FuzzParseLongFormat(f *testing.F) {
	for _, s := range []string{
		"JobID,Partition,Name,UserName,State,TimeUsed,TimeLimit,NumNodes,NumCPUs,MinMemory,tres-per-node,Reason,NodeList,ArrayJobID,ArrayTaskID,SubmitTime,StartTime,WorkDir,Command,Priority,QOS,Account,ExitCode",
		"jobarrayid:.18 ,partition:.9 ,name:.8 ,reasonlist:0",
		"Name: -3x,Name:.,Name:abc", ",,", ":5", "NoSuchField", "State:99999999999999", "exit_code:3|",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if len(spec) > 1<<12 {
			return
		}
		parsed, invalid := ParseLongFormat(spec)
		for _, col := range parsed.Columns {
			if col.Width > MaxWidth || col.Width < -MaxWidth {
				t.Fatalf("%q: width %d out of bounds", spec, col.Width)
			}
			if strings.Contains(col.Name, ":") || strings.Contains(col.Name, ",") {
				t.Fatalf("%q: name %q keeps a separator", spec, col.Name)
			}
		}
		if len(invalid) > len(parsed.Columns) {
			t.Fatalf("%q: more invalid names than columns", spec)
		}
		checkRoundTrip(t, spec, parsed, ParseLongFormat)
	})
}
