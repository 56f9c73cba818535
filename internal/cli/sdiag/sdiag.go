// Package sdiag is the drop-in `sdiag` command: the scheduler's and the
// controller's statistics (GET /diag), printed as Slurm 25.11's sdiag
// prints them, or as the answer itself with --json and --yaml.
package sdiag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clusters"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/slurmconf"
)

// optionTable is sdiag's long options in Slurm's order, with the letter
// of each that has one and whether it takes an argument (0 none, 1
// required, 2 optional), which --autocomplete lists.
var optionTable = []struct {
	name   string
	letter byte
	arg    int
}{
	{"autocomplete", 0, 1}, {"all", 'a', 0}, {"help", 'h', 0}, {"reset", 'r', 0}, {"sort-by-id", 'i', 0},
	{"cluster", 'M', 1}, {"clusters", 'M', 1}, {"no-trunc", 0, 0}, {"sort-by-time", 't', 0},
	{"sort-by-time2", 'T', 0}, {"usage", 0, 0}, {"version", 'V', 0}, {"json", 0, 2}, {"yaml", 0, 2},
}

var longOptions = func() []string {
	var out []string
	for _, o := range optionTable {
		out = append(out, o.name)
	}
	return out
}()

// suggest is --autocomplete=query (Slurm's suggest_completion): the
// options whose spelling contains query, a short form when query could
// be one, long forms with "=" (and " " for an optional argument) where
// they take an argument, each on a line, and a blank line after them.
func suggest(query string) string {
	if query == "" {
		return ""
	}
	alpha := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	short := query[0] == '-' || alpha(query[0])
	long := len(query) > 1 || alpha(query[0])
	var b strings.Builder
	for _, o := range optionTable {
		if o.letter != 0 && short && strings.Contains("-"+string(o.letter), query) {
			b.WriteString("-" + string(o.letter) + "\n")
		}
		if !long || !strings.Contains("--"+o.name, query) {
			continue
		}
		switch o.arg {
		case 0:
			b.WriteString("--" + o.name + "\n")
		case 1:
			b.WriteString("--" + o.name + "=\n")
		case 2:
			b.WriteString("--" + o.name + "=\n--" + o.name + " \n")
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + "\n"
}

// How the RPC tables are sorted (sdiag's SORT_*): by count unless told.
type sortBy int

const (
	sortCount sortBy = iota
	sortID
	sortTime
	sortTime2
)

type options struct {
	reset    bool
	sort     sortBy
	noTrunc  bool
	cluster  string
	json     bool
	yaml     bool
	argv     []string
	complete string
}

// exitSlurmError is exit(SLURM_ERROR): sdiag exits with the -1 its
// library calls return.
const exitSlurmError = 255

// Run is the sdiag command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	prog := env.Prog
	if prog == "" {
		prog = "sdiag"
	}
	o, code, done := parse(prog, env, args)
	if done {
		return code
	}
	if o.cluster != "" {
		if code, ok := checkCluster(ctx, prog, env, o.cluster); !ok {
			return code
		}
	}
	if o.reset {
		return reset(ctx, env)
	}
	resp, status, err := readmodel.GetDiagResp(ctx, env.Client)
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_get_statistics: Unable to contact slurm controller (connect failure): %v\n", readmodel.ClientError(err))
		return exitSlurmError
	}
	if resp == nil || status != 0 {
		msg := "Unexpected message received"
		if resp != nil && len(resp.Errors) > 0 {
			e := resp.Errors[0]
			msg = e.Error.Or(e.Description.Or(msg))
		}
		fmt.Fprintf(env.Stderr, "slurm_get_statistics: %s\n", msg)
		return exitSlurmError
	}
	if o.json || o.yaml {
		if err := printDoc(env, prog, o, resp); err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
			return 1
		}
		return 0
	}
	d := readmodel.FromV0044Diag(resp)
	if err := Print(env.Stdout, &d, o.sort, o.noTrunc); err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	if list := controllers(ctx, env); list != nil && list.Replicated {
		if err := PrintReplication(env.Stdout, list); err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
			return 1
		}
	}
	return 0
}

// controllers is Drover's list of the controllers
// (droverapi.ControllersPath), nil when it cannot be had (a controller
// without it, or none reached): sdiag then prints Slurm's sections only.
// It is asked only when this host's slurm.conf lists several
// SlurmctldHost lines: the request counts among the controller's RPCs,
// and a single controller's sdiag must report what Slurm's does.
func controllers(ctx context.Context, env *clienv.Env) *droverapi.Controllers {
	if env.Call == nil {
		return nil
	}
	if sc, err := slurmconf.Load(env.SlurmConfPath()); err != nil || len(sc.SlurmctldHosts) < 2 {
		return nil
	}
	var out droverapi.Controllers
	if err := env.Call(ctx, "GET", droverapi.ControllersPath, nil, &out); err != nil {
		return nil
	}
	return &out
}

// PrintReplication is Drover's section after Slurm's when several
// controllers replicate their state: the replica of the controller that
// answered (its role, the leader, raft's term and indices, how long ago
// it heard from the leader, the voters), then a line per SlurmctldHost:
//
//	Replication:
//		This controller: ctl1 (backup1)
//		Role:            Follower
//		Leader:          ctl0
//		Term:            2
//		Last index:      57
//		Commit index:    57
//		Applied index:   57
//		Last contact:    0.021 seconds ago
//		Voters:          3
//		Controllers:
//			ctl0 (primary)  UP    Leader    term:2 commit:57 applied:57 latency:412us
//			ctl1 (backup1)  UP    Follower  term:2 commit:57 applied:57 latency:3us
//			ctl2 (backup2)  DOWN  (dial tcp 10.0.0.3:6817: connect: connection refused)
func PrintReplication(w io.Writer, list *droverapi.Controllers) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("\nReplication:\n")
	for _, c := range list.Controllers {
		if !c.Self {
			continue
		}
		p("\tThis controller: %s (%s)\n", c.Name, c.Mode)
		r := c.Replica
		if r == nil {
			p("\tRole:            N/A (%s)\n", c.Error)
			continue
		}
		leader := r.Leader
		if leader == "" {
			leader = "N/A (an election is under way)"
		}
		p("\tRole:            %s\n", r.State)
		p("\tLeader:          %s\n", leader)
		p("\tTerm:            %d\n", r.Term)
		p("\tLast index:      %d\n", r.LastIndex)
		p("\tCommit index:    %d\n", r.CommitIndex)
		p("\tApplied index:   %d\n", r.AppliedIndex)
		if r.LastContactSeconds < 0 {
			p("\tLast contact:    N/A\n")
		} else {
			p("\tLast contact:    %.3f seconds ago\n", r.LastContactSeconds)
		}
		p("\tVoters:          %d\n", r.Voters)
	}
	p("\tControllers:\n")
	width := 0
	for _, c := range list.Controllers {
		width = max(width, len(c.Name)+len(c.Mode)+3)
	}
	for _, c := range list.Controllers {
		name := c.Name + " (" + c.Mode + ")"
		switch {
		case !c.Responding:
			p("\t\t%-*s  DOWN  (%s)\n", width, name, c.Error)
		case c.Replica == nil:
			p("\t\t%-*s  UP    latency:%dus\n", width, name, c.LatencyMicros)
		default:
			r := c.Replica
			p("\t\t%-*s  UP    %-9s term:%d commit:%d applied:%d latency:%dus\n", width, name, r.State, r.Term, r.CommitIndex, r.AppliedIndex, c.LatencyMicros)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// reset is sdiag -r: the controller's statistics restart from zero
// (POST droverapi.DiagResetPath; slurmrestd has no such operation). A
// refusal prints Slurm's message for its error, as slurm_perror does, and
// exits with SLURM_ERROR.
func reset(ctx context.Context, env *clienv.Env) int {
	if env.Call == nil {
		fmt.Fprintln(env.Stderr, "slurm_reset_statistics: Requested operation not supported on this system")
		return exitSlurmError
	}
	if err := env.Call(ctx, "POST", droverapi.DiagResetPath, nil, nil); err != nil {
		var refused *connect.RequestError
		if errors.As(err, &refused) {
			fmt.Fprintf(env.Stderr, "slurm_reset_statistics: %s\n", refused.Message)
		} else {
			fmt.Fprintf(env.Stderr, "slurm_reset_statistics: Unable to contact slurm controller (connect failure): %v\n", err)
		}
		return exitSlurmError
	}
	fmt.Fprintln(env.Stdout, "Reset scheduling statistics")
	return 0
}

// checkCluster reads -M as sdiag does: one cluster, which must be the one
// the controller serves (a Drover controller serves one).
func checkCluster(ctx context.Context, prog string, env *clienv.Env, list string) (int, bool) {
	if len(getopt.SplitList(list)) > 1 {
		fmt.Fprintf(env.Stderr, "%s: fatal: Only one cluster can be used at a time with sdiag\n", prog)
		return 1, false
	}
	_, msgs, ok := clusters.Select(ctx, env.Client, list)
	if ok {
		return 0, true
	}
	for _, m := range msgs {
		fmt.Fprintln(env.Stderr, m)
	}
	fmt.Fprintf(env.Stderr, "%s: fatal: Could not get cluster information\n", prog)
	return 1, false
}

// lastWins is a flag without argument that sets *dst to val: sdiag's
// -a/-r and its sort options overwrite one setting each, so the last
// given counts, which separate booleans cannot tell.
type lastWins[T any] struct {
	dst *T
	val T
}

// given is what pflag passes a lastWins flag given without "=value";
// sdiag's options take no argument, so any other value is refused.
const given = "\x00given"

func (f lastWins[T]) Set(v string) error {
	if v != given {
		return errors.New("takes no argument")
	}
	*f.dst = f.val
	return nil
}

func (f lastWins[T]) String() string { return "false" }

// Type is "bool" so that pflag takes no argument for it and getopt.Message
// words "--all=x" as getopt does.
func (f lastWins[T]) Type() string { return "bool" }

func parse(prog string, env *clienv.Env, args []string) (options, int, bool) {
	var o options
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// help, usage and version are defined for pflag to accept; which of
	// them acts is firstExit's to say, in argv's order.
	var help, usage, version bool
	var jsonArg, yamlArg, clusterArg string
	flag := func(v pflag.Value, name, short string) {
		fs.VarPF(v, name, short, "").NoOptDefVal = given
	}
	flag(lastWins[bool]{&o.reset, false}, "all", "a")
	flag(lastWins[bool]{&o.reset, true}, "reset", "r")
	flag(lastWins[sortBy]{&o.sort, sortID}, "sort-by-id", "i")
	flag(lastWins[sortBy]{&o.sort, sortTime}, "sort-by-time", "t")
	flag(lastWins[sortBy]{&o.sort, sortTime2}, "sort-by-time2", "T")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.StringVarP(&clusterArg, "cluster", "M", "", "")
	fs.StringVar(&clusterArg, "clusters", "", "")
	fs.BoolVar(&o.noTrunc, "no-trunc", false, "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.StringVar(&jsonArg, "json", "", "")
	fs.Lookup("json").NoOptDefVal = " "
	fs.StringVar(&yamlArg, "yaml", "", "")
	fs.Lookup("yaml").NoOptDefVal = " "
	fs.StringVar(&o.complete, "autocomplete", "", "")
	if env.Getenv != nil {
		clusterArg = env.Getenv("SLURM_CLUSTERS")
	}
	argv, err := getopt.ExpandLong(args, longOptions, map[string]string{"clusters": "cluster"})
	if err == nil {
		err = fs.Parse(argv)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, getopt.Message(prog, err))
		// sdiag names itself here whatever it was invoked as.
		fmt.Fprintln(env.Stderr, `Try "sdiag --help" for more information`)
		return o, 1, true
	}
	switch firstExit(argv) {
	case "help":
		fmt.Fprint(env.Stdout, helpText)
		return o, 0, true
	case "usage":
		fmt.Fprintln(env.Stdout, "Usage: sdiag [-M cluster] [-aritT]")
		return o, 0, true
	case "version":
		fmt.Fprintln(env.Stdout, "slurm "+clienv.SlurmVersion)
		return o, 0, true
	}
	if fs.Changed("autocomplete") {
		fmt.Fprint(env.Stdout, suggest(o.complete))
		return o, 0, true
	}
	o.cluster = clusterArg
	if jsonArg != "" || yamlArg != "" {
		arg := jsonArg
		o.json, o.yaml = jsonArg != "", jsonArg == ""
		if o.yaml {
			arg = yamlArg
		}
		if arg != " " && arg != "v0.0.44" && arg != "data_parser/v0.0.44" {
			// Worded as the other commands word it: Drover has only
			// the v0.0.44 data parser.
			kind := map[bool]string{false: "JSON", true: "YAML"}[o.yaml]
			fmt.Fprintf(env.Stderr, "%s: error: %s output is only available with data parser v0.0.44, not %s\n", prog, kind, arg)
			return o, 1, true
		}
	}
	o.argv = args
	return o, 0, false
}

// firstExit is the first of --help, --usage and --version in argv (long
// options already expanded), "" for none: getopt acts on each option as
// it comes, so sdiag does what the first of them asks and stops there.
func firstExit(argv []string) string {
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "--"):
			name, _, hasArg := strings.Cut(a[2:], "=")
			switch name {
			case "help", "usage", "version":
				return name
			case "cluster", "clusters", "autocomplete":
				if !hasArg {
					i++
				}
			}
		case strings.HasPrefix(a, "-"):
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'h':
					return "help"
				case 'V':
					return "version"
				case 'M':
					// -M takes the rest of the word, or the next one.
					if j == len(a)-1 {
						i++
					}
					j = len(a)
				}
			}
		}
	}
	return ""
}

const helpText = `Usage: sdiag [OPTIONS]
  -a, --all           all statistics
  -r, --reset         reset statistics
  -M, --cluster       direct the request to a specific cluster
  -i, --sort-by-id    sort RPCs by id
  -t, --sort-by-time  sort RPCs by total run time
  -T, --sort-by-time2 sort RPCs by average run time
  -V, --version       display current version number
  --no-trunc          do not truncate long lines
  --json[=data_parser] Produce JSON output
  --yaml[=data_parser] Produce YAML output

Help options:
  --help          show this help message
  --usage         display brief usage message
`

// maxHostlistLen is where "Pending RPCs" cuts a host list without
// --no-trunc (MAX_HOSTLIST_LEN).
const maxHostlistLen = 80

var scheduleExits = [6]string{"End of job queue", "Hit default_queue_depth", "Hit sched_max_job_start",
	"Blocked on licenses", "Hit max_rpc_cnt", "Timeout (max_sched_time)"}

var bfExits = [6]string{"End of job queue", "Hit bf_max_job_start", "Hit bf_max_job_test",
	"System state changed", "Hit table size limit (bf_node_space_size)", "Timeout (bf_max_time)"}

// ctime is slurm_ctime2: "%a %b %d %T %Y" in local time.
func ctime(t int64) string { return time.Unix(t, 0).Format("Mon Jan 02 15:04:05 2006") }

// Print writes d as sdiag prints it, its RPC tables sorted by.
func Print(w io.Writer, d *readmodel.Diag, by sortBy, noTrunc bool) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("*******************************************************\n")
	p("sdiag output at %s (%d)\n", ctime(d.ReqTime), d.ReqTime)
	p("Data since      %s (%d)\n", ctime(d.StartTime), d.StartTime)
	p("*******************************************************\n")
	p("Server thread count:  %d\n", d.ServerThreadCount)
	p("RPC queue enabled:    %d\n", b2i(d.RPCQueueEnabled))
	p("Agent queue size:     %d\n", d.AgentQueueSize)
	p("Agent count:          %d\n", d.AgentCount)
	p("Agent thread count:   %d\n", d.AgentThreadCount)
	p("DBD Agent queue size: %d\n\n", d.DBDAgentQueueSize)

	p("Jobs submitted: %d\n", d.JobsSubmitted)
	p("Jobs started:   %d\n", d.JobsStarted)
	p("Jobs completed: %d\n", d.JobsCompleted)
	p("Jobs canceled:  %d\n", d.JobsCanceled)
	p("Jobs failed:    %d\n\n", d.JobsFailed)

	p("Job states ts:  %s (%d)\n", ctime(d.JobStatesTime), d.JobStatesTime)
	p("Jobs pending:   %d\n", d.JobsPending)
	p("Jobs running:   %d\n", d.JobsRunning)

	// sdiag prints the counters as C's unsigned types: a negative
	// int32 from the wire reads as its uint32.
	u := func(v int32) uint32 { return uint32(v) }
	p("\nMain schedule statistics (microseconds):\n")
	p("\tLast cycle:   %d\n", u(d.ScheduleCycleLast))
	p("\tMax cycle:    %d\n", u(d.ScheduleCycleMax))
	p("\tTotal cycles: %d\n", u(d.ScheduleCycleCounter))
	if n := u(d.ScheduleCycleCounter); n > 0 {
		p("\tMean cycle:   %d\n", uint64(d.ScheduleCycleSum)/uint64(n))
		p("\tMean depth cycle:  %d\n", u(d.ScheduleCycleDepth)/n)
	}
	if span := d.ReqTime - d.StartTime; span > 60 {
		p("\tCycles per minute: %d\n", uint32(int64(u(d.ScheduleCycleCounter))/(span/60)))
	}
	p("\tLast queue length: %d\n", u(d.ScheduleQueueLen))

	p("\nMain scheduler exit:\n")
	for i, name := range scheduleExits {
		p("\t%s:%2d\n", name, u(d.ScheduleExit[i]))
	}

	if d.BFActive {
		p("\nBackfilling stats (WARNING: data obtained in the middle of backfilling execution.)\n")
	} else {
		p("\nBackfilling stats\n")
	}
	bfN := u(d.BFCycleCounter)
	p("\tTotal backfilled jobs (since last slurm start): %d\n", u(d.BFBackfilledJobs))
	p("\tTotal backfilled jobs (since last stats cycle start): %d\n", u(d.BFLastBackfilledJobs))
	p("\tTotal backfilled heterogeneous job components: %d\n", u(d.BFBackfilledHetJobs))
	p("\tTotal cycles: %d\n", bfN)
	if d.BFWhenLastCycle > 0 {
		p("\tLast cycle when: %s (%d)\n", ctime(d.BFWhenLastCycle), d.BFWhenLastCycle)
	} else {
		p("\tLast cycle when: N/A\n")
	}
	p("\tLast cycle: %d\n", u(d.BFCycleLast))
	p("\tMax cycle:  %d\n", u(d.BFCycleMax))
	if bfN > 0 {
		p("\tMean cycle: %d\n", uint64(d.BFCycleSum)/uint64(bfN))
	}
	p("\tLast depth cycle: %d\n", u(d.BFLastDepth))
	p("\tLast depth cycle (try sched): %d\n", u(d.BFLastDepthTry))
	if bfN > 0 {
		p("\tDepth Mean: %d\n", u(d.BFDepthSum)/bfN)
		p("\tDepth Mean (try depth): %d\n", u(d.BFDepthTrySum)/bfN)
	}
	p("\tLast queue length: %d\n", u(d.BFQueueLen))
	if bfN > 0 {
		p("\tQueue length mean: %d\n", u(d.BFQueueLenSum)/bfN)
	}
	p("\tLast table size: %d\n", u(d.BFTableSize))
	if bfN > 0 {
		p("\tMean table size: %d\n", u(d.BFTableSizeSum)/bfN)
	}
	p("\nBackfill exit\n")
	for i, name := range bfExits {
		p("\t%s:%2d\n", name, u(d.BFExit[i]))
	}

	p("\nLatency for 1000 calls to gettimeofday(): %d microseconds\n", d.GettimeofdayLatency)

	p("\nRemote Procedure Call statistics by message type\n")
	for _, r := range sorted(d.RPCsByType, by) {
		if !d.RPCQueueEnabled {
			p("\t%-40s(%5d) count:%-6d ave_time:%-6d total_time:%d\n", r.Name, r.ID, r.Count, r.AverageTime(), r.TotalTime)
		} else {
			p("\t%-40s(%5d) count:%-6d ave_time:%-6d total_time:%-12d queued:%-6d cycle_last:%-6d cycle_max:%-6d dropped:%d\n",
				r.Name, r.ID, r.Count, r.AverageTime(), r.TotalTime, r.Queued, r.CycleLast, r.CycleMax, r.Dropped)
		}
	}
	if len(d.RPCsByType) == 0 {
		p("\tNo RPCs recorded yet.\n")
	}

	p("\nRemote Procedure Call statistics by user\n")
	for _, r := range sorted(d.RPCsByUser, by) {
		p("\t%-16s(%8d) count:%-6d ave_time:%-6d total_time:%d\n", r.Name, r.ID, r.Count, r.AverageTime(), r.TotalTime)
	}

	p("\nPending RPC statistics\n")
	if len(d.PendingRPCs) == 0 {
		p("\tNo pending RPCs\n")
	}
	for _, r := range d.PendingRPCs {
		p("\t%-40s(%5d) count:%-6d\n", r.Name, r.ID, r.Count)
	}
	if len(d.PendingRPCHosts) > 0 {
		p("\nPending RPCs\n")
	}
	for i, r := range d.PendingRPCHosts {
		hosts := r.Hostlist
		if !noTrunc && len(hosts) > maxHostlistLen {
			hosts = hosts[:maxHostlistLen]
		}
		p("\t%2d: %-36s %s\n", i+1, r.Name, hosts)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sorted is rs in sdiag's order: by count, total time or mean time,
// highest first, or by ID, lowest first. Ties keep the answer's order
// (sdiag's qsort leaves them in no defined order).
func sorted(rs []readmodel.RPCStat, by sortBy) []readmodel.RPCStat {
	out := append([]readmodel.RPCStat(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch by {
		case sortID:
			return a.ID < b.ID
		case sortTime:
			return a.TotalTime > b.TotalTime
		case sortTime2:
			return a.AverageTime() > b.AverageTime()
		}
		return a.Count > b.Count
	})
	return out
}
