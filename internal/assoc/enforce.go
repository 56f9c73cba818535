package assoc

import (
	"fmt"
	"strings"
)

// Enforce is slurm.conf's AccountingStorageEnforce: what job submission
// and scheduling hold jobs to.
type Enforce struct {
	Associations, Limits, QOS, Safe, WCKeys, NoJobs, NoSteps bool
}

// ParseEnforce reads AccountingStorageEnforce as slurmctld does: a comma
// list, in any case, of associations (or 1), limits (or 2), nojobs,
// nosteps, qos, safe, wckeys and all. limits, qos, safe and wckeys imply
// associations, safe implies limits, nojobs implies nosteps; all means
// every flag but nojobs and nosteps and, as in Slurm, replaces what came
// before it ("nojobs,all" is all). Empty words are skipped; "", "0" and
// "none" (Drover's spellings of nothing; slurmctld knows only an absent
// setting) enforce nothing. An unknown word is an error, as slurmctld
// refuses to start with one.
func ParseEnforce(s string) (Enforce, error) {
	var e Enforce
	for _, tok := range strings.Split(s, ",") {
		switch strings.ToLower(tok) {
		case "", "0", "none":
		case "1", "associations":
			e.Associations = true
		case "2", "limits":
			e.Associations, e.Limits = true, true
		case "safe":
			e.Associations, e.Limits, e.Safe = true, true, true
		case "wckeys":
			e.Associations, e.WCKeys = true, true
		case "qos":
			e.Associations, e.QOS = true, true
		case "all":
			e = Enforce{Associations: true, Limits: true, QOS: true, Safe: true, WCKeys: true}
		case "nojobs":
			e.NoJobs, e.NoSteps = true, true
		case "nosteps":
			e.NoSteps = true
		default:
			return Enforce{}, fmt.Errorf("invalid parameter for AccountingStorageEnforce: %s", tok)
		}
	}
	return e, nil
}

// String returns the flags as scontrol show config prints
// AccountingStorageEnforce (accounting_enforce_string): in Slurm's fixed
// order, "none" when there are none.
func (e Enforce) String() string {
	var words []string
	for _, f := range []struct {
		on   bool
		name string
	}{
		{e.Associations, "associations"},
		{e.Limits, "limits"},
		{e.NoJobs, "nojobs"},
		{e.NoSteps, "nosteps"},
		{e.QOS, "qos"},
		{e.Safe, "safe"},
		{e.WCKeys, "wckeys"},
	} {
		if f.on {
			words = append(words, f.name)
		}
	}
	if len(words) == 0 {
		return "none"
	}
	return strings.Join(words, ",")
}
