package gres

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRequest(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []Request
		wantErr error
	}{
		"count":             {in: "gpu:2", want: []Request{{Name: "gpu", Count: 2}}},
		"type and count":    {in: "gpu:a100:2", want: []Request{{Name: "gpu", Type: "a100", Count: 2}}},
		"name only":         {in: "gpu", want: []Request{{Name: "gpu", Count: 1}}},
		"type only":         {in: "gpu:kepler", want: []Request{{Name: "gpu", Type: "kepler", Count: 1}}},
		"suffix k":          {in: "mps:1k", want: []Request{{Name: "mps", Count: 1024}}},
		"suffix M":          {in: "bandwidth:lustre:2M", want: []Request{{Name: "bandwidth", Type: "lustre", Count: 2 << 20}}},
		"suffix g":          {in: "bw:1g", want: []Request{{Name: "bw", Count: 1 << 30}}},
		"suffix kb":         {in: "bw:3kb", want: []Request{{Name: "bw", Count: 3000}}},
		"suffix GiB":        {in: "bw:1GiB", want: []Request{{Name: "bw", Count: 1 << 30}}},
		"equals count":      {in: "gpu=3", want: []Request{{Name: "gpu", Count: 3}}},
		"equals typed":      {in: "gpu:a100=3", want: []Request{{Name: "gpu", Type: "a100", Count: 3}}},
		"list":              {in: "gpu:a100:2,nic:1", want: []Request{{Name: "gpu", Type: "a100", Count: 2}, {Name: "nic", Count: 1}}},
		"two types":         {in: "gpu:a100:1,gpu:v100:2", want: []Request{{Name: "gpu", Type: "a100", Count: 1}, {Name: "gpu", Type: "v100", Count: 2}}},
		"tres prefix":       {in: "gres/gpu:1", want: []Request{{Name: "gpu", Count: 1}}},
		"tres list":         {in: "gres/gpu:a100:2,gres/nic:1", want: []Request{{Name: "gpu", Type: "a100", Count: 2}, {Name: "nic", Count: 1}}},
		"empty entries":     {in: ",gpu:1,,", want: []Request{{Name: "gpu", Count: 1}}},
		"zero dropped":      {in: "gpu:tesla:0,nic:1", want: []Request{{Name: "nic", Count: 1}}},
		"all zero":          {in: "gpu:0"},
		"repeat last wins":  {in: "gpu:1,nic:1,gpu:4", want: []Request{{Name: "gpu", Count: 4}, {Name: "nic", Count: 1}}},
		"none":              {in: "none"},
		"NONE":              {in: "NONE"},
		"empty":             {in: ""},
		"digit type":        {in: "gpu:2g:1", want: []Request{{Name: "gpu", Type: "2g", Count: 1}}},
		"mig type":          {in: "gpu:a100_3g.20gb:1", want: []Request{{Name: "gpu", Type: "a100_3g.20gb", Count: 1}}},
		"trailing colon":    {in: "gpu:", wantErr: ErrInvalidTRES},
		"bad suffix":        {in: "gpu:2x", wantErr: ErrInvalidTRES},
		"two types one":     {in: "gpu:a100:v100", wantErr: ErrInvalidTRES},
		"four fields":       {in: "gpu:a100:2:3", wantErr: ErrInvalidTRES},
		"no name":           {in: ":2", wantErr: ErrInvalidTRES},
		"number only":       {in: "2", wantErr: ErrInvalidTRES},
		"empty type":        {in: "gpu::2", wantErr: ErrInvalidTRES},
		"equals not number": {in: "gpu=a", wantErr: ErrInvalidTRES},
		"space":             {in: "gpu: 2", wantErr: ErrInvalidTRES},
		"overflow":          {in: "gpu:99999999999999999999", wantErr: ErrInvalidTRES},
		"overflow suffix":   {in: "gpu:17179869184P", wantErr: ErrInvalidTRES},
		"typed and untyped": {in: "gpu:1,gpu:a100:1", wantErr: ErrInvalidGRESType},
		"none in list":      {in: "gpu:1,none", want: []Request{{Name: "gpu", Count: 1}, {Name: "none", Count: 1}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRequest(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseRequest(%q) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRequest(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseGPUs(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Request
		wantErr error
	}{
		"count":      {in: "2", want: Request{Name: "gpu", Count: 2}},
		"typed":      {in: "volta:3", want: Request{Name: "gpu", Type: "volta", Count: 3}},
		"type alone": {in: "volta", want: Request{Name: "gpu", Type: "volta", Count: 1}},
		"zero":       {in: "0", want: Request{Name: "gpu"}},
		"empty":      {in: "", want: Request{Name: "gpu"}},
		"suffix":     {in: "1k", want: Request{Name: "gpu", Count: 1024}},
		"list":       {in: "a100:1,v100:2", wantErr: ErrInvalidTRES},
		"bad count":  {in: "a100:x2", wantErr: ErrInvalidTRES},
		"three":      {in: "a:b:1", wantErr: ErrInvalidTRES},
		"trailing":   {in: "a100:", wantErr: ErrInvalidTRES},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseGPUs(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseGPUs(%q) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseGPUs(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseGPUList(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []Request
		wantErr error
	}{
		"one":   {in: "2", want: []Request{{Name: "gpu", Count: 2}}},
		"types": {in: "volta:3,kepler:1", want: []Request{{Name: "gpu", Type: "volta", Count: 3}, {Name: "gpu", Type: "kepler", Count: 1}}},
		"zero":  {in: "volta:0"},
		"mixed": {in: "2,volta:1", wantErr: ErrInvalidGRESType},
		"bad":   {in: "volta:", wantErr: ErrInvalidTRES},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseGPUList(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseGPUList(%q) error = %v, want %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseGPUList(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// The expected strings come from Slurm 25.11 captures: scontrol's
// TresPerNode=gres/gpu:1 and REST's "tres_per_node": "gres\/gpu:1" for
// --gres=gpu:1 (reference cli/scontrol_show_job_gpu.out, rest/job_gpu.json),
// "gres/gpu:9" for --gres=gpu:9 (rest/jobs.json).
func TestFormatTRES(t *testing.T) {
	tests := map[string]struct {
		gres string
		want string
	}{
		"gpu:1":      {gres: "gpu:1", want: "gres/gpu:1"},
		"gpu:9":      {gres: "gpu:9", want: "gres/gpu:9"},
		"typed":      {gres: "gpu:a100:2", want: "gres/gpu:a100:2"},
		"list":       {gres: "gpu:a100:2,nic:1", want: "gres/gpu:a100:2,gres/nic:1"},
		"no count":   {gres: "gpu", want: "gres/gpu:1"},
		"suffix":     {gres: "mps:1k", want: "gres/mps:1024"},
		"none":       {gres: "none", want: ""},
		"tres input": {gres: "gres/gpu:2", want: "gres/gpu:2"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			reqs, err := ParseRequest(tt.gres)
			if err != nil {
				t.Fatalf("ParseRequest(%q): %v", tt.gres, err)
			}
			if diff := cmp.Diff(tt.want, FormatTRES(reqs)); diff != "" {
				t.Errorf("FormatTRES mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
