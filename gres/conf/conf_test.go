package conf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreNodes = cmpopts.IgnoreUnexported(Line{})

func TestLoadReference(t *testing.T) {
	tests := map[string]struct {
		file string
		node string
		want NodeConfig
	}{
		"22.05 n1": {
			file: "gres.conf.22.05", node: "n1",
			want: NodeConfig{AutoDetect: AutoDetectOff, Lines: []Line{{
				File: "testdata/gres.conf.22.05", Line: 2, NodeName: "n1", Name: "gpu", Count: 4,
				Files: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"},
			}}},
		},
		"22.05 n4": {
			file: "gres.conf.22.05", node: "n4",
			want: NodeConfig{AutoDetect: AutoDetectOff, Lines: []Line{{
				File: "testdata/gres.conf.22.05", Line: 5, NodeName: "n4", Name: "gpu", Count: 4,
				Files: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"},
			}}},
		},
		"22.05 other node": {
			file: "gres.conf.22.05", node: "n5",
			want: NodeConfig{AutoDetect: AutoDetectOff},
		},
		"26.11 rc1": {
			file: "gres.conf.26.11", node: "rc1",
			want: NodeConfig{Lines: []Line{
				{File: "testdata/gres.conf.26.11", Line: 1, NodeName: "rc1", Name: "gpu", Count: 1, Files: []string{"/dev/null"}},
				{File: "testdata/gres.conf.26.11", Line: 2, NodeName: "rc1", Name: "gpu", Count: 1, Files: []string{"/dev/zero"}},
			}},
		},
		"manpage tux3": {
			file: "manpage.conf", node: "tux3",
			want: NodeConfig{AutoDetect: AutoDetectOff, Lines: []Line{
				{File: "testdata/manpage.conf", Line: 5, Name: "gpu", Type: "gtx560", Count: 1, Files: []string{"/dev/nvidia0"}, Cores: "0-1"},
				{File: "testdata/manpage.conf", Line: 6, Name: "gpu", Type: "tesla", Count: 1, Files: []string{"/dev/nvidia1"}, Cores: "2-3"},
				{File: "testdata/manpage.conf", Line: 7, Name: "mps", Count: 100, Files: []string{"/dev/nvidia0"}, Cores: "0-1"},
				{File: "testdata/manpage.conf", Line: 8, Name: "mps", Count: 100, Files: []string{"/dev/nvidia1"}, Cores: "2-3"},
				{File: "testdata/manpage.conf", Line: 10, NodeName: "tux3", AutoDetect: AutoDetectOff, Name: "gpu", Count: 4,
					Files: []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}},
				{File: "testdata/manpage.conf", Line: 13, NodeName: "tux[0-7]", Name: "bandwidth", Type: "lustre", Count: 4 << 30, Flags: FlagCountOnly},
			}},
		},
		"manpage tux9 rsmi": {
			file: "manpage.conf", node: "tux9",
			want: NodeConfig{AutoDetect: AutoDetectRSMI, Lines: []Line{
				{File: "testdata/manpage.conf", Line: 5, Name: "gpu", Type: "gtx560", Count: 1, Files: []string{"/dev/nvidia0"}, Cores: "0-1"},
				{File: "testdata/manpage.conf", Line: 6, Name: "gpu", Type: "tesla", Count: 1, Files: []string{"/dev/nvidia1"}, Cores: "2-3"},
				{File: "testdata/manpage.conf", Line: 7, Name: "mps", Count: 100, Files: []string{"/dev/nvidia0"}, Cores: "0-1"},
				{File: "testdata/manpage.conf", Line: 8, Name: "mps", Count: 100, Files: []string{"/dev/nvidia1"}, Cores: "2-3"},
			}},
		},
		"manpage tux12 global nvml": {
			file: "manpage.conf", node: "tux12",
			want: NodeConfig{AutoDetect: AutoDetectNVML, Lines: []Line{
				{File: "testdata/manpage.conf", Line: 5, Name: "gpu", Type: "gtx560", Count: 1, Files: []string{"/dev/nvidia0"}, Cores: "0-1"},
				{File: "testdata/manpage.conf", Line: 6, Name: "gpu", Type: "tesla", Count: 1, Files: []string{"/dev/nvidia1"}, Cores: "2-3"},
				{File: "testdata/manpage.conf", Line: 7, Name: "mps", Count: 100, Files: []string{"/dev/nvidia0"}, Cores: "0-1"},
				{File: "testdata/manpage.conf", Line: 8, Name: "mps", Count: 100, Files: []string{"/dev/nvidia1"}, Cores: "2-3"},
				{File: "testdata/manpage.conf", Line: 12, NodeName: "tux[12-15]", Name: "gpu", Count: 3,
					Files: []string{"/dev/nvidia0", "/dev/nvidia2", "/dev/nvidia3"}},
			}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := Load(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != 0 {
				t.Errorf("warnings: %v", cfg.Warnings)
			}
			if diff := cmp.Diff(tt.want, cfg.ForNode(tt.node), ignoreNodes); diff != "" {
				t.Errorf("ForNode(%q) mismatch (-want +got):\n%s", tt.node, diff)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in           string
		node         string
		want         NodeConfig
		wantWarnings []string
	}{
		"case-insensitive keys": {
			in:   "nodename=n1 NAME=gpu type=a100 FILE=/dev/nvidia[0-1] cores=0-7\n",
			node: "n1",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, NodeName: "n1", Name: "gpu", Type: "a100", Count: 2,
				Files: []string{"/dev/nvidia0", "/dev/nvidia1"}, Cores: "0-7"}}},
		},
		"comments and blanks": {
			in:   "# header\n\n   \nName=gpu File=/dev/nvidia0 # trailing comment\n",
			node: "any",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 4, Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}}}},
		},
		"continuation": {
			in:   "Name=gpu \\\n  File=/dev/nvidia[0-1] \\  \n  Type=a100\nName=nic\n",
			node: "x",
			want: NodeConfig{Lines: []Line{
				{File: "gres.conf", Line: 1, Name: "gpu", Type: "a100", Count: 2, Files: []string{"/dev/nvidia0", "/dev/nvidia1"}},
				{File: "gres.conf", Line: 4, Name: "nic", Count: 1},
			}},
		},
		"crlf": {
			in:   "AutoDetect=nvml\r\nName=gpu File=/dev/nvidia0\r\n",
			node: "x",
			want: NodeConfig{AutoDetect: AutoDetectNVML, Lines: []Line{{File: "gres.conf", Line: 2, Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}}}},
		},
		"escaped hash and quotes": {
			in:   "Name=gpu Type=\"a100\" File = /dev/gpu\\#0 # comment\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Type: "a100", Count: 1, Files: []string{"/dev/gpu#0"}}}},
		},
		"count without file": {
			in:   "Name=bandwidth Count=20M\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "bandwidth", Count: 20 << 20}}},
		},
		"count equals files": {
			in:   "Name=gpu File=/dev/nvidia[0-1] Count=2\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 2, Files: []string{"/dev/nvidia0", "/dev/nvidia1"}}}},
		},
		"shard count": {
			in:   "Name=shard Count=8 File=/dev/nvidia0\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "shard", Count: 8, Files: []string{"/dev/nvidia0"}}}},
		},
		"file list": {
			in:   "Name=gpu File=/dev/nvidia0,/dev/nvidia2\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 2, Files: []string{"/dev/nvidia0", "/dev/nvidia2"}}}},
		},
		"multiple files": {
			in:   "Name=gpu MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1,
				Files: []string{"/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap21"}, MultipleFiles: true}}},
		},
		"cpus alias": {
			in:   "Name=gpu File=/dev/nvidia0 CPUs=3,1-2\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}, Cores: "1-3"}}},
		},
		"links": {
			in:   "Name=gpu File=/dev/nvidia0 Links=-1,2,0\n",
			node: "x",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}, Links: "-1,2,0"}}},
		},
		"node-local autodetect before global": {
			in:   "NodeName=n[1-2] AutoDetect=off\nAutoDetect=nvml\n",
			node: "n2",
			want: NodeConfig{AutoDetect: AutoDetectOff},
		},
		"global autodetect elsewhere": {
			in:   "NodeName=n[1-2] AutoDetect=off\nAutoDetect=nvml\n",
			node: "n3",
			want: NodeConfig{AutoDetect: AutoDetectNVML},
		},
		"autodetect substring": {
			in:   "AutoDetect=NVML\n",
			node: "n3",
			want: NodeConfig{AutoDetect: AutoDetectNVML},
		},
		"same node-local twice": {
			in:   "NodeName=n1 AutoDetect=nvml\nNodeName=n[1-2] AutoDetect=nvml Name=gpu\n",
			node: "n1",
			want: NodeConfig{AutoDetect: AutoDetectNVML, Lines: []Line{{File: "gres.conf", Line: 2, NodeName: "n[1-2]", AutoDetect: AutoDetectNVML, Name: "gpu", Count: 1}}},
		},
		"autodetect then gres on one line": {
			in:   "AutoDetect=nvml Name=gpu File=/dev/nvidia0\n",
			node: "x",
			want: NodeConfig{AutoDetect: AutoDetectNVML, Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}}}},
		},
		"flags inherited by the next line of the same name": {
			in: "Name=gpu Type=a File=/dev/nvidia0 Flags=amd_gpu_env,env_uuid\n" +
				"Name=mps Count=100 File=/dev/nvidia0\n" +
				"Name=gpu Type=b File=/dev/nvidia1\n" +
				"Name=gpu Type=c File=/dev/nvidia2 Flags=nvidia_gpu_env\n",
			node: "x",
			want: NodeConfig{Lines: []Line{
				{File: "gres.conf", Line: 1, Name: "gpu", Type: "a", Count: 1, Files: []string{"/dev/nvidia0"}, Flags: FlagAMDGPUEnv | FlagEnvUUID},
				{File: "gres.conf", Line: 2, Name: "mps", Count: 100, Files: []string{"/dev/nvidia0"}},
				{File: "gres.conf", Line: 3, Name: "gpu", Type: "b", Count: 1, Files: []string{"/dev/nvidia1"}, Flags: FlagAMDGPUEnv | FlagEnvUUID},
				{File: "gres.conf", Line: 4, Name: "gpu", Type: "c", Count: 1, Files: []string{"/dev/nvidia2"}, Flags: FlagNvidiaGPUEnv},
			}},
		},
		"flags of other nodes not inherited": {
			in:   "NodeName=a Name=gpu File=/dev/nvidia0 Flags=amd_gpu_env\nNodeName=b Name=gpu File=/dev/nvidia0\n",
			node: "b",
			want: NodeConfig{Lines: []Line{{File: "gres.conf", Line: 2, NodeName: "b", Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}}}},
		},
		"unknown key warns": {
			in:           "Name=gpu File=/dev/nvidia0 Color=red\n",
			node:         "x",
			want:         NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}}}},
			wantWarnings: []string{"gres.conf:1: unknown key Color ignored"},
		},
		"in-line autodetect warns": {
			in:           "Name=gpu AutoDetect=nvml\n",
			node:         "x",
			want:         NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1}}},
			wantWarnings: []string{"gres.conf:1: in-line AutoDetect requires NodeName to take effect; ignored"},
		},
		"unknown autodetect warns": {
			in:           "AutoDetect=cuda\n",
			node:         "x",
			want:         NodeConfig{},
			wantWarnings: []string{`gres.conf:1: unknown AutoDetect value "cuda"; ignored`},
		},
		"invalid links ignored": {
			in:           "Name=gpu File=/dev/nvidia0 Links=0,0\n",
			node:         "x",
			want:         NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1, Files: []string{"/dev/nvidia0"}}}},
			wantWarnings: []string{"gres.conf:1: ignoring invalid Links=0,0: needs exactly one -1 for the device itself"},
		},
		"unknown flag warns": {
			in:           "Name=gpu Flags=CountOnly,sparkle\n",
			node:         "x",
			want:         NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Count: 1, Flags: FlagCountOnly}}},
			wantWarnings: []string{"gres.conf:1: unknown flag sparkle ignored"},
		},
		"duplicate key warns": {
			in:           "Name=gpu Type=a Type=b\n",
			node:         "x",
			want:         NodeConfig{Lines: []Line{{File: "gres.conf", Line: 1, Name: "gpu", Type: "b", Count: 1}}},
			wantWarnings: []string{"gres.conf:1: Type specified more than once, latest value used"},
		},
		"global autodetect twice warns": {
			in:           "AutoDetect=nvml\nAutoDetect=off\n",
			node:         "x",
			want:         NodeConfig{AutoDetect: AutoDetectOff},
			wantWarnings: []string{"gres.conf:2: AutoDetect specified more than once (also at gres.conf:1), latest value used"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse(strings.NewReader(tt.in), "gres.conf")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.ForNode(tt.node), ignoreNodes); diff != "" {
				t.Errorf("ForNode(%q) mismatch (-want +got):\n%s", tt.node, diff)
			}
			var warnings []string
			for _, w := range cfg.Warnings {
				warnings = append(warnings, w.Error())
			}
			if diff := cmp.Diff(tt.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		in   string
		want []string // one entry per reported problem
	}{
		"no key=value":        {in: "Name=gpu File\n", want: []string{`gres.conf:1: expected key=value at "File"`}},
		"bad first key":       {in: "Type=a100 Name=gpu\n", want: []string{"gres.conf:1: unrecognized key Type (a line starts with NodeName=, Name=, AutoDetect= or Include)"}},
		"no name":             {in: "NodeName=n1 File=/dev/nvidia0\n", want: []string{"gres.conf:1: no Name= on a GRES line"}},
		"bad hostlist":        {in: "NodeName=n[1-2 Name=gpu\n", want: []string{`gres.conf:1: NodeName=n[1-2: invalid hostlist`}},
		"bad file range":      {in: "Name=gpu File=/dev/nvidia[3-1]\n", want: []string{"gres.conf:1: File=/dev/nvidia[3-1]: invalid hostlist"}},
		"relative file":       {in: "Name=gpu File=nvidia0\n", want: []string{`gres.conf:1: File=nvidia0: "nvidia0" is not an absolute path`}},
		"count mismatch":      {in: "Name=gpu File=/dev/nvidia[0-3] Count=2\n", want: []string{"gres.conf:1: Count=2 does not match the 4 device files"}},
		"bad count":           {in: "Name=gpu Count=lots\n", want: []string{"gres.conf:1: Count=lots: invalid count"}},
		"count no_val":        {in: "Name=gpu Count=18446744073709551614\n", want: []string{"gres.conf:1: Count=18446744073709551614: invalid count"}},
		"bad cores":           {in: "Name=gpu Cores=7-3\n", want: []string{"gres.conf:1: Cores=7-3: id list \"7-3\": descending range \"7-3\""}},
		"file and multiple":   {in: "Name=gpu File=/dev/a MultipleFiles=/dev/b,/dev/c\n", want: []string{"gres.conf:1: File and MultipleFiles exclude each other"}},
		"multiple of one":     {in: "Name=gpu MultipleFiles=/dev/b\n", want: []string{"gres.conf:1: MultipleFiles=/dev/b names one file; use File instead"}},
		"no_gpu_env conflict": {in: "Name=gpu Flags=no_gpu_env,nvidia_gpu_env\n", want: []string{"gres.conf:1: Flags=no_gpu_env,nvidia_gpu_env: no_gpu_env excludes every other GPU env flag"}},
		"bad name":            {in: "Name=g:pu\n", want: []string{"gres.conf:1: Name=g:pu: invalid GRES name"}},
		"bad type":            {in: "Name=gpu Type=a,b\n", want: []string{"gres.conf:1: Type=a,b: invalid GRES type"}},
		"unterminated quote":  {in: "Name=\"gpu\n", want: []string{"gres.conf:1: unterminated quote in value of Name"}},
		"autodetect conflict": {
			in:   "NodeName=n[1-4] AutoDetect=nvml\nNodeName=n4 AutoDetect=off\n",
			want: []string{"gres.conf:2: AutoDetect=off for node n4 does not match AutoDetect=nvml at gres.conf:1"},
		},
		"every problem reported": {
			in:   "Name=gpu Count=x\nName=ok\nBogus=1\n",
			want: []string{"gres.conf:1: Count=x: invalid count", "gres.conf:3: unrecognized key Bogus"},
		},
		"glob include": {in: "Include /etc/slurm/gres.d/*.conf\n", want: []string{"gres.conf:1: Include /etc/slurm/gres.d/*.conf: glob patterns are not supported"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := Parse(strings.NewReader(tt.in), "gres.conf")
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want errors", cfg)
			}
			var got []string
			if joined, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range joined.Unwrap() {
					got = append(got, e.Error())
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors %q, want %d %q", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("error %d = %q, want prefix %q", i, got[i], tt.want[i])
				}
			}
			var le *LineError
			if !errors.As(err, &le) || le.File != "gres.conf" || le.Line < 1 {
				t.Errorf("error %v carries no *LineError with file and line", err)
			}
		})
	}
}

func TestInclude(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("nodes.conf", "NodeName=n[1-2] Name=gpu File=/dev/nvidia[0-1]\n")
	main := write("gres.conf", "AutoDetect=off\ninclude nodes.conf\nName=nic\n")
	cfg, err := Load(main)
	if err != nil {
		t.Fatal(err)
	}
	want := NodeConfig{AutoDetect: AutoDetectOff, Lines: []Line{
		{File: filepath.Join(dir, "nodes.conf"), Line: 1, NodeName: "n[1-2]", Name: "gpu", Count: 2, Files: []string{"/dev/nvidia0", "/dev/nvidia1"}},
		{File: main, Line: 3, Name: "nic", Count: 1},
	}}
	if diff := cmp.Diff(want, cfg.ForNode("n2"), ignoreNodes); diff != "" {
		t.Errorf("ForNode mismatch (-want +got):\n%s", diff)
	}

	loop := write("loop.conf", "Include "+filepath.Join(dir, "loop.conf")+"\n")
	if _, err := Load(loop); err == nil || !strings.Contains(err.Error(), "include cycle") {
		t.Errorf("Load(loop) = %v, want include cycle", err)
	}
	missing := write("missing.conf", "Include nothere.conf\n")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), "missing.conf:1: Include: open") {
		t.Errorf("Load(missing) = %v, want open error at line 1", err)
	}
	if _, err := Load(filepath.Join(dir, "absent.conf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(absent) = %v, want ErrNotExist", err)
	}
}

func TestFlagsString(t *testing.T) {
	tests := map[string]struct {
		in   Flags
		want string
	}{
		"none": {in: 0, want: ""},
		"one":  {in: FlagCountOnly, want: "CountOnly"},
		"two":  {in: FlagEnvUUID | FlagNvidiaGPUEnv, want: "nvidia_gpu_env,env_uuid"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.String()); diff != "" {
				t.Errorf("String mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
