package slurmconf

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultJobAcctGatherFrequency is Slurm's default task sampling interval.
const DefaultJobAcctGatherFrequency = 30 * time.Second

// ParseAcctGatherFrequency reads JobAcctGatherFrequency (and srun's
// --acctg-freq): a plain number of seconds is the task interval, or a
// list of TYPE=SECONDS for task, energy, network and filesystem, of which
// the task interval is returned (default 30 s when the list omits it).
func ParseAcctGatherFrequency(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseUint(s, 10, 16); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	task := DefaultJobAcctGatherFrequency
	for item := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 16)
		if !ok || err != nil {
			return 0, fmt.Errorf("Invalid JobAcctGatherFrequency specification: %q", s)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "task":
			task = time.Duration(n) * time.Second
		case "energy", "network", "filesystem":
		default:
			return 0, fmt.Errorf("Invalid JobAcctGatherFrequency specification: %q", s)
		}
	}
	return task, nil
}
