package slurmjson

import (
	"encoding/json"
	"testing"

	"github.com/go-faster/yaml"
)

func TestYAML(t *testing.T) {
	in := `{"jobs":[{"job_id":7,"name":"a: b","flags":[],"state":{"current":["COMPLETED"]},"ok":true,"none":null}],"meta":{"plugin":{"type":"x"}}}`
	got, err := YAML(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "---\njobs:\n  - job_id: 7\n    name: 'a: b'\n    flags: []\n    state:\n      current:\n        - COMPLETED\n    ok: true\n    none: null\nmeta:\n  plugin:\n    type: x\n"
	if got != want {
		t.Fatalf("YAML:\n%s\nwant:\n%s", got, want)
	}
	var back map[string]any
	if err := yaml.Unmarshal([]byte(got), &back); err != nil || back["jobs"] == nil {
		t.Fatalf("the YAML does not read back: %v %v", back, err)
	}
}

func TestYAMLEscapes(t *testing.T) {
	got, err := YAML(`{"script":"#!\/bin\/sh\n\techo \"\u00e9\"\n","empty":{},"n":-1.5e3}`)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Script string         `yaml:"script"`
		Empty  map[string]any `yaml:"empty"`
		N      float64        `yaml:"n"`
	}
	if err := yaml.Unmarshal([]byte(got), &back); err != nil || back.Script != "#!/bin/sh\n\techo \"é\"\n" || back.N != -1500 {
		t.Fatalf("%q -> %+v %v", got, back, err)
	}
}

func FuzzYAML(f *testing.F) {
	f.Add(`{"a":[1,"x",{"b":null}]}`)
	f.Add(`"\/"`)
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		out, err := YAML(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var back any
		if err := yaml.Unmarshal([]byte(out), &back); err != nil {
			t.Fatalf("%q -> %q does not read back: %v", s, out, err)
		}
	})
}
