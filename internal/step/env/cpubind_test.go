package env

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUBind(t *testing.T) {
	tests := map[string]struct {
		in   string
		want CPUBind
		vars map[string]string // nil: IsSet is false
	}{
		"cores": {
			in: "cores", want: CPUBind{Unit: UnitCores},
			vars: map[string]string{"SLURM_CPU_BIND": "quiet,cores", "SLURM_CPU_BIND_TYPE": "cores", "SLURM_CPU_BIND_LIST": "", "SLURM_CPU_BIND_VERBOSE": "quiet"},
		},
		"list between words": {
			in: "verbose,map_cpu:0,1,cores", want: CPUBind{Verbose: true, Unit: UnitCores, Mode: ModeMapCPU, List: "0,1"},
			vars: map[string]string{"SLURM_CPU_BIND": "verbose,cores,map_cpu:0,1", "SLURM_CPU_BIND_TYPE": "cores,map_cpu:", "SLURM_CPU_BIND_LIST": "0,1", "SLURM_CPU_BIND_VERBOSE": "verbose"},
		},
		"masks lose 0x": {
			in: "mask_cpu:0x3,0xc,f0", want: CPUBind{Mode: ModeMaskCPU, List: "3,c,f0"},
			vars: map[string]string{"SLURM_CPU_BIND": "quiet,mask_cpu:3,c,f0", "SLURM_CPU_BIND_TYPE": "mask_cpu:", "SLURM_CPU_BIND_LIST": "3,c,f0", "SLURM_CPU_BIND_VERBOSE": "quiet"},
		},
		"multipliers and =":     {in: "map_cpu=1*3,2", want: CPUBind{Mode: ModeMapCPU, List: "1,1,1,2"}},
		"case and old spelling": {in: "V,MAPCPU:4", want: CPUBind{Verbose: true, Mode: ModeMapCPU, List: "4"}},
		"none": {
			in: "none", want: CPUBind{Mode: ModeNone},
			vars: map[string]string{"SLURM_CPU_BIND": "quiet,none", "SLURM_CPU_BIND_TYPE": "none", "SLURM_CPU_BIND_LIST": "", "SLURM_CPU_BIND_VERBOSE": "quiet"},
		},
		"no":                  {in: "no", want: CPUBind{Mode: ModeNone}},
		"later wins":          {in: "cores,none,sockets,map_cpu:1", want: CPUBind{Unit: UnitSockets, Mode: ModeMapCPU, List: "1"}},
		"rank drops the list": {in: "map_cpu:1,rank", want: CPUBind{Mode: ModeMapCPU}},
		"ldoms":               {in: "ldoms,rank_ldom", want: CPUBind{Unit: UnitLdoms, Mode: ModeRankLdom}},
		"ldom lists":          {in: "map_ldom:0,1", want: CPUBind{Mode: ModeMapLdom, List: "0,1"}},
		"ldom masks":          {in: "threads,mask_ldom:0x1", want: CPUBind{Unit: UnitThreads, Mode: ModeMaskLdom, List: "1"}},
		"quiet alone":         {in: "quiet", want: CPUBind{}},
		"rank alone":          {in: "rank", want: CPUBind{}},
		"verbose alone": {
			in: "v", want: CPUBind{Verbose: true},
			vars: map[string]string{"SLURM_CPU_BIND": "verbose", "SLURM_CPU_BIND_TYPE": "", "SLURM_CPU_BIND_LIST": "", "SLURM_CPU_BIND_VERBOSE": "verbose"},
		},
		"one_thread": {
			in: "one_thread", want: CPUBind{OneThread: true},
			vars: map[string]string{"SLURM_CPU_BIND": "quiet", "SLURM_CPU_BIND_TYPE": "", "SLURM_CPU_BIND_LIST": "", "SLURM_CPU_BIND_VERBOSE": "quiet"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCPUBind(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ParseCPUBind(%q) (-want +got):\n%s", tc.in, d)
			}
			if tc.vars != nil {
				if !got.IsSet() {
					t.Fatalf("IsSet false")
				}
				if d := cmp.Diff(tc.vars, got.vars()); d != "" {
					t.Errorf("variables (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestParseCPUBindErrors(t *testing.T) {
	for _, in := range []string{"map_cpu", "map_cpu:", "mask_cpu=", "map_cpu:a", "map_cpu:0x1", "mask_cpu:g",
		"map_cpu:1*0", "map_cpu:1*x", "map_cpu:1*", "map_cpu:1*2*3", "map_cpu:,", "bogus", "help", "cores,",
		"map_cpu:0*99999999", "map_ldom", "mask_ldom:z"} {
		if b, err := ParseCPUBind(in); !errors.Is(err, ErrCPUBind) {
			t.Errorf("ParseCPUBind(%q) = %+v, %v; want an ErrCPUBind", in, b, err)
		}
	}
}

// spell writes b back as a --cpu-bind value.
func spell(b CPUBind) string {
	var words []string
	if b.Verbose {
		words = append(words, "verbose")
	}
	if b.OneThread {
		words = append(words, "one_thread")
	}
	if u := b.Unit.String(); u != "" {
		words = append(words, u)
	}
	if m := b.Mode.String(); m != "" {
		words = append(words, m+b.List)
	}
	return strings.Join(words, ",")
}

// FuzzParseCPUBind checks that ParseCPUBind never panics, that refusals
// wrap ErrCPUBind, and that an accepted value's variables are consistent
// and its spelling parses back to the same binding.
func FuzzParseCPUBind(f *testing.F) {
	for _, s := range []string{"cores", "verbose,map_cpu:0,1,cores", "mask_cpu:0x3,0xc", "map_cpu=1*3,2", "none",
		"rank", "one_thread", "map_cpu:1,rank", "v,q", "mask_cpu:0x", "ldoms,mask_ldom:f*2", "map_cpu:1,ab", ",", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b, err := ParseCPUBind(in)
		if err != nil {
			if !errors.Is(err, ErrCPUBind) {
				t.Fatalf("error %v does not wrap ErrCPUBind", err)
			}
			return
		}
		v := b.vars()
		verbose := v["SLURM_CPU_BIND_VERBOSE"]
		if verbose != "quiet" && verbose != "verbose" {
			t.Fatalf("SLURM_CPU_BIND_VERBOSE %q", verbose)
		}
		want := verbose
		if typ := v["SLURM_CPU_BIND_TYPE"]; typ != "" {
			want += "," + typ + v["SLURM_CPU_BIND_LIST"]
		}
		if v["SLURM_CPU_BIND"] != want {
			t.Fatalf("SLURM_CPU_BIND %q, want %q", v["SLURM_CPU_BIND"], want)
		}
		if v["SLURM_CPU_BIND_LIST"] != "" && !b.Mode.takesList() {
			t.Fatalf("list %q for mode %v", v["SLURM_CPU_BIND_LIST"], b.Mode)
		}
		if strings.Contains(b.List, "0x") && (b.Mode == ModeMaskCPU || b.Mode == ModeMaskLdom) {
			t.Fatalf("mask list %q kept a 0x", b.List)
		}
		if !b.IsSet() || b.Mode.takesList() && (b.List == "" || strings.Contains(","+b.List+",", ",,")) {
			return // nothing to spell: only "quiet" or "rank", a list "rank" dropped, an empty mask from a bare "0x"
		}
		again, err := ParseCPUBind(spell(b))
		if err != nil {
			t.Fatalf("spelling %q of %+v: %v", spell(b), b, err)
		}
		if d := cmp.Diff(b, again); d != "" {
			t.Fatalf("%q -> %q (-first +again):\n%s", in, spell(b), d)
		}
	})
}
