// Package sprio is the drop-in `sprio` command: the factors of pending
// jobs' priorities under priority/multifactor. The v0.0.44 API carries
// each job's priority but not its factors, so sprio computes the factors
// with the controller's own code (internal/priority) from the job records,
// the nodes, the partitions and the weights of the local slurm.conf, and
// shows the controller's priority beside them.
package sprio

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/slurmconf"
)

// Default formats (sprio.c, Slurm 25.11). In the short ones the columns of
// factors whose weight is 0 are left out.
const (
	formatDefault  = "%.15i %9r %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.20T"
	formatUser     = "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.20T"
	formatLong     = "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T"
	formatNorm     = "%.15i %9r %10y %10a %10b %10f %10j %10p %10q %20t"
	formatNormLong = "%.15i %9r %.8u %10y %10s %10a %10b %10f %10j %10p %10q %.11N %20t"
)

var longOptions = []string{"federation", "noheader", "jobs", "local", "long", "cluster", "clusters",
	"norm", "format", "sibling", "partition", "user", "verbose", "version", "weights", "help", "usage"}

// Run is the sprio command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	prog := env.Prog
	if prog == "" {
		prog = "sprio"
	}
	o, code, done := parse(prog, env, args)
	if done {
		return code
	}
	sc, err := slurmconf.LoadShared(env.SlurmConfPath())
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	pc, err := priority.FromSlurm(sc)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	if pc == nil {
		fmt.Fprintf(env.Stderr, "You are not running a supported priority plugin\n(%s).\nOnly 'priority/multifactor' is supported.\n", sc.PriorityType)
		return 1
	}
	now := time.Now()
	if env.Now != nil {
		now = env.Now()
	}
	in, err := load(ctx, env.Client, pc)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	format := o.format
	if format == "" {
		switch {
		case o.norm && o.long:
			format = formatNormLong
		case o.norm:
			format = dropZeroWeights(formatNorm, pc)
		case o.long:
			format = formatLong
		case len(o.users) > 0:
			format = dropZeroWeights(formatUser, pc)
		default:
			format = dropZeroWeights(formatDefault, pc)
		}
	}
	fields, err := parseFormat(format)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	w := env.Stdout
	if !o.noHeader {
		printLine(w, fields, func(f field) string { return f.header })
	}
	if o.weights {
		printLine(w, fields, func(f field) string { return weightOf(f.letter, pc) })
		return 0
	}
	shown := 0
	for i := range in.rows {
		r := &in.rows[i]
		if !o.wants(r) {
			continue
		}
		j := jobOf(r)
		fs := pc.FactorsOf(j, in.partFactor[r.Partition], in.cluster, now)
		fs.FairShare = in.fairShareOf(r.Account, r.UserName)
		if in.maxQOS > 0 {
			fs.QOS = float64(in.qosPrio[r.QOS]) / float64(in.maxQOS)
		}
		if in.maxAssoc > 0 {
			fs.Assoc = float64(in.assocPriority(r.Account, r.UserName, r.Partition)) / float64(in.maxAssoc)
		}
		if len(pc.WeightTRES) > 0 {
			// A record whose TRES cannot be read counts none.
			want, _ := job.ParseTRES(r.TresReq)
			fs.TRES = pc.TRESFactors(want, in.partTRES[r.Partition])
		}
		v := values{row: r, pc: pc, f: fs, w: pc.Weigh(fs)}
		printLine(w, fields, func(f field) string { return v.cell(f.letter) })
		shown++
	}
	if shown == 0 && (len(o.jobs) > 0 || len(o.users) > 0) {
		fmt.Fprintln(w, "Unable to find jobs matching user/id(s) specified")
	}
	return 0
}

type options struct {
	jobs, users, partitions       []string
	long, norm, noHeader, weights bool
	format                        string
}

func (o *options) wants(r *readmodel.JobInfo) bool {
	base, known := r.BaseState()
	if !known || base != readmodel.StatePending || r.Hold || finite32(r.Priority) == 0 {
		return false
	}
	if len(o.jobs) > 0 && !slices.Contains(o.jobs, strconv.FormatUint(uint64(r.JobID), 10)) {
		return false
	}
	if len(o.users) > 0 && !slices.Contains(o.users, r.UserName) {
		return false
	}
	return len(o.partitions) == 0 || slices.Contains(o.partitions, r.Partition)
}

func parse(prog string, env *clienv.Env, args []string) (options, int, bool) {
	var o options
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var jobs, users, parts, clusters string
	var help, usage, version, fed, local, sibling bool
	var verbose int
	fs.BoolVar(&fed, "federation", false, "")
	fs.BoolVarP(&o.noHeader, "noheader", "h", false, "")
	fs.StringVarP(&jobs, "jobs", "j", "", "")
	fs.BoolVar(&local, "local", false, "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.StringVarP(&clusters, "cluster", "M", "", "")
	fs.StringVar(&clusters, "clusters", "", "")
	fs.BoolVarP(&o.norm, "norm", "n", false, "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.BoolVar(&sibling, "sibling", false, "")
	fs.StringVarP(&parts, "partition", "p", "", "")
	fs.StringVarP(&users, "user", "u", "", "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.BoolVarP(&o.weights, "weights", "w", false, "")
	fs.BoolVar(&help, "help", false, "")
	fs.BoolVar(&usage, "usage", false, "")
	argv, err := getopt.ExpandLong(args, longOptions, map[string]string{"clusters": "cluster"})
	if err == nil {
		err = fs.Parse(argv)
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("%s: unrecognized argument %q", prog, fs.Arg(0))
		fmt.Fprintln(env.Stderr, err)
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", prog)
		return o, 1, true
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, getopt.Message(prog, err))
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", prog)
		return o, 1, true
	}
	switch {
	case help:
		fmt.Fprint(env.Stdout, helpText)
		return o, 0, true
	case usage:
		fmt.Fprintln(env.Stdout, "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n     [--federation] [--local] [--sibling] [--usage] [-hlnvVw] [-M cluster]")
		return o, 0, true
	case version:
		fmt.Fprintln(env.Stdout, "slurm "+clienv.SlurmVersion)
		return o, 0, true
	}
	o.jobs, o.users, o.partitions = getopt.SplitList(jobs), getopt.SplitList(users), getopt.SplitList(parts)
	return o, 0, false
}

// inputs are the jobs and what their factors are relative to.
type inputs struct {
	rows    []readmodel.JobInfo
	cluster priority.Cluster
	// partFactor and partTRES are each partition's PriorityJobFactor and
	// configured TRES.
	partFactor map[string]uint32
	partTRES   map[string]job.TRES
	// fairShare is each user association's factor, keyed
	// priority.AssocKey.
	fairShare map[string]float64
	// qosPrio and maxQOS give the QOS factor; assocs and maxAssoc the
	// association factor (read only when their weights count).
	qosPrio  map[string]uint32
	maxQOS   uint32
	assocs   []readmodel.Assoc
	maxAssoc uint32
}

// fairShareOf is the factor of the association a job runs under; a job
// outside every association counts as a user under root, as the
// controller counts it.
func (in *inputs) fairShareOf(account, user string) float64 {
	if f, ok := in.fairShare[priority.AssocKey(account, user)]; ok {
		return f
	}
	return in.fairShare[priority.AssocKey("root", user)]
}

// assocPriority is the priority of the association a job runs under: its
// own, or the nearest ancestor's that is set; the association for the
// job's partition wins over the one for all partitions.
func (in *inputs) assocPriority(account, user, partition string) uint32 {
	find := func(account, user, partition string) (*readmodel.Assoc, bool) {
		for i := range in.assocs {
			if a := &in.assocs[i]; a.Account == account && a.User == user && a.Partition == partition {
				return a, true
			}
		}
		return nil, false
	}
	a, ok := find(account, user, partition)
	if !ok {
		if a, ok = find(account, user, ""); !ok {
			return 0
		}
	}
	for seen := map[string]bool{}; ; {
		if p := a.Priority; p != readmodel.NoVal && p != readmodel.Infinite {
			return p
		}
		parent := a.ParentAccount
		if a.User != "" {
			parent = a.Account
		}
		if parent == "" || seen[parent] {
			return 0
		}
		seen[parent] = true
		if a, ok = find(parent, "", ""); !ok {
			return 0
		}
	}
}

// load reads the jobs, and what factors are relative to: the nodes'
// count and CPUs (FUTURE nodes left out, as the controller leaves them),
// each partition's PriorityJobFactor, each association's fair-share
// factor and, where their weights count, the QOS and associations.
func load(ctx context.Context, cl clienv.API, pc *priority.Config) (*inputs, error) {
	in := &inputs{partFactor: map[string]uint32{}, partTRES: map[string]job.TRES{}, fairShare: map[string]float64{}, qosPrio: map[string]uint32{}}
	// The fetches name the request in their errors; sprio prints the
	// client's own, as it always has.
	jobs, err := readmodel.GetJobs(ctx, cl, readmodel.JobsDefault)
	if err != nil {
		return nil, readmodel.ClientError(err)
	}
	if jobs.Failed() {
		return nil, fmt.Errorf("slurm_load_jobs: unexpected answer")
	}
	nodes, err := readmodel.GetNodes(ctx, cl, readmodel.NodesDefault)
	if err != nil {
		return nil, readmodel.ClientError(err)
	}
	if !nodes.Failed() {
		for _, n := range nodes.Records {
			if n.State.Base() == readmodel.NodeFuture {
				continue
			}
			in.cluster.Nodes++
			in.cluster.CPUs += int(n.CPUs)
		}
	}
	parts, err := readmodel.GetPartitions(ctx, cl, false)
	if err != nil {
		return nil, readmodel.ClientError(err)
	}
	if !parts.Failed() {
		for _, p := range parts.Records {
			f := uint32(p.JobFactor)
			in.partFactor[p.Name] = f
			// A partition whose TRES cannot be read gives factors of 0.
			in.partTRES[p.Name], _ = job.ParseTRES(p.TRES)
			in.cluster.MaxPartitionFactor = max(in.cluster.MaxPartitionFactor, f)
		}
	}
	shares, err := readmodel.GetShares(ctx, cl)
	if err != nil {
		return nil, readmodel.ClientError(err)
	}
	if !shares.Failed() {
		for _, s := range shares.Records {
			if s.User {
				in.fairShare[priority.AssocKey(s.Parent, s.Name)] = s.FairShare
			}
		}
	}
	if pc.WeightQOS > 0 {
		qos, err := readmodel.GetQOS(ctx, cl)
		if err != nil {
			return nil, readmodel.ClientError(err)
		}
		if !qos.Failed() {
			for _, q := range qos.Records {
				// An unset or infinite priority counts as none.
				p := finite32(q.Priority)
				in.qosPrio[q.Name] = p
				in.maxQOS = max(in.maxQOS, p)
			}
		}
	}
	if pc.WeightAssoc > 0 {
		assocs, err := readmodel.GetAssocs(ctx, cl)
		if err != nil {
			return nil, readmodel.ClientError(err)
		}
		if !assocs.Failed() {
			in.assocs = assocs.Records
			for _, a := range in.assocs {
				if a.User != "" {
					in.maxAssoc = max(in.maxAssoc, in.assocPriority(a.Account, a.User, a.Partition))
				}
			}
		}
	}
	in.rows = jobs.Records
	slices.SortStableFunc(in.rows, func(a, b readmodel.JobInfo) int { return int(int32(a.JobID)) - int(int32(b.JobID)) })
	return in, nil
}

// jobOf rebuilds what the factors read from a job record.
func jobOf(r *readmodel.JobInfo) *job.Job {
	j := &job.Job{
		SubmitTime:   epoch(r.SubmitTime),
		EligibleTime: epoch(r.EligibleTime),
		Req: job.Request{
			MinNodes:    finite32(r.NumNodes),
			NumTasks:    finite32(r.NumTasks),
			CPUsPerTask: uint32(finite16(r.CPUsPerTask)),
			Nice:        r.Nice,
		},
	}
	return j
}

// epoch is a timestamp, the zero time when it is unset, infinite or not
// after the epoch.
func epoch(t int64) time.Time {
	if t <= 0 {
		return time.Time{}
	}
	return time.Unix(t, 0)
}

// finite32 and finite16 read counters: 0 when unset or infinite.
func finite32(v uint32) uint32 {
	if v == readmodel.NoVal || v == readmodel.Infinite {
		return 0
	}
	return v
}

func finite16(v uint16) uint16 {
	if v == readmodel.NoVal16 || v == readmodel.Infinite16 {
		return 0
	}
	return v
}

// dropZeroWeights leaves out of a short format the factors nobody weighs.
func dropZeroWeights(format string, pc *priority.Config) string {
	zero := map[byte]bool{
		'a': pc.WeightAge == 0, 'A': pc.WeightAge == 0,
		'b': pc.WeightAssoc == 0, 'B': pc.WeightAssoc == 0,
		'f': pc.WeightFairshare == 0, 'F': pc.WeightFairshare == 0,
		'j': pc.WeightJobSize == 0, 'J': pc.WeightJobSize == 0,
		'p': pc.WeightPartition == 0, 'P': pc.WeightPartition == 0,
		'q': pc.WeightQOS == 0, 'Q': pc.WeightQOS == 0,
		't': len(pc.WeightTRES) == 0, 'T': len(pc.WeightTRES) == 0,
	}
	var kept []string
	for _, spec := range strings.Fields(format) {
		if letter := spec[len(spec)-1]; zero[letter] {
			continue
		}
		kept = append(kept, spec)
	}
	return strings.Join(kept, " ")
}

// values are one job's cells.
type values struct {
	row *readmodel.JobInfo
	pc  *priority.Config
	f   priority.Factors
	w   priority.Weighted
}

func norm(x float64) string  { return strconv.FormatFloat(x, 'f', 7, 64) }
func whole(x float64) string { return strconv.FormatInt(int64(x), 10) }

func (v values) cell(letter byte) string {
	r := v.row
	switch letter {
	case 'i':
		return strconv.FormatUint(uint64(r.JobID), 10)
	case 'r':
		return r.Partition
	case 'u':
		return r.UserName
	case 'o':
		return r.Account
	case 'c':
		return "(null)"
	case 'n':
		return r.QOS
	case 'N':
		return strconv.Itoa(int(v.f.Nice))
	case 'Y':
		return strconv.FormatUint(uint64(finite32(r.Priority)), 10)
	case 'y':
		return strconv.FormatFloat(float64(finite32(r.Priority))/math.MaxUint32, 'f', 14, 64)
	case 'S':
		return "0"
	case 's':
		return norm(0)
	case 'A':
		return whole(v.w.Age)
	case 'a':
		return norm(v.f.Age)
	case 'B':
		return whole(v.w.Assoc)
	case 'b':
		return norm(v.f.Assoc)
	case 'F':
		return whole(v.w.FairShare)
	case 'f':
		return norm(v.f.FairShare)
	case 'J':
		return whole(v.w.JobSize)
	case 'j':
		return norm(v.f.JobSize)
	case 'P':
		return whole(v.w.Partition)
	case 'p':
		return norm(v.f.Partition)
	case 'Q':
		return whole(v.w.QOS)
	case 'q':
		return norm(v.f.QOS)
	case 'T':
		return v.tres(v.w.TRES, 0)
	case 't':
		return v.tres(v.f.TRES, 2)
	}
	return ""
}

// tres lists the TRES factors that are not 0, weighted or not, as sprio
// does ("cpu=250,mem=188,node=750,gres/gpu=1000"): printf's rounding,
// to prec decimals.
func (v values) tres(vals []float64, prec int) string {
	var parts []string
	for i, x := range vals {
		if x == 0 || i >= len(v.pc.WeightTRES) {
			continue
		}
		parts = append(parts, v.pc.WeightTRES[i].Name+"="+strconv.FormatFloat(x, 'f', prec, 64))
	}
	return strings.Join(parts, ",")
}

// weightOf is a column's cell on the -w line.
func weightOf(letter byte, pc *priority.Config) string {
	n := func(w uint32) string { return strconv.FormatUint(uint64(w), 10) }
	switch letter {
	case 'i':
		return "Weights"
	case 'S', 's':
		return "1"
	case 'A', 'a':
		return n(pc.WeightAge)
	case 'B', 'b':
		return n(pc.WeightAssoc)
	case 'F', 'f':
		return n(pc.WeightFairshare)
	case 'J', 'j':
		return n(pc.WeightJobSize)
	case 'P', 'p':
		return n(pc.WeightPartition)
	case 'Q', 'q':
		return n(pc.WeightQOS)
	case 'T':
		return pc.WeightTRESText
	}
	return ""
}
