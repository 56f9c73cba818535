package priority

import (
	"fmt"
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
	if v, ok := sc.Value("PriorityFavorSmall"); ok {
		pc.FavorSmall = strings.EqualFold(v, "yes") || v == "1"
	}
	return pc, nil
}
