package slurmjson

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-faster/jx"
	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// oddSchema has the paths that joining keys with "/" makes hard (keys
// with "/" in them, empty keys, and "" at the top, which leads back to
// the top), doubles inside number structs and an empty order. No order
// names a member twice: Schema forbids it.
var oddSchema = Schema{
	Order: map[string][]string{
		"":       {"b", "a", "x/y", "", "s"},
		"a":      {"y", "x"},
		"x/y":    {"q", "p"},
		"a/":     {"z", "w"},
		"/k":     {"n", "m"},
		"a/x":    {"set"},
		"e":      {},
		"b/c/d":  {"2", "1"},
		"a/y/z":  {"number", "set"},
		"/":      {"k2", "k1"},
		"//":     {"k4", "k3"},
		"a//":    {"k6", "k5"},
		"a/y//z": {"k8", "k7"},
	},
	Floats: map[string]bool{"a/y": true, "f": true, "x/y/p": true, "s/number": true, "b": false, "a/y/z/number": true},
}

// formatCases are texts whose reordering is easy to get wrong.
var formatCases = []string{
	`{"a":{"x":1,"y":2},"b":3}`,
	`{"c":0,"a":{"z":9,"x":1},"b":3}`,
	`{"b":{"number":1,"infinite":false,"set":true},"a":[{"y":1}]}`,
	`{"s":{"number":1,"set":true},"t":{"number":1.5,"set":true,"infinite":false,"x":1},"u":{"set":1,"set":2,"number":3},"v":{"number":7}}`,
	`{"a":{"y":[1,2.5,-0,1e21,"1",{"z":{"set":true,"number":2}}],"x":{"set":1,"other":2}},"f":0.1,"g":0.1}`,
	`{"x/y":{"p":1,"q":2,"r":3},"x":{"y":{"p":1,"q":2}},"":{"b":1,"a":2,"":{"a":3,"b":4}}}`,
	`{"a":{"":{"w":1,"z":2},"x":3},"/k":{"m":1,"n":2},"/":{"k1":1,"k2":2},"":{"":{"/":{"k1":1,"k2":2}}}}`,
	`{"a":{"/":{"k5":1,"k6":2}},"a/":{"/":{"k5":1,"k6":2}},"a//":{"k5":1,"k6":2}}`,
	`{"a":{"y":{"/":{"z":{"k7":1,"k8":2}}}},"a/y/":{"z":{"k7":1,"k8":2}},"a/y//z":{"k7":1,"k8":2}}`,
	`{"k":{"m":1,"n":2},"/k":{"m":1,"n":2},"y":{"q":1,"p":2}}`,
	`{"z9":1,"a":{"x":1},"z8":2,"b":1,"z7":3,"s":{"number":1},"z6":4,"a":{"y":1},"z5":5,"":0,"z4":6,"x/y":{},"z3":7,"b":2,"z2":8,"s":0,"z1":9,"a":3,"z0":10}`,
	`{"b":{"c":{"d":{"1":1,"2":2}}},"b/c":{"d":{"1":1,"2":2}},"b/c/d":{"1":1,"2":2}}`,
	`{"a":1,"a":2,"b":3,"b":4,"c":5,"b":6}`,
	`{"\u0061":{"\u0078":1,"y":2},"b\/":1,"b":"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t\u0001\u001f\u007f","\u0000":null}`,
	`{"e":{"b":1,"a":2},"x":{"y":{"q":1,"p":1.0}},"n":"ünïcode / slash"}`,
	` { "b" : [ ] , "a" : { } , "c" : [ { } , [ ] , null , true , false ] } `,
	`[{"b":1,"a":2},[{"number":1,"set":true}],"x"]`,
	`"a/b"`, `1.5e3`, `-0.0E-2`, `null`, `{}`, `[]`, `{"":{}}`,
	`[[[[[[[[[[[[[[[[[[[[{"a":{"y":1,"x":2}}]]]]]]]]]]]]]]]]]]]]`,
}

// checkFormat holds Format's pass and Reorder and Write to the earlier
// implementation on one text.
func checkFormat(t *testing.T, in string, o Schema) {
	t.Helper()
	want, err := referenceFormatText([]byte(in), o)
	if err != nil {
		t.Fatalf("reference rejects %q: %v", in, err)
	}
	got, err := appendFormatted(nil, []byte(in), o)
	if err != nil {
		t.Fatalf("format %q: %v", in, err)
	}
	if diff := cmp.Diff(want, string(got)+"\n"); diff != "" {
		t.Errorf("format %q (-reference +got):\n%s", in, diff)
	}
	tree, err := Decode(jx.DecodeStr(in))
	if err != nil {
		t.Fatalf("decode %q: %v", in, err)
	}
	var b strings.Builder
	Write(&b, Reorder(tree, "", o), 0)
	b.WriteByte('\n')
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("reorder %q (-reference +got):\n%s", in, diff)
	}
}

func TestFormatMatchesReference(t *testing.T) {
	for _, o := range []struct {
		name string
		s    Schema
	}{{"odd", oddSchema}, {"jobs", JobInfoResp()}, {"partition", PartitionInfo()}, {"none", Schema{}}} {
		for _, in := range formatCases {
			t.Run(o.name, func(t *testing.T) { checkFormat(t, in, o.s) })
		}
	}
}

// TestFormatMatchesReferenceJobs formats the job answers slurmrestd
// gave, one by one and all together, with strings that need escapes and
// a fractional double added, as the earlier implementation did.
func TestFormatMatchesReferenceJobs(t *testing.T) {
	resp := referenceJobs(t)
	// Only the captures of jobs with resources decode: pending jobs have
	// "job_resources": null, which the generated decoder refuses.
	if len(resp.Jobs) < 3 {
		t.Fatalf("only %d jobs in the captures", len(resp.Jobs))
	}
	odd := resp.Jobs[0]
	odd.Comment = v0044.NewOptString("quote \" backslash \\ slash / tab \t bell \x07 del \x7f é")
	odd.BillableTres = v0044.NewOptV0044Float64NoValStruct(v0044.V0044Float64NoValStruct{
		Set: v0044.NewOptBool(true), Number: v0044.NewOptFloat64(0.1),
	})
	resp.Jobs = append(resp.Jobs, odd)
	for i := range resp.Jobs {
		one := resp
		one.Jobs = resp.Jobs[i : i+1]
		compareFormat(t, &one, JobInfoResp())
	}
	compareFormat(t, &resp, JobInfoResp())
	resp.Jobs = v0044.V0044JobInfoMsg{}
	compareFormat(t, &resp, JobInfoResp())
}

func TestFormatMatchesReferencePartitions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(clitest.ReferenceDir(t), "rest", "v0.0.44", "partitions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var resp v0044.V0044OpenapiPartitionResp
	if err := resp.Decode(jx.DecodeBytes(raw)); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(resp.Partitions) == 0 {
		t.Fatal("no partitions in the capture")
	}
	for i := range resp.Partitions {
		compareFormat(t, &resp.Partitions[i], PartitionInfo())
	}
}

func compareFormat(t *testing.T, v Encoder, o Schema) {
	t.Helper()
	want, err := referenceFormat(v, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Format(v, o)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Format differs from the reference (-reference +got):\n%s", cmp.Diff(want, got))
	}
	var e jx.Encoder
	v.Encode(&e)
	checkFormat(t, e.String(), o)
}

// referenceJobs is every job of the slurmrestd job captures in one
// answer.
func referenceJobs(tb testing.TB) v0044.V0044OpenapiJobInfoResp {
	tb.Helper()
	dir := filepath.Join(clitest.ReferenceDir(tb), "rest", "v0.0.44")
	names, err := filepath.Glob(filepath.Join(dir, "job*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var all v0044.V0044OpenapiJobInfoResp
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		var resp v0044.V0044OpenapiJobInfoResp
		if resp.Decode(jx.DecodeBytes(raw)) != nil {
			continue
		}
		if all.Jobs == nil {
			all = resp
			continue
		}
		all.Jobs = append(all.Jobs, resp.Jobs...)
	}
	return all
}

// FuzzFormat holds Format's pass, and Reorder and Write, to the earlier
// implementation on any JSON it read.
func FuzzFormat(f *testing.F) {
	for _, s := range formatCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		if _, err := referenceFormatText([]byte(in), oddSchema); err != nil {
			return
		}
		checkFormat(t, in, oddSchema)
	})
}

// BenchmarkFormat prints 5,000 jobs, the captures' jobs over and over,
// as squeue --json does; "reference" is the earlier implementation.
func BenchmarkFormat(b *testing.B) {
	base := referenceJobs(b)
	resp := base
	resp.Jobs = make(v0044.V0044JobInfoMsg, 5000)
	for i := range resp.Jobs {
		resp.Jobs[i] = base.Jobs[i%len(base.Jobs)]
		resp.Jobs[i].JobID = v0044.NewOptInt32(int32(1000 + i))
	}
	for _, impl := range []struct {
		name   string
		format func(Encoder, Schema) (string, error)
	}{{"stream", Format}, {"reference", referenceFormat}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				out, err := impl.format(&resp, JobInfoResp())
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.SetBytes(int64(size))
		})
	}
}
