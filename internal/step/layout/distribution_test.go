package layout

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseDistribution follows srun's verify_dist_type and
// set_distribution (src/common/proc_args.c).
func TestParseDistribution(t *testing.T) {
	tests := map[string]struct {
		in     string
		want   Distribution
		wantSD string // SLURM_DISTRIBUTION
	}{
		"block":               {in: "block", want: Distribution{Kind: BlockDist, Set: true}, wantSD: "block"},
		"cyclic":              {in: "cyclic", want: Distribution{Kind: CyclicDist, Set: true}, wantSD: "cyclic"},
		"any case":            {in: "CYCLIC", want: Distribution{Kind: CyclicDist, Set: true}, wantSD: "cyclic"},
		"star is block":       {in: "*", want: Distribution{Kind: BlockDist, Set: true}, wantSD: "block"},
		"arbitrary":           {in: "arbitrary", want: Distribution{Kind: ArbitraryDist, Set: true}, wantSD: "arbitrary"},
		"hostfile":            {in: "hostfile", want: Distribution{Kind: ArbitraryDist, Set: true}, wantSD: "arbitrary"},
		"plane":               {in: "plane=4", want: Distribution{Kind: PlaneDist, PlaneSize: 4, Set: true}, wantSD: "plane"},
		"plane strtol":        {in: "Plane= +12", want: Distribution{Kind: PlaneDist, PlaneSize: 12, Set: true}, wantSD: "plane"},
		"socket":              {in: "block:cyclic", want: Distribution{Kind: BlockDist, Socket: "cyclic", Set: true}, wantSD: "block:cyclic"},
		"socket star":         {in: "block:*", want: Distribution{Kind: BlockDist, Socket: "*", Set: true}, wantSD: "block:cyclic"},
		"core inherits":       {in: "cyclic:block:*", want: Distribution{Kind: CyclicDist, Socket: "block", Core: "*", Set: true}, wantSD: "cyclic:block:block"},
		"all stars":           {in: "*:*:*", want: Distribution{Kind: BlockDist, Socket: "*", Core: "*", Set: true}, wantSD: "block:cyclic:cyclic"},
		"fcyclic":             {in: "block:fcyclic:FCyclic", want: Distribution{Kind: BlockDist, Socket: "fcyclic", Core: "FCyclic", Set: true}, wantSD: "block:fcyclic:fcyclic"},
		"empty parts skipped": {in: "block::cyclic", want: Distribution{Kind: BlockDist, Socket: "cyclic", Set: true}, wantSD: "block:cyclic"},
		"pack":                {in: "block,Pack", want: Distribution{Kind: BlockDist, Pack: Pack, Set: true}, wantSD: "block,pack"},
		"nopack":              {in: "cyclic:cyclic,NOPACK", want: Distribution{Kind: CyclicDist, Socket: "cyclic", Pack: NoPack, Set: true}, wantSD: "cyclic:cyclic,nopack"},
		"pack alone":          {in: "pack", want: Distribution{Pack: Pack}, wantSD: "block,pack"},
		"nopack alone":        {in: "NoPack", want: Distribution{Pack: NoPack}, wantSD: "block,nopack"},
		"pack wins":           {in: "nopack,pack", want: Distribution{Pack: Pack}, wantSD: "block,pack"},
		"trailing comma":      {in: "block,", want: Distribution{Kind: BlockDist, Set: true}, wantSD: "block"},
		"arbitrary pack":      {in: "arbitrary,pack", want: Distribution{Kind: ArbitraryDist, Pack: Pack, Set: true}, wantSD: "arbitrary,pack"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseDistribution(tc.in)
			if err != nil {
				t.Fatalf("ParseDistribution(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseDistribution(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
			if diff := cmp.Diff(tc.wantSD, got.String()); diff != "" {
				t.Errorf("String mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDistributionErrors(t *testing.T) {
	invalid := []string{"Invalid --distribution specification"}
	plane := []string{"Invalid plane size or size not specified", "Invalid --distribution specification"}
	tests := map[string]struct {
		in   string
		want []string
	}{
		"empty":              {in: "", want: invalid},
		"unknown":            {in: "round", want: invalid},
		"leading comma":      {in: ",pack", want: invalid},
		"only colons":        {in: ":::", want: invalid},
		"four parts":         {in: "block:block:block:block", want: invalid},
		"bad socket":         {in: "block:plane", want: invalid},
		"arbitrary with lll": {in: "arbitrary:block", want: invalid},
		"pack with parts":    {in: "pack:block", want: invalid},
		"bad flag":           {in: "block,tight", want: invalid},
		"two flags":          {in: "block,pack,nopack", want: invalid},
		"flag with space":    {in: "block, pack", want: invalid},
		"plane no size":      {in: "plane", want: plane},
		"plane empty size":   {in: "plane=", want: plane},
		"plane zero":         {in: "plane=0", want: plane},
		"plane negative":     {in: "plane=-2", want: plane},
		"plane junk":         {in: "plane=2x", want: plane},
		"plane trailing":     {in: "plane=2 ", want: plane},
		"plane too large":    {in: "plane=2147483648", want: plane},
		"plane with flag":    {in: "plane=2,pack", want: plane},
		"plane with parts":   {in: "plane=2:block", want: plane},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := ParseDistribution(tc.in)
			if err == nil {
				t.Fatalf("ParseDistribution(%q) = %+v, want error", tc.in, d)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T, want *Error", err)
			}
			if diff := cmp.Diff(&Error{Lines: tc.want}, se); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	got := []string{BlockDist.String(), CyclicDist.String(), PlaneDist.String(), ArbitraryDist.String(), Kind(9).String()}
	want := []string{"block", "cyclic", "plane", "arbitrary", "unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Kind.String mismatch (-want +got):\n%s", diff)
	}
}

// TestDistributionZero: the zero Distribution (no -m) prints as slurmctld's
// default.
func TestDistributionZero(t *testing.T) {
	if got := (Distribution{}).String(); got != "block" {
		t.Errorf("Distribution{}.String() = %q, want \"block\"", got)
	}
}
