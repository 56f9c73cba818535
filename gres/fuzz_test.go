package gres

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		"gpu:2", "gpu:a100:2", "gpu", "gpu:kepler", "none", "", "gres/gpu:1",
		"gpu:1k,nic:2M", "gpu=3", "gpu:a100=3", ",,gpu:0", "gpu:1,gpu:a100:1",
		"gpu:a100:2:3", "gpu:", ":2", "mps:100,gpu:2g:1", "gpu:99999999999999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reqs, err := ParseRequest(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidTRES) && !errors.Is(err, ErrInvalidGRESType) {
				t.Fatalf("ParseRequest(%q) error %v wraps neither sentinel", s, err)
			}
			return
		}
		seen := map[[2]string]bool{}
		for _, r := range reqs {
			if r.Count == 0 || !ValidName(r.Name) || (r.Type != "" && !validToken(r.Type)) {
				t.Fatalf("ParseRequest(%q) gave invalid %+v", s, r)
			}
			key := [2]string{r.Name, r.Type}
			if seen[key] {
				t.Fatalf("ParseRequest(%q) repeats %v", s, key)
			}
			seen[key] = true
		}
		// What Drover shows in tres_per_node must read back the same.
		again, err := ParseRequest(FormatTRES(reqs))
		if err != nil {
			t.Fatalf("ParseRequest(FormatTRES(%+v)) = %v", reqs, err)
		}
		if diff := cmp.Diff(reqs, again); diff != "" {
			t.Fatalf("round trip of %q mismatch (-first +again):\n%s", s, diff)
		}
	})
}

func FuzzParseGPUs(f *testing.F) {
	for _, s := range []string{"2", "volta:3", "volta", "0", "", "1k", "a:b:1", "a100:", "a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseGPUs(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidTRES) {
				t.Fatalf("ParseGPUs(%q) error %v does not wrap ErrInvalidTRES", s, err)
			}
			return
		}
		if r.Name != "gpu" {
			t.Fatalf("ParseGPUs(%q) name = %q", s, r.Name)
		}
		if r.Count == 0 {
			return
		}
		again, err := ParseRequest(r.TRES())
		if err != nil || len(again) != 1 || again[0] != r {
			t.Fatalf("ParseRequest(%q) = %+v, %v; want [%+v]", r.TRES(), again, err, r)
		}
	})
}

func FuzzParseNodeGres(f *testing.F) {
	for _, s := range []string{
		"gpu:4", "gpu:h100:8(S:0-1)", "gpu:2(S:0,2),nic:1", "gpu", "gpu:tesla",
		"bandwidth:lustre:no_consume:4G", "(null)", "", "gpu:1(IDX:0)", "gpu:0",
		"mps:400,gpu:kepler:2", "gpu:1(S:1-0)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gs, err := ParseNodeGres(s)
		if err != nil {
			return
		}
		var nonzero []NodeGres
		for _, g := range gs {
			if !ValidName(g.Name) || (g.Type != "" && !validToken(g.Type)) {
				t.Fatalf("ParseNodeGres(%q) gave invalid %+v", s, g)
			}
			// Each entry on its own reads back unchanged.
			one, err := ParseNodeGres(g.String())
			if err != nil || len(one) != 1 {
				t.Fatalf("ParseNodeGres(%q) = %+v, %v", g.String(), one, err)
			}
			if diff := cmp.Diff(g, one[0]); diff != "" {
				t.Fatalf("round trip of %q mismatch (-want +got):\n%s", g.String(), diff)
			}
			if g.Count != 0 {
				nonzero = append(nonzero, g)
			}
		}
		again, err := ParseNodeGres(FormatNodeGres(gs))
		if err != nil {
			t.Fatalf("ParseNodeGres(FormatNodeGres(%+v)) = %v", gs, err)
		}
		if diff := cmp.Diff(nonzero, again); diff != "" {
			t.Fatalf("round trip of %q mismatch (-want +got):\n%s", s, diff)
		}
	})
}

func FuzzParseIDList(f *testing.F) {
	for _, s := range []string{"0-15,32-47", "0,2", "3-1", "", "1,,2", "0-1048575", "007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := ParseIDList(s)
		if err != nil {
			return
		}
		if len(ids) == 0 || !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Fatalf("ParseIDList(%q) = %v: not sorted and distinct", s, ids)
		}
		again, err := ParseIDList(FormatIDList(ids))
		if err != nil {
			t.Fatalf("ParseIDList(FormatIDList(%v)) = %v", ids, err)
		}
		// slices.Equal first: cmp.Diff is slow on the million ids that
		// "0-1048575" gives.
		if !slices.Equal(ids, again) {
			t.Fatalf("round trip of %q mismatch (-want +got):\n%s", s, cmp.Diff(ids, again))
		}
	})
}

func FuzzNormalizeGPUType(f *testing.F) {
	for _, s := range []string{
		"Mock NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB",
		"NVIDIA GeForce RTX 3090", "NVIDIA TITAN X (Pascal)", "NVIDIA", "", "a-1 -b",
		" 0-0", // regression: a leading blank once left "0-0", which shortens again to "0"
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		short := NormalizeGPUType(s)
		detected := DetectedGPUType(s)
		if !strings.Contains(detected, short) || !TypeMatches(short, detected) {
			t.Fatalf("NormalizeGPUType(%q) = %q, not part of %q", s, short, detected)
		}
		if short != "" && !validToken(short) {
			t.Fatalf("NormalizeGPUType(%q) = %q cannot stand in a GRES string", s, short)
		}
		if again := NormalizeGPUType(short); again != short {
			t.Fatalf("NormalizeGPUType(%q) = %q, not idempotent (%q)", s, short, again)
		}
		if short != "" {
			r := Request{Name: "gpu", Type: short, Count: 1}
			got, err := ParseRequest(r.String())
			if err != nil || len(got) != 1 || got[0] != r {
				t.Fatalf("type %q does not survive --gres: %+v, %v", short, got, err)
			}
		}
	})
}

func FuzzParseGPUBind(f *testing.F) {
	for _, s := range []string{"closest", "verbose,closest", "none", "map_gpu:0,1*2", "mask_gpu:0x3,C", "per_task:2", "single:3", "map:1*0", "mask:", "closestx", ""} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, local int) {
		b, err := ParseGPUBind(s)
		if err != nil {
			if err.Error() != s {
				t.Fatalf("error %q does not name the value %q", err, s)
			}
			return
		}
		local %= 64
		if local < 0 {
			local = -local
		}
		alloc := []int{1, 4, 6}
		ids, _ := b.Task(BindNode{Alloc: alloc, Size: 8}, local)
		if len(ids) == 0 {
			t.Fatalf("--gpu-bind=%s: task %d gets no GPU of %v", s, local, alloc)
		}
		for _, id := range ids {
			if !slices.Contains(alloc, id) {
				t.Fatalf("--gpu-bind=%s: task %d gets GPU %d outside %v", s, local, id, alloc)
			}
		}
	})
}

func FuzzParseXIDList(f *testing.F) {
	f.Add("13,31,43")
	f.Add(",, 7")
	f.Fuzz(func(t *testing.T, s string) {
		xids, err := ParseXIDList(s)
		if err == nil {
			for _, x := range xids {
				if x > 1<<32-1 {
					t.Fatalf("XID %d out of range", x)
				}
			}
		}
	})
}
