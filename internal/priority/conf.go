package priority

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/timefmt"
)

// FromSlurm reads PriorityType and the multifactor settings; nil
// means priority/basic.
func FromSlurm(sc *slurmconf.Config) (*Config, error) {
	switch sc.PriorityType {
	case "priority/basic":
		return nil, nil
	case "priority/multifactor", "":
	default:
		return nil, fmt.Errorf("PriorityType=%s: not supported (priority/multifactor or priority/basic)", sc.PriorityType)
	}
	pc := &Config{MaxAge: DefaultMaxAge, DecayHalfLife: DefaultDecayHalfLife, CalcPeriod: DefaultCalcPeriod, ResetPeriod: "NONE", FairTree: true}
	for key, dst := range map[string]*uint32{
		"PriorityWeightAge": &pc.WeightAge, "PriorityWeightFairshare": &pc.WeightFairshare,
		"PriorityWeightJobSize": &pc.WeightJobSize, "PriorityWeightPartition": &pc.WeightPartition,
		"PriorityWeightQOS": &pc.WeightQOS, "PriorityWeightAssoc": &pc.WeightAssoc,
	} {
		if v, ok := sc.Value(key); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%s=%s: not a number", key, v)
			}
			*dst = uint32(n)
		}
	}
	if v, ok := sc.Value("PriorityMaxAge"); ok {
		l, err := timefmt.ParseLimit(v)
		if err != nil || l.Infinite {
			return nil, fmt.Errorf("PriorityMaxAge=%s: not a time", v)
		}
		pc.MaxAge = time.Duration(l.Minutes) * time.Minute
	}
	for key, dst := range map[string]*time.Duration{"PriorityDecayHalfLife": &pc.DecayHalfLife, "PriorityCalcPeriod": &pc.CalcPeriod} {
		if v, ok := sc.Value(key); ok {
			l, err := timefmt.ParseLimit(v)
			if err != nil || l.Infinite {
				return nil, fmt.Errorf("%s=%s: not a time", key, v)
			}
			*dst = time.Duration(l.Minutes) * time.Minute
		}
	}
	if pc.CalcPeriod <= 0 {
		pc.CalcPeriod = DefaultCalcPeriod
	}
	if v, ok := sc.Value("PriorityUsageResetPeriod"); ok {
		switch p := strings.ToUpper(strings.TrimSpace(v)); p {
		case "NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY":
			pc.ResetPeriod = p
		default:
			return nil, fmt.Errorf("PriorityUsageResetPeriod=%s: not one of NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY, YEARLY", v)
		}
	}
	if v, ok := sc.Value("PriorityFlags"); ok {
		for _, f := range strings.Split(strings.ToUpper(v), ",") {
			if strings.TrimSpace(f) == "NO_FAIR_TREE" {
				pc.FairTree = false
			}
		}
	}
	if v, ok := sc.Value("PriorityWeightTRES"); ok {
		w, err := ParseWeightTRES(v)
		if err != nil {
			return nil, err
		}
		pc.WeightTRES, pc.WeightTRESText = w, strings.TrimSpace(v)
	}
	if v, ok := sc.Value("PriorityFavorSmall"); ok {
		pc.FavorSmall = strings.EqualFold(v, "yes") || v == "1"
	}
	return pc, nil
}

// ParseWeightTRES reads PriorityWeightTRES ("CPU=1000,Mem=2000,GRES/gpu=
// 3000"): TRES names in any case, weights as numbers. TRES Drover does not
// count are refused, as slurmctld refuses TRES it does not know.
func ParseWeightTRES(v string) ([]TRESWeight, error) {
	var out []TRESWeight
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("PriorityWeightTRES=%s: %q is not TRES=weight", v, item)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		switch name {
		case "cpu", "mem", "node", "billing", "gres/gpu":
		default:
			return nil, fmt.Errorf("PriorityWeightTRES=%s: invalid TRES %q (cpu, mem, node, billing or gres/gpu)", v, name)
		}
		w, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || w < 0 || math.IsInf(w, 0) || math.IsNaN(w) {
			return nil, fmt.Errorf("PriorityWeightTRES=%s: weight of %s: not a number", v, name)
		}
		for _, have := range out {
			if have.Name == name {
				return nil, fmt.Errorf("PriorityWeightTRES=%s: %s given twice", v, name)
			}
		}
		out = append(out, TRESWeight{Name: name, Weight: w})
	}
	// Slurm keeps TRES in the order of their ids, whatever the setting's.
	rank := map[string]int{"cpu": 1, "mem": 2, "node": 4, "billing": 5, "gres/gpu": 1000}
	slices.SortStableFunc(out, func(a, b TRESWeight) int { return rank[a.Name] - rank[b.Name] })
	return out, nil
}
