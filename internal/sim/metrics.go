package sim

import (
	"math"
	"slices"

	"github.com/droverhq/drover/internal/trace"
)

// Metrics summarise a schedule.
type Metrics struct {
	Jobs int
	// Utilization is the share of the machine's capacity (processors or
	// GPUs) busy between the first submission and the last end.
	Utilization float64
	// MeanWait and P95Wait are in seconds.
	MeanWait float64
	P95Wait  float64
	// MeanBoundedSlowdown is the mean of max(1, (wait+run)/max(run, 10 s)).
	MeanBoundedSlowdown float64
	// Makespan is from the first submission to the last end, in seconds.
	Makespan float64
}

// boundedSlowdownFloor keeps very short jobs from dominating the mean
// slowdown (the usual 10 seconds of the literature).
const boundedSlowdownFloor = 10

// Summarise computes the metrics of a schedule on a machine of capacity
// processors or GPUs.
func Summarise(outcomes []Outcome, capacity int) Metrics {
	m := Metrics{Jobs: len(outcomes)}
	if len(outcomes) == 0 || capacity <= 0 {
		return m
	}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	var busy, waitSum, bsldSum float64
	waits := make([]float64, len(outcomes))
	for i, o := range outcomes {
		first = min(first, o.Submit)
		last = max(last, o.End)
		run := float64(o.End - o.Start)
		wait := float64(o.Start - o.Submit)
		waits[i] = wait
		waitSum += wait
		busy += run * float64(o.Size)
		bsldSum += max(1, (wait+run)/max(run, boundedSlowdownFloor))
	}
	n := float64(len(outcomes))
	m.MeanWait = waitSum / n
	m.MeanBoundedSlowdown = bsldSum / n
	m.Makespan = float64(last - first)
	if m.Makespan > 0 {
		m.Utilization = busy / (float64(capacity) * m.Makespan)
	}
	slices.Sort(waits)
	m.P95Wait = percentile(waits, 0.95)
	return m
}

// percentile of sorted values, nearest rank.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(rank, 0)]
}

// SiteOutcomes is the schedule the site's own scheduler produced, from the
// waits an SWF trace records, for the jobs the simulation ran (those that
// fit the machine) that have a recorded wait.
func SiteOutcomes(t *trace.Trace, c Cluster) []Outcome {
	var out []Outcome
	for i := range t.Jobs {
		tj := &t.Jobs[i]
		if tj.Wait < 0 {
			continue
		}
		if _, size, ok := request(t.Kind, tj, c); ok {
			start := tj.Submit + tj.Wait
			out = append(out, Outcome{Submit: tj.Submit, Start: start, End: start + tj.Run, Size: size})
		}
	}
	return out
}

// Waits returns the jobs' waits in seconds, sorted, for charts.
func Waits(outcomes []Outcome) []float64 {
	w := make([]float64, len(outcomes))
	for i, o := range outcomes {
		w[i] = float64(o.Start - o.Submit)
	}
	slices.Sort(w)
	return w
}
