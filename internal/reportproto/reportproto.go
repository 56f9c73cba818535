// Package reportproto is sreport's request to the controller: the usage
// of a period added up from the job accounting records (slurmdbd answers
// sreport from its rollup tables; slurmrestd's API has no operation for
// it). JSON over HTTP under /drover/v1/, authenticated as the v0.0.44
// paths are; errors come back in slurmrestd's error envelope.
package reportproto

import "github.com/droverhq/drover/internal/job"

// PathUsage answers GET with ?start=UNIX&end=UNIX (the period, end
// excluded) and &clusters=a,b (default: the controller's own; "all":
// every cluster of the store).
const PathUsage = "/drover/v1/accounting/usage"

// Usage is the answer: each cluster's usage.
type Usage struct {
	Clusters []Cluster `json:"clusters"`
}

// Cluster is one cluster's usage over the period, in CPU-seconds, as
// sreport's cluster Utilization splits it.
type Cluster struct {
	Name      string  `json:"name"`
	Reported  float64 `json:"reported"`
	Allocated float64 `json:"allocated"`
	Down      float64 `json:"down"`
	Planned   float64 `json:"planned"`
	Idle      float64 `json:"idle"`
	Assocs    []Assoc `json:"assocs"`
	Sizes     []Size  `json:"sizes"`
}

// Assoc is what one user's jobs under one account held.
type Assoc struct {
	Account    string  `json:"account"`
	User       string  `json:"user"`
	UID        uint32  `json:"uid"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

// Size is what an account's jobs of one CPU count held.
type Size struct {
	Account    string  `json:"account"`
	CPUs       uint32  `json:"cpus"`
	Jobs       int64   `json:"jobs"`
	CPUSeconds float64 `json:"cpu_seconds"`
}

// PathStepUsage answers GET with ?jobs=1,2,3 (and &cluster=NAME, default
// the controller's own) with the usage measures of those jobs' steps,
// with the node and task of each extreme: sacct's *Node and *Task
// fields, which slurmdbd's v0.0.44 step records do not carry.
const PathStepUsage = "/drover/v1/accounting/step_usage"

// StepUsages is PathStepUsage's answer.
type StepUsages struct {
	Steps []StepUsage `json:"steps"`
}

// StepUsage is one step of one run of a job.
type StepUsage struct {
	JobID  uint32         `json:"job_id"`
	Run    uint32         `json:"run"`
	StepID uint32         `json:"step_id"`
	Stats  job.UsageStats `json:"stats"`
}
