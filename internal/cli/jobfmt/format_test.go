package jobfmt

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// colView is a Column with its field reduced to a name, for comparisons.
type colView struct {
	Field  string
	Name   string
	Width  int
	Right  bool
	Suffix string
}

func view(f Format) []colView {
	var out []colView
	for _, c := range f.Columns {
		v := colView{Name: c.Name, Width: c.Width, Right: c.Right, Suffix: c.Suffix}
		if c.Field != nil {
			v.Field = c.Field.Name
		}
		out = append(out, v)
	}
	return out
}

func TestParseFormat(t *testing.T) {
	tests := map[string]struct {
		spec        string
		want        []colView
		wantInvalid []string
	}{
		"default short": {
			spec: "%.18i %.9P %j",
			want: []colView{
				{Field: "JobArrayId", Name: "i", Width: 18, Right: true, Suffix: " "},
				{Field: "Partition", Name: "P", Width: 9, Right: true, Suffix: " "},
				{Field: "Name", Name: "j"},
			},
		},
		"left justified width": {
			spec: "%-10j",
			// '-' is not a justification flag: it is the (unknown) code.
			want:        []colView{{Suffix: "%-10j"}},
			wantInvalid: []string{"-"},
		},
		"plain width": {
			spec: "%10j|",
			want: []colView{{Field: "Name", Name: "j", Width: 10, Suffix: "|"}},
		},
		"prefix": {
			spec: "id=%i",
			want: []colView{{Suffix: "id="}, {Field: "JobArrayId", Name: "i"}},
		},
		"no field at all": {
			spec: "hello",
			want: []colView{{Suffix: "hello"}},
		},
		"unknown letter keeps its text": {
			spec:        "%i %5!x",
			want:        []colView{{Field: "JobArrayId", Name: "i", Suffix: " "}, {Width: 5, Suffix: "%5!x"}},
			wantInvalid: []string{"!"},
		},
		"runs of percent collapse": {
			spec: "%%i%%",
			want: []colView{{Field: "JobArrayId", Name: "i"}},
		},
		"code missing after width": {
			spec:        "%i%.5",
			want:        []colView{{Field: "JobArrayId", Name: "i"}, {Width: 5, Right: true, Suffix: "%.5"}},
			wantInvalid: []string{""},
		},
		"huge width is bounded": {
			spec: "%99999999999i",
			want: []colView{{Field: "JobArrayId", Name: "i", Width: MaxWidth}},
		},
		"first letter wins for duplicated codes": {
			spec: "%h",
			want: []colView{{Field: "OverSubscribe", Name: "h"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f, invalid := ParseFormat(tc.spec)
			if diff := cmp.Diff(tc.want, view(f)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantInvalid, invalid); diff != "" {
				t.Errorf("invalid (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFormatAll(t *testing.T) {
	f, invalid := ParseFormat("%ALL")
	if len(invalid) != 0 {
		t.Errorf("invalid = %q, want none (unknown codes are skipped silently)", invalid)
	}
	var letters strings.Builder
	for _, c := range f.Columns {
		letters.WriteString(c.Name)
	}
	if got, want := letters.String(), "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"; got != keepValid(want) {
		t.Errorf("letters = %q, want %q", got, keepValid(want))
	}
	if last := f.Columns[len(f.Columns)-1]; last.Suffix != "" {
		t.Errorf("last column suffix %q, want none", last.Suffix)
	}
}

func keepValid(letters string) string {
	var b strings.Builder
	for i := 0; i < len(letters); i++ {
		if _, ok := LookupLetter(letters[i]); ok {
			b.WriteByte(letters[i])
		}
	}
	return b.String()
}

func TestParseLongFormat(t *testing.T) {
	tests := map[string]struct {
		spec        string
		want        []colView
		wantInvalid []string
	}{
		"default width": {
			spec: "JobID,partition",
			want: []colView{
				{Field: "JobId", Name: "JobID", Width: 20},
				{Field: "Partition", Name: "partition", Width: 20},
			},
		},
		"width, justification and suffix": {
			spec: "jobarrayid:.18 ,name:8|,reasonlist:0",
			want: []colView{
				{Field: "JobArrayId", Name: "jobarrayid", Width: 18, Right: true, Suffix: " "},
				{Field: "Name", Name: "name", Width: 8, Suffix: "|"},
				{Field: "ReasonList", Name: "reasonlist"},
			},
		},
		"unknown field keeps its place": {
			spec:        "ExitCode,State:5",
			want:        []colView{{Name: "ExitCode", Width: 20}, {Field: "State", Name: "State", Width: 5}},
			wantInvalid: []string{"ExitCode"},
		},
		"strtol width": {
			spec: "Name: -3x,Name:.,Name:abc",
			want: []colView{
				{Field: "Name", Name: "Name", Width: -3, Suffix: "x"},
				{Field: "Name", Name: "Name", Right: true},
				{Field: "Name", Name: "Name", Suffix: "abc"},
			},
		},
		"empty items vanish": {
			spec: ",,State,,",
			want: []colView{{Field: "State", Name: "State", Width: 20}},
		},
		"hidden names work": {
			spec: "tres-per-node:5",
			want: []colView{{Field: "tres-per-node", Name: "tres-per-node", Width: 5}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f, invalid := ParseLongFormat(tc.spec)
			if diff := cmp.Diff(tc.want, view(f)); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantInvalid, invalid); diff != "" {
				t.Errorf("invalid (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	tests := map[string]struct {
		c     cell
		width int
		right bool
		want  string
	}{
		"left pads":               {c: text("ab"), width: 4, want: "ab  "},
		"left cuts":               {c: text("abcdef"), width: 4, want: "abcd"},
		"left cuts uncut cells":   {c: whole("abcdef"), width: 4, want: "abcd"},
		"right pads":              {c: text("ab"), width: 4, right: true, want: "  ab"},
		"right cuts from the end": {c: text("131_[0-9%2]"), width: 10, right: true, want: "131_[0-9%2"},
		"right overflows uncut":   {c: whole("1-00:00:00"), width: 5, right: true, want: "1-00:00:00"},
		"zero width":              {c: text("abc"), width: 0, want: "abc"},
		"negative width":          {c: text("abc"), width: -2, want: "abc "},
		"null":                    {c: str(""), width: 0, want: "(null)"},
		"null short precision":    {c: str(""), width: 3, want: "   "},
		"null right cut":          {c: str(""), width: 3, right: true, want: "(nu"},
		"null wide":               {c: str(""), width: 8, want: "(null)  "},
		"omitted":                 {c: cell{omit: true}, width: 8, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := layout(tc.c, tc.width, tc.right); got != tc.want {
				t.Errorf("layout = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestConvertNumUnit(t *testing.T) {
	tests := map[string]struct {
		num  float64
		unit Unit
		mode Convert
		buf  int
		want string
	}{
		"zero":              {num: 0, unit: UnitMega, want: "0"},
		"megabytes":         {num: 100, unit: UnitMega, want: "100M"},
		"exact gigabytes":   {num: 2048, unit: UnitMega, want: "2G"},
		"half units count":  {num: 1536, unit: UnitMega, want: "1.50G"},
		"inexact stays":     {num: 1000, unit: UnitMega, want: "1000M"},
		"no convert":        {num: 2048, unit: UnitMega, mode: ConvertNone, want: "2048M"},
		"plain count":       {num: 4, unit: UnitNone, want: "4"},
		"count in thousand": {num: 2048, unit: UnitNone, want: "2K"},
		"buffer cut":        {num: 123456789, unit: UnitMega, buf: 8, want: "1234567"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ConvertNumUnit(tc.num, tc.unit, tc.mode, tc.buf); got != tc.want {
				t.Errorf("ConvertNumUnit = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRowFields(t *testing.T) {
	now := time.Unix(2000, 0).UTC()
	ctx := &Context{Now: now}
	tests := map[string]struct {
		job  Job
		spec string
		want string
	}{
		"time used and left": {
			job:  Job{JobID: 1, State: StateRunning, StartTime: 1925, TimeLimit: 2},
			spec: "%M %L %l",
			want: "1:15 0:45 2:00",
		},
		"limit over a year is INVALID": {
			job:  Job{JobID: 1, State: StatePending, TimeLimit: 5000000},
			spec: "%l",
			want: "INVALID",
		},
		"unset limit": {
			job:  Job{JobID: 1, TimeLimit: NoVal},
			spec: "%l|%L",
			want: "NOT_SET|NOT_SET",
		},
		"suspended time": {
			job:  Job{JobID: 1, State: StateSuspended, StartTime: 10, PreSusTime: 61},
			spec: "%M",
			want: "1:01",
		},
		"finished job counts to its end": {
			job:  Job{JobID: 1, State: StateCompleted, StartTime: 100, EndTime: 3700},
			spec: "%M",
			want: "1:00:00",
		},
		"exit codes": {
			job:  Job{JobID: 1, ExitCode: ExitCode{Present: true, Signaled: true, SignalID: 15}, DerivedExitCode: ExitCode{Present: true, Exited: true, ReturnCode: 3}},
			spec: "exit_code:5|,DerivedEC:5|",
			want: "0:15 |3:0  |",
		},
		"no exit code prints nothing": {
			job:  Job{JobID: 1},
			spec: "exit_code:5|,State:8",
			want: "|PENDING ",
		},
		"core spec": {
			job:  Job{JobID: 1, CoreSpec: coreSpecThread | 2},
			spec: "%X",
			want: "2 Threads",
		},
		"reason list of a failed job": {
			job:  Job{JobID: 1, State: StateFailed, Reason: "NonZeroExitCode", Nodes: "n1"},
			spec: "%R",
			want: "(NonZeroExitCode)",
		},
		"reason list of a completing failed job": {
			job:  Job{JobID: 1, State: StateFailed | FlagCompleting, Reason: "NonZeroExitCode", Nodes: "n[2,1]"},
			spec: "%R %T %t",
			want: "n[1-2] COMPLETING CG",
		},
		"merged reasons": {
			job:  Job{JobID: 1, State: StatePending, Reason: "Resources", StateDesc: "Resources,Priority"},
			spec: "%r",
			want: "Resources,Priority",
		},
		"array ids": {
			job:  Job{JobID: 7, ArrayJobID: 5, ArrayTaskID: 2},
			spec: "%i %A %F %K",
			want: "5_2 7 5 2",
		},
		"het job ids": {
			job:  Job{JobID: 9, HetJobID: 8, HetJobOffset: 1, ArrayTaskID: NoVal},
			spec: "%i",
			want: "8+1",
		},
		"long array id is cut": {
			job:  Job{JobID: 5, ArrayJobID: 5, ArrayTaskID: NoVal, ArrayTaskStr: "1,3,5,7,9,11,13,15,17,19,21,23"},
			spec: "%i",
			want: "5_[1,3,5,7,9,11,13,15,17,19,21,",
		},
		"end time of unlimited job": {
			job:  Job{JobID: 1, TimeLimit: Infinite, EndTime: 3000},
			spec: "%e",
			want: "NONE",
		},
		"priority": {
			job:  Job{JobID: 1, Priority: 1},
			spec: "%p %Q",
			want: "0.00000000023283 1",
		},
		"unresolved user": {
			job:  Job{JobID: 1, UserID: 1234},
			spec: "%u %U",
			want: "1234 1234",
		},
		"batch host": {
			job:  Job{JobID: 1, BatchFlag: true},
			spec: "%B",
			want: "n/a",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var f Format
			if strings.Contains(tc.spec, "%") {
				f, _ = ParseFormat(tc.spec)
			} else {
				f, _ = ParseLongFormat(tc.spec)
			}
			if tc.job.ArrayTaskID == 0 && tc.job.ArrayJobID == 0 {
				tc.job.ArrayTaskID = NoVal
			}
			if got := f.Row(&tc.job, ctx); got != tc.want {
				t.Errorf("Row(%q) = %q, want %q", tc.spec, got, tc.want)
			}
		})
	}
}

func TestSpecRoundTrip(t *testing.T) {
	for _, spec := range []string{"%.18i %.9P %j", "x%i|%5!y", "%all", "JobID:.8 ,Name,bogus:-3x"} {
		var f, again Format
		if strings.Contains(spec, ":") || !strings.Contains(spec, "%") {
			f, _ = ParseLongFormat(spec)
			again, _ = ParseLongFormat(f.Spec())
		} else {
			f, _ = ParseFormat(spec)
			again, _ = ParseFormat(f.Spec())
		}
		if diff := cmp.Diff(view(f), view(again)); diff != "" {
			t.Errorf("%q: Spec %q parses differently (-first +second):\n%s", spec, f.Spec(), diff)
		}
	}
}
