package v0044

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/arrayspec"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/slurmerr"
)

func TestParseSelector(t *testing.T) {
	tests := map[string]struct {
		in   string
		want controller.JobSelector
		err  bool
	}{
		"plain":            {in: "123", want: controller.JobSelector{ID: 123}},
		"spaces trimmed":   {in: " 123 ", want: controller.JobSelector{ID: 123}},
		"task":             {in: "123_4", want: controller.JobSelector{ID: 123, Tasks: []uint32{4}}},
		"task list":        {in: "123_[1-3,7]", want: controller.JobSelector{ID: 123, Tasks: []uint32{1, 2, 3, 7}}},
		"task range bare":  {in: "123_1-3", want: controller.JobSelector{ID: 123, Tasks: []uint32{1, 2, 3}}},
		"largest id":       {in: "4294967295", want: controller.JobSelector{ID: 4294967295}},
		"zero":             {in: "0", err: true},
		"too large":        {in: "4294967296", err: true},
		"not a number":     {in: "abc", err: true},
		"negative":         {in: "-1", err: true},
		"empty":            {in: "", err: true},
		"empty task":       {in: "12_", err: true},
		"bad task":         {in: "12_[x]", err: true},
		"task too large":   {in: "12_1001", err: true},
		"huge task range":  {in: "12_0-2000000000", err: true},
		"step not a task":  {in: "12.batch", err: true},
		"unclosed bracket": {in: "12_[1-3", want: controller.JobSelector{ID: 12, Tasks: []uint32{1, 2, 3}}},
		"het component":    {in: "12+1", want: controller.JobSelector{ID: 12, Het: true, HetOffset: 1}},
		"het leader":       {in: "12+0", want: controller.JobSelector{ID: 12, Het: true}},
		"het no offset":    {in: "12+", err: true},
		"het bad offset":   {in: "12+x", err: true},
		"het zero leader":  {in: "0+1", err: true},
		"het and task":     {in: "12+1_2", err: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseSelector(tc.in, 1001)
			if (err != nil) != tc.err {
				t.Fatalf("parseSelector(%q) error %v, want error %v", tc.in, err, tc.err)
			}
			if err != nil {
				if slurmerr.CodeOf(err) != slurmerr.InvalidJobID {
					t.Errorf("error code %d, want %d", slurmerr.CodeOf(err), slurmerr.InvalidJobID)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// formatSelector writes a selector back the way users write one.
func formatSelector(s controller.JobSelector) string {
	out := strconv.FormatUint(uint64(s.ID), 10)
	if s.Het {
		out += "+" + strconv.FormatUint(uint64(s.HetOffset), 10)
	}
	if s.Tasks != nil {
		out += "_[" + arrayspec.Format(s.Tasks, 0) + "]"
	}
	return out
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"123", "123_4", "123_[1-3,7]", "1_0-1000:7", "4294967295", "0", "12_", "12_[x]", "1_[]", "1_%2", "٣", "12+1", "12+", "+1", "1+2+3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		const limit = 1001
		sel, err := parseSelector(in, limit)
		if err != nil {
			if slurmerr.CodeOf(err) != slurmerr.InvalidJobID {
				t.Fatalf("parseSelector(%q): code %d", in, slurmerr.CodeOf(err))
			}
			return
		}
		if sel.ID == 0 {
			t.Fatalf("parseSelector(%q): id 0 accepted", in)
		}
		if sel.Tasks != nil {
			if len(sel.Tasks) == 0 || !slices.IsSorted(sel.Tasks) || len(slices.Compact(slices.Clone(sel.Tasks))) != len(sel.Tasks) || sel.Tasks[len(sel.Tasks)-1] >= limit {
				t.Fatalf("parseSelector(%q): tasks %v not sorted, unique and below %d", in, sel.Tasks, limit)
			}
		}
		// What was read, written back, reads the same.
		again, err := parseSelector(formatSelector(sel), limit)
		if err != nil {
			t.Fatalf("parseSelector(%q) = %+v, written %q, fails again: %v", in, sel, formatSelector(sel), err)
		}
		if diff := cmp.Diff(sel, again); diff != "" {
			t.Fatalf("round trip of %q via %q (-first +second):\n%s", in, formatSelector(sel), diff)
		}
	})
}

func TestParseSignal(t *testing.T) {
	tests := map[string]struct {
		in   string
		want int32
		err  bool
	}{
		"number":      {in: "15", want: 15},
		"name":        {in: "TERM", want: 15},
		"SIG name":    {in: "SIGKILL", want: 9},
		"lower case":  {in: "sigusr1", want: 10},
		"CONT":        {in: "CONT", want: 18},
		"largest":     {in: "64", want: 64},
		"zero":        {in: "0", err: true},
		"too large":   {in: "65", err: true},
		"negative":    {in: "-9", err: true},
		"unknown":     {in: "NOSUCH", err: true},
		"empty":       {in: "", err: true},
		"SIG alone":   {in: "SIG", err: true},
		"spaces":      {in: " 9", err: true},
		"double SIG":  {in: "SIGSIGTERM", err: true},
		"name suffix": {in: "TERMX", err: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseSignal(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("parseSignal(%q) = %d, %v; want error %v", tc.in, got, err, tc.err)
			}
			if err == nil && got != tc.want {
				t.Errorf("parseSignal(%q) = %d, want %d", tc.in, got, tc.want)
			}
			if err != nil && slurmerr.CodeOf(err) != slurmerr.InvalidQuery {
				t.Errorf("error code %d", slurmerr.CodeOf(err))
			}
		})
	}
}

func FuzzParseSignal(f *testing.F) {
	for _, s := range []string{"9", "15", "TERM", "SIGTERM", "sigusr2", "0", "65", "SIG", "", "+9", "09"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n, err := parseSignal(in)
		if err != nil {
			return
		}
		if n < 1 || n > 64 {
			t.Fatalf("parseSignal(%q) = %d, outside 1-64", in, n)
		}
		// The number always reads back as itself.
		if again, err := parseSignal(strconv.Itoa(int(n))); err != nil || again != n {
			t.Fatalf("parseSignal(%q) = %d, but %d reads as %d, %v", in, n, n, again, err)
		}
		// A name is accepted with or without SIG, in any case.
		if name := strings.TrimPrefix(strings.ToUpper(in), "SIG"); name != "" && (name[0] < '0' || name[0] > '9') && in[0] != '+' && in[0] != '-' {
			for _, form := range []string{name, "SIG" + name, strings.ToLower(name)} {
				if again, err := parseSignal(form); err != nil || again != n {
					t.Fatalf("parseSignal(%q) = %d, but %q gives %d, %v", in, n, form, again, err)
				}
			}
		}
	})
}

func TestNoValFieldsMatchSpec(t *testing.T) {
	raw, err := os.ReadFile("../../openapi/spec/slurmrestd-v0.0.44.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Ref string `json:"$ref"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for name, p := range doc.Components.Schemas["v0.0.44_job_desc_msg"].Properties {
		if strings.HasSuffix(p.Ref, "_no_val_struct") {
			want = append(want, name)
		}
	}
	var got []string
	for name := range noValFields {
		got = append(got, name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 {
		t.Fatal("no no-val fields found in the spec")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("noValFields (-spec +ours):\n%s", diff)
	}
}

func TestNormalizeBody(t *testing.T) {
	tests := map[string]struct {
		method, path, in, want string
	}{
		"update: plain number": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"time_limit": 45}`,
			want: `{"time_limit":{"set":true,"number":45}}`,
		},
		"update: object kept": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"time_limit": {"set": true, "number": 45}}`,
			want: `{"time_limit": {"set": true, "number": 45}}`,
		},
		"update: big numbers kept exactly": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"memory_per_node": 18446744073709551615, "name": "x"}`,
			want: `{"memory_per_node":{"set":true,"number":18446744073709551615},"name":"x"}`,
		},
		"update: other fields untouched": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"tasks": 4, "nice": 3}`,
			want: `{"tasks": 4, "nice": 3}`,
		},
		"update: string left for the decoder": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"time_limit": "abc"}`,
			want: `{"time_limit": "abc"}`,
		},
		"submit: job and jobs": {
			method: "POST", path: "/slurm/v0.0.44/job/submit", in: `{"job": {"time_limit": 5, "priority": 2}, "jobs": [{"begin_time": 7}, {"name": "b"}], "time_limit": 9}`,
			want: `{"job":{"priority":{"set":true,"number":2},"time_limit":{"set":true,"number":5}},"jobs":[{"begin_time":{"set":true,"number":7}},{"name":"b"}],"time_limit":9}`,
		},
		"other operation": {
			method: "POST", path: "/slurm/v0.0.44/node/n1", in: `{"time_limit": 45}`,
			want: `{"time_limit": 45}`,
		},
		"GET": {
			method: "GET", path: "/slurm/v0.0.44/job/12", in: `{"time_limit": 45}`,
			want: `{"time_limit": 45}`,
		},
		"not JSON": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"time_limit": 45`,
			want: `{"time_limit": 45`,
		},
		"not an object": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `[{"time_limit": 45}]`,
			want: `[{"time_limit": 45}]`,
		},
		"trailing brace": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"priority":10}}`,
			want: `{"priority":10}}`,
		},
		"trailing data": {
			method: "POST", path: "/slurm/v0.0.44/job/12", in: `{"time_limit": 45} {}`,
			want: `{"time_limit": 45} {}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := string(NormalizeBody(tc.method, tc.path, []byte(tc.in))); got != tc.want {
				t.Errorf("NormalizeBody(%s) =\n%s\nwant\n%s", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzNormalizeBody(f *testing.F) {
	f.Add("/slurm/v0.0.44/job/12", []byte(`{"time_limit": 45, "priority": {"set": true, "number": 0}}`))
	f.Add("/slurm/v0.0.44/job/submit", []byte(`{"job": {"time_limit": 5}, "jobs": [{"begin_time": 7}]}`))
	f.Add("/slurm/v0.0.44/job/submit", []byte(`{"job": null, "jobs": null}`))
	f.Add("/slurm/v0.0.44/job/12", []byte(`{"time_limit": 1e400}`))
	f.Fuzz(func(t *testing.T, path string, body []byte) {
		out := NormalizeBody(http.MethodPost, path, body)
		if bytes.Equal(out, body) {
			return
		}
		// A rewrite happens only to a JSON object, gives a JSON object,
		// and a second pass changes nothing more.
		if !json.Valid(body) || !json.Valid(out) {
			t.Fatalf("rewrote %q into %q", body, out)
		}
		if again := NormalizeBody(http.MethodPost, path, out); !bytes.Equal(again, out) {
			t.Fatalf("second pass changed %q into %q", out, again)
		}
		// Only no-val fields changed, each into an object with set=true.
		var before, after map[string]json.RawMessage
		if json.Unmarshal(body, &before) != nil || json.Unmarshal(out, &after) != nil {
			t.Fatalf("not objects: %q -> %q", body, out)
		}
		if len(before) != len(after) {
			t.Fatalf("keys changed: %q -> %q", body, out)
		}
	})
}
