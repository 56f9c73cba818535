// Package priority computes a pending job's priority as Slurm's
// priority/multifactor plugin does: a weighted sum of factors between 0
// and 1 (age, job size, partition, QOS, association, fair-share), less the
// job's nice value, and never below 1. Pure: no I/O, the time passed in.
package priority

import (
	"math"
	"time"

	"github.com/droverhq/drover/internal/job"
)

// Config is slurm.conf's Priority* settings.
type Config struct {
	WeightAge       uint32
	WeightFairshare uint32
	WeightJobSize   uint32
	WeightPartition uint32
	WeightQOS       uint32
	WeightAssoc     uint32
	// MaxAge is PriorityMaxAge: the age at which the age factor reaches 1.
	MaxAge time.Duration
	// FavorSmall is PriorityFavorSmall: a one-node job gets the largest
	// size factor instead of the smallest.
	FavorSmall bool
	// DecayHalfLife is PriorityDecayHalfLife (0: usage never decays);
	// CalcPeriod is PriorityCalcPeriod, how often usage is brought up to
	// date; ResetPeriod is PriorityUsageResetPeriod (NONE, DAILY...).
	DecayHalfLife time.Duration
	CalcPeriod    time.Duration
	ResetPeriod   string
	// FairTree is Fair Tree fair-share (the default; PriorityFlags=
	// NO_FAIR_TREE turns the classic formula on).
	FairTree bool
	// WeightTRES is PriorityWeightTRES, in the order given; WeightTRESText
	// is the setting as written, which sprio -w shows.
	WeightTRES     []TRESWeight
	WeightTRESText string
}

// TRESWeight is one TRES of PriorityWeightTRES and its weight.
type TRESWeight struct {
	// Name is the TRES as Slurm names it: cpu, mem, node, billing,
	// gres/gpu.
	Name   string
	Weight float64
}

// Defaults of the fair-share settings, as slurm.conf documents them.
const (
	DefaultDecayHalfLife = 7 * 24 * time.Hour
	DefaultCalcPeriod    = 5 * time.Minute
)

// DefaultMaxAge is PriorityMaxAge's default (7-0).
const DefaultMaxAge = 7 * 24 * time.Hour

// Cluster is what the size and partition factors are relative to.
type Cluster struct {
	Nodes int
	CPUs  int
	// MaxPartitionFactor is the largest PriorityJobFactor of any
	// partition.
	MaxPartitionFactor uint32
}

// Factors are a job's normalised factors, as sprio -n shows them.
type Factors struct {
	Age, FairShare, JobSize, Partition, QOS, Assoc float64
	Nice                                           int32
	// TRES are the TRES factors, one for each of WeightTRES.
	TRES []float64
}

// TRESFactors are a job's TRES factors: of each weighted TRES, what the
// job asks for over what its partition has (billing counts CPUs).
func (c *Config) TRESFactors(want, part job.TRES) []float64 {
	if len(c.WeightTRES) == 0 {
		return nil
	}
	out := make([]float64, len(c.WeightTRES))
	for i, w := range c.WeightTRES {
		if total := part.Count(w.Name); total > 0 {
			out[i] = float64(want.Count(w.Name)) / float64(total)
		}
	}
	return out
}

// FactorsOf computes a job's factors at now, but for fair-share and TRES
// (FairShare, TRESFactors). QOS and association are 0 until accounting
// gives QOS and associations.
func (c *Config) FactorsOf(j *job.Job, partitionFactor uint32, cl Cluster, now time.Time) Factors {
	f := Factors{Nice: j.Req.Nice}
	since := j.EligibleTime
	if since.IsZero() {
		since = j.SubmitTime
	}
	if j.Req.BeginTime.After(since) {
		since = j.Req.BeginTime
	}
	maxAge := c.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if age := now.Sub(since); age > 0 {
		f.Age = min(float64(age)/float64(maxAge), 1)
	}
	if cl.Nodes > 0 && cl.CPUs > 0 {
		nodes := max(j.Req.MinNodes, 1)
		tasks := j.Req.NumTasks
		if tasks == 0 {
			tasks = nodes * max(j.Req.TasksPerNode, 1)
		}
		cpus := tasks * max(j.Req.CPUsPerTask, 1)
		size := (min(float64(nodes)/float64(cl.Nodes), 1) + min(float64(cpus)/float64(cl.CPUs), 1)) / 2
		if c.FavorSmall {
			size = 1 - size
		}
		f.JobSize = size
	}
	if cl.MaxPartitionFactor > 0 {
		f.Partition = float64(partitionFactor) / float64(cl.MaxPartitionFactor)
	}
	return f
}

// Weighted are the factors times their weights, as sprio shows them.
type Weighted struct {
	Age, FairShare, JobSize, Partition, QOS, Assoc float64
	TRES                                           []float64
}

// Weigh applies the weights.
func (c *Config) Weigh(f Factors) Weighted {
	return Weighted{
		Age:       float64(c.WeightAge) * f.Age,
		FairShare: float64(c.WeightFairshare) * f.FairShare,
		JobSize:   float64(c.WeightJobSize) * f.JobSize,
		Partition: float64(c.WeightPartition) * f.Partition,
		QOS:       float64(c.WeightQOS) * f.QOS,
		Assoc:     float64(c.WeightAssoc) * f.Assoc,
		TRES:      c.weighTRES(f.TRES),
	}
}

func (c *Config) weighTRES(f []float64) []float64 {
	if len(f) == 0 {
		return nil
	}
	out := make([]float64, len(f))
	for i := range f {
		if i < len(c.WeightTRES) {
			out[i] = c.WeightTRES[i].Weight * f[i]
		}
	}
	return out
}

// Priority is the job priority: the weighted factors summed, less the
// nice value, at least 1.
func (c *Config) Priority(f Factors) uint32 {
	w := c.Weigh(f)
	sum := w.Age + w.FairShare + w.JobSize + w.Partition + w.QOS + w.Assoc - float64(f.Nice)
	for _, t := range w.TRES {
		sum += t
	}
	if sum < 1 {
		return 1
	}
	if sum >= math.MaxUint32-1 {
		return math.MaxUint32 - 1
	}
	return uint32(sum)
}
