package gres

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIDList(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []int
		wantErr bool
	}{
		"range":      {in: "0-3", want: []int{0, 1, 2, 3}},
		"list":       {in: "0,2", want: []int{0, 2}},
		"mixed":      {in: "4-5,0", want: []int{0, 4, 5}},
		"duplicates": {in: "1,1-2", want: []int{1, 2}},
		"single":     {in: "7", want: []int{7}},
		"empty":      {in: "", wantErr: true},
		"descending": {in: "3-1", wantErr: true},
		"negative":   {in: "-1", wantErr: true},
		"letters":    {in: "a", wantErr: true},
		"empty part": {in: "1,,2", wantErr: true},
		"too big":    {in: "0-2000000", wantErr: true},
		"open range": {in: "1-", wantErr: true},
		"plus":       {in: "+1", wantErr: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseIDList(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseIDList(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseIDList(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFormatIDList(t *testing.T) {
	tests := map[string]struct {
		in   []int
		want string
	}{
		"run":       {in: []int{0, 1, 2, 3}, want: "0-3"},
		"two":       {in: []int{0, 1}, want: "0-1"},
		"gaps":      {in: []int{5, 0, 1, 3}, want: "0-1,3,5"},
		"dup":       {in: []int{2, 2}, want: "2"},
		"negatives": {in: []int{-1, 0}, want: "0"},
		"none":      {in: nil, want: ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FormatIDList(tt.in)); diff != "" {
				t.Errorf("FormatIDList(%v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
