package layout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTasksPerNode(t *testing.T) {
	tests := map[string]struct {
		counts []int
		want   string
	}{
		// 22.05 captures: srun -N4 -n8 and srun -N2 -n4.
		"capture N4 n8": {counts: []int{5, 1, 1, 1}, want: "5,1(x3)"},
		"capture N2 n4": {counts: []int{3, 1}, want: "3,1"},
		// _uint16_array_to_str's own example.
		"srun example": {counts: []int{1, 2, 1, 1, 1, 3, 2}, want: "1,2,1(x3),3,2"},
		"all equal":    {counts: []int{2, 2, 2, 2}, want: "2(x4)"},
		"one":          {counts: []int{7}, want: "7"},
		"zero":         {counts: []int{0, 0, 1}, want: "0(x2),1"},
		"none":         {counts: nil, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := TasksPerNodeString(tc.counts)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TasksPerNodeString mismatch (-want +got):\n%s", diff)
			}
			if tc.want == "" {
				return
			}
			back, err := ParseTasksPerNode(got)
			if err != nil {
				t.Fatalf("ParseTasksPerNode(%q): %v", got, err)
			}
			if diff := cmp.Diff(tc.counts, back); diff != "" {
				t.Errorf("ParseTasksPerNode(%q) mismatch (-want +got):\n%s", got, diff)
			}
		})
	}
}

func TestParseTasksPerNode(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []int
		wantErr bool
	}{
		"uncompressed repeats": {in: "1,1,2", want: []int{1, 1, 2}},
		"single repeat":        {in: "4(x1)", want: []int{4}},
		"leading zeros":        {in: "05(x02)", want: []int{5, 5}},
		"empty":                {in: "", wantErr: true},
		"empty item":           {in: "1,,2", wantErr: true},
		"trailing comma":       {in: "1,", wantErr: true},
		"negative":             {in: "-1", wantErr: true},
		"sign":                 {in: "+1", wantErr: true},
		"space":                {in: "1, 2", wantErr: true},
		"zero repeats":         {in: "3(x0)", wantErr: true},
		"no x":                 {in: "3(2)", wantErr: true},
		"unclosed":             {in: "3(x2", wantErr: true},
		"junk after":           {in: "3(x2)4", wantErr: true},
		"no value":             {in: "(x2)", wantErr: true},
		"too many nodes":       {in: "1(x65536),1", wantErr: true},
		"huge repeat":          {in: "1(x99999999999999999999)", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTasksPerNode(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseTasksPerNode(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseTasksPerNode(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
