package gres

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseNodeGres(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []NodeGres
		wantErr bool
	}{
		// slurm.conf Gres= of both reference clusters.
		"untyped":          {in: "gpu:4", want: []NodeGres{{Name: "gpu", Count: 4}}},
		"typed sockets":    {in: "gpu:h100:8(S:0-1)", want: []NodeGres{{Name: "gpu", Type: "h100", Count: 8, Sockets: "0-1"}}},
		"socket list":      {in: "gpu:2(S:0,2),nic:1", want: []NodeGres{{Name: "gpu", Count: 2, Sockets: "0,2"}, {Name: "nic", Count: 1}}},
		"socket canonical": {in: "gpu:2(S:1,0)", want: []NodeGres{{Name: "gpu", Count: 2, Sockets: "0-1"}}},
		"name only":        {in: "gpu", want: []NodeGres{{Name: "gpu", Count: 1}}},
		"type only":        {in: "gpu:tesla", want: []NodeGres{{Name: "gpu", Type: "tesla", Count: 1}}},
		"several types":    {in: "gpu:tesla:2,gpu:kepler:2,mps:400", want: []NodeGres{{Name: "gpu", Type: "tesla", Count: 2}, {Name: "gpu", Type: "kepler", Count: 2}, {Name: "mps", Count: 400}}},
		"no_consume":       {in: "bandwidth:lustre:no_consume:4G", want: []NodeGres{{Name: "bandwidth", Type: "lustre", Count: 4 << 30, NoConsume: true}}},
		"no_consume first": {in: "bandwidth:no_consume:lustre:4G", want: []NodeGres{{Name: "bandwidth", Type: "lustre", Count: 4 << 30, NoConsume: true}}},
		"zero":             {in: "gpu:0", want: []NodeGres{{Name: "gpu", Count: 0}}},
		"null":             {in: "(null)"},
		"empty":            {in: ""},
		"two types":        {in: "gpu:a:b:1", wantErr: true},
		"bad count":        {in: "gpu:4x", wantErr: true},
		"empty entry":      {in: "gpu:1,,nic:1", wantErr: true},
		"trailing colon":   {in: "gpu:", wantErr: true},
		"idx suffix":       {in: "gpu:1(IDX:0)", wantErr: true},
		"unbalanced":       {in: "gpu:1(S:0", wantErr: true},
		"text after paren": {in: "gpu:1(S:0)x", wantErr: true},
		"bad sockets":      {in: "gpu:1(S:1-0)", wantErr: true},
		"digit name":       {in: "1gpu:1", wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseNodeGres(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseNodeGres(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseNodeGres(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFormatNodeGres(t *testing.T) {
	tests := map[string]struct {
		in   []NodeGres
		want string
	}{
		// scontrol show node rc1 prints Gres=gpu:2 (reference
		// cli/scontrol_show_node.out); REST node_rc1.json has "gres": "gpu:2".
		"reference":  {in: []NodeGres{{Name: "gpu", Count: 2}}, want: "gpu:2"},
		"sockets":    {in: []NodeGres{{Name: "gpu", Type: "h100", Count: 8, Sockets: "0-1"}}, want: "gpu:h100:8(S:0-1)"},
		"suffix":     {in: []NodeGres{{Name: "bandwidth", Type: "lustre", Count: 4 << 30, NoConsume: true}}, want: "bandwidth:lustre:no_consume:4G"},
		"not 1024":   {in: []NodeGres{{Name: "mps", Count: 400}}, want: "mps:400"},
		"k":          {in: []NodeGres{{Name: "mps", Count: 2048}}, want: "mps:2K"},
		"zero left":  {in: []NodeGres{{Name: "gpu", Count: 0}, {Name: "nic", Count: 1}}, want: "nic:1"},
		"none":       {in: nil, want: ""},
		"two":        {in: []NodeGres{{Name: "gpu", Type: "a100", Count: 4}, {Name: "gpu", Type: "v100", Count: 4}}, want: "gpu:a100:4,gpu:v100:4"},
		"max suffix": {in: []NodeGres{{Name: "x", Count: 3 << 50}}, want: "x:3P"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FormatNodeGres(tt.in)); diff != "" {
				t.Errorf("FormatNodeGres mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
