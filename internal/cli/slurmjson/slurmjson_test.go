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

func TestWrite(t *testing.T) {
	tests := map[string]struct {
		v    any
		want string
	}{
		"scalars": {
			v:    Object{{Key: "s", Val: "a/b\"c\\\n\x01"}, {Key: "n", Val: Num(int64(-3))}, {Key: "b", Val: Bool(true)}, {Key: "z", Val: nil}},
			want: "{\n  \"s\": \"a\\/b\\\"c\\\\\\n\\u0001\",\n  \"n\": -3,\n  \"b\": true,\n  \"z\": null\n}",
		},
		"empty containers": {
			v:    Object{{Key: "errors", Val: Array{}}, {Key: "o", Val: Object{}}},
			want: "{\n  \"errors\": [\n  ],\n  \"o\": {\n  }\n}",
		},
		"nested": {
			v:    Array{Object{{Key: "a", Val: Array{"x", Num(uint32(1))}}}},
			want: "[\n  {\n    \"a\": [\n      \"x\",\n      1\n    ]\n  }\n]",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			Write(&b, tc.v, 0)
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReorder(t *testing.T) {
	order := Schema{Order: map[string][]string{"": {"b", "a"}, "a": {"y", "x"}}}
	tests := map[string]struct {
		in, want string
	}{
		"by path": {
			in:   `{"a":{"x":1,"y":2},"b":3}`,
			want: `{"b":3,"a":{"y":2,"x":1}}`,
		},
		"unknown members last, in place": {
			in:   `{"c":0,"a":{"z":9,"x":1},"b":3}`,
			want: `{"b":3,"a":{"x":1,"z":9},"c":0}`,
		},
		"number structs without an order": {
			in:   `{"b":{"number":1,"infinite":false,"set":true},"a":[{"y":1}]}`,
			want: `{"b":{"set":true,"infinite":false,"number":1},"a":[{"y":1}]}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tree, err := Decode(jx.DecodeStr(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			Write(&b, Reorder(tree, "", order), 0)
			if diff := cmp.Diff(compact(t, tc.want), compact(t, b.String())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// Reordering keeps the document: the same values.
			var x, y any
			_ = json.Unmarshal([]byte(tc.in), &x)
			_ = json.Unmarshal([]byte(b.String()), &y)
			if diff := cmp.Diff(x, y); diff != "" {
				t.Errorf("values changed (-in +out):\n%s", diff)
			}
		})
	}
}

// compact strips the layout of a JSON text, keeping member order.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			b.WriteString(v.String())
		case string:
			b.WriteString("<" + v + ">")
		default:
			b.WriteString(strings.TrimSpace(strings.ReplaceAll(jsonText(v), "\n", "")))
		}
		b.WriteString(" ")
	}
	return b.String()
}

func jsonText(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// TestFormatMatchesSlurmrestd decodes a real slurmrestd job answer with
// the generated decoder and writes it again: the bytes are slurmrestd's.
func TestFormatMatchesSlurmrestd(t *testing.T) {
	dir := filepath.Join(clitest.ReferenceDir(t), "rest", "v0.0.44")
	for _, name := range []string{"job_running.json", "job_completed.json", "job_gpu.json"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			var resp v0044.V0044OpenapiJobInfoResp
			if err := resp.Decode(jx.DecodeBytes(raw)); err != nil {
				t.Fatalf("decode: %v", err)
			}
			got, err := Format(&resp, JobInfoResp())
			if err != nil {
				t.Fatal(err)
			}
			// The CLI ends its output with a newline; slurmrestd's body
			// has none.
			if diff := cmp.Diff(string(raw)+"\n", got); diff != "" {
				t.Errorf("(-slurmrestd +slurmjson):\n%s", diff)
			}
		})
	}
}

func TestDouble(t *testing.T) {
	tests := map[string]string{
		"1": "1.0", "0": "0.0", "0.5": "0.5", "2.3283064376228985e-10": "2.3283064376228985e-10",
		"0.1": "0.10000000000000001", "-3": "-3.0", "1e21": "1e+21", "123456789012345678": "1.2345678901234568e+17",
		"true": "true", "null": "null",
	}
	for in, want := range tests {
		if got := Double(Raw(in)); string(got) != want {
			t.Errorf("Double(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzDecodeWrite checks that any JSON Decode accepts is written as valid
// JSON with the same values, and that writing is stable.
func FuzzDecodeWrite(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c/d"}],"e":null}`, `[]`, `"x"`, `{"set":true,"number":1}`, `{"":{}}`, `1.5e3`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		tree, err := Decode(jx.DecodeStr(in))
		if err != nil {
			return
		}
		var b strings.Builder
		Write(&b, Reorder(tree, "", Schema{Order: map[string][]string{"": {"b", "a"}}, Floats: map[string]bool{"a": true}}), 0)
		out := b.String()
		if !json.Valid([]byte(out)) {
			t.Fatalf("invalid output %q for %q", out, in)
		}
		var x, y any
		if json.Unmarshal([]byte(in), &x) == nil && json.Unmarshal([]byte(out), &y) == nil {
			if diff := cmp.Diff(x, y); diff != "" {
				t.Fatalf("values changed for %q (-in +out):\n%s", in, diff)
			}
		}
		again, err := Decode(jx.DecodeStr(out))
		if err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		var b2 strings.Builder
		Write(&b2, again, 0)
		if b2.String() != out {
			t.Fatalf("writing is not stable:\n%s\n%s", out, b2.String())
		}
	})
}
