package slurmconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/timefmt"
)

// header is the smallest valid configuration, for tests that add lines.
const header = "ClusterName=test\nSlurmctldHost=ctl\n"

func mustParse(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse(strings.NewReader(text), "slurm.conf")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// globalView is the part of a Config the reference tests compare.
type globalView struct {
	ClusterName          string
	SlurmctldHosts       []ControllerHost
	SlurmctldPort        uint16
	SlurmdPort           uint16
	StateSaveLocation    string
	SlurmdSpoolDir       string
	SlurmdTimeout        time.Duration
	MinJobAge            time.Duration
	MaxJobCount          uint32
	GresTypes            []string
	SelectType           string
	SelectTypeParameters string
	SchedulerType        string
	PriorityType         string
	DefMemPerCPU         uint64
	AuthType             string
	ProctrackType        string
	TaskPlugin           string
	JobRequeue           bool
	ReturnToService      uint16
	SlurmUser            string
	Licenses             string
}

func viewOf(c *Config) globalView {
	return globalView{
		ClusterName: c.ClusterName, SlurmctldHosts: c.SlurmctldHosts, SlurmctldPort: c.SlurmctldPort,
		SlurmdPort: c.SlurmdPort, StateSaveLocation: c.StateSaveLocation, SlurmdSpoolDir: c.SlurmdSpoolDir,
		SlurmdTimeout: c.SlurmdTimeout, MinJobAge: c.MinJobAge, MaxJobCount: c.MaxJobCount,
		GresTypes: c.GresTypes, SelectType: c.SelectType, SelectTypeParameters: c.SelectTypeParameters,
		SchedulerType: c.SchedulerType, PriorityType: c.PriorityType, DefMemPerCPU: c.DefMemPerCPU,
		AuthType: c.AuthType, ProctrackType: c.ProctrackType, TaskPlugin: c.TaskPlugin,
		JobRequeue: c.JobRequeue, ReturnToService: c.ReturnToService, SlurmUser: c.SlurmUser, Licenses: c.Licenses,
	}
}

// ignoreSource leaves out where things were read, compared separately.
var ignoreSource = cmpopts.IgnoreFields(Node{}, "File", "Line")

func TestLoadReference(t *testing.T) {
	refNode := func(name string, port uint16) Node {
		return Node{
			Name: name, Hostname: "node0", Addr: "127.0.0.1", Port: port,
			CPUs: 8, Boards: 1, Sockets: 1, CoresPerSocket: 8, ThreadsPerCore: 1,
			RealMemory: 16000, Gres: []string{"gpu:4"}, Weight: 1, State: NodeStateUnknown,
		}
	}
	tests := map[string]struct {
		path       string
		global     globalView
		nodes      []Node
		partitions []Partition
	}{
		// Cluster B of /work/shared/reference/README.md.
		"22.05": {
			path: "testdata/slurm.conf.22.05",
			global: globalView{
				ClusterName: "refcluster", SlurmctldHosts: []ControllerHost{{Name: "ctl0", Addr: "127.0.0.1"}},
				SlurmctldPort: 16817, SlurmdPort: 6818, StateSaveLocation: "/var/spool/slurmctld",
				SlurmdSpoolDir: "/var/spool/slurmd/%n", SlurmdTimeout: 300 * time.Second, MinJobAge: 300 * time.Second,
				MaxJobCount: 100000, GresTypes: []string{"gpu"}, SelectType: "select/cons_tres",
				SelectTypeParameters: "CR_Core_Memory", SchedulerType: "sched/backfill",
				PriorityType: "priority/multifactor", DefMemPerCPU: 1000, AuthType: "auth/munge",
				ProctrackType: "proctrack/pgid", TaskPlugin: "task/none", JobRequeue: true, ReturnToService: 2,
				SlurmUser: "root",
			},
			nodes: []Node{refNode("n1", 17001), refNode("n2", 17002), refNode("n3", 17003), refNode("n4", 17004)},
			partitions: []Partition{
				{Name: "gpu", Nodes: []string{"n1", "n2", "n3", "n4"}, NodesExpr: "n[1-4]", Default: true, MaxTime: timefmt.Unlimited},
				{Name: "debug", Nodes: []string{"n1", "n2"}, NodesExpr: "n[1-2]", MaxTime: timefmt.Limit{Minutes: 30},
					DefaultTime: timefmt.Limit{Minutes: 10}, HasDefaultTime: true},
			},
		},
		// Cluster A.
		"26.11": {
			path: "testdata/slurm.conf.26.11",
			global: globalView{
				ClusterName: "rccluster", SlurmctldHosts: []ControllerHost{{Name: "ctl0", Addr: "127.0.0.1"}},
				SlurmctldPort: 7817, SlurmdPort: 7818, StateSaveLocation: "/var/spool/slurmctld",
				SlurmdSpoolDir: "/var/spool/slurmd", SlurmdTimeout: 300 * time.Second, MinJobAge: 600 * time.Second,
				MaxJobCount: 10000, GresTypes: []string{"gpu"}, SelectType: "select/cons_tres",
				SelectTypeParameters: "CR_Core_Memory", SchedulerType: "sched/backfill",
				PriorityType: "priority/multifactor", AuthType: "auth/slurm", ProctrackType: "proctrack/linuxproc",
				TaskPlugin: "task/none", JobRequeue: true, ReturnToService: 2, SlurmUser: "root", Licenses: "fluent:10",
			},
			nodes: []Node{{
				Name: "rc1", Hostname: "node0", Addr: "127.0.0.1", Port: 7818,
				CPUs: 2, Boards: 1, Sockets: 1, CoresPerSocket: 2, ThreadsPerCore: 1,
				RealMemory: 4000, Gres: []string{"gpu:2"}, Weight: 1,
			}},
			partitions: []Partition{
				{Name: "debug", Nodes: []string{"rc1"}, NodesExpr: "rc1", Default: true, MaxTime: timefmt.Unlimited},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Load(tc.path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(tc.global, viewOf(c)); diff != "" {
				t.Errorf("globals mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.nodes, c.Nodes, ignoreSource); diff != "" {
				t.Errorf("nodes mismatch (-want +got):\n%s", diff)
			}
			for i := range tc.partitions {
				tc.partitions[i].PriorityTier, tc.partitions[i].PriorityJobFactor = 1, 1
				tc.partitions[i].MaxNodes, tc.partitions[i].MaxCPUsPerNode, tc.partitions[i].MaxCPUsPerSocket = Infinite, Infinite, Infinite
			}
			if diff := cmp.Diff(tc.partitions, c.Partitions, cmpopts.IgnoreFields(Partition{}, "Options", "File", "Line")); diff != "" {
				t.Errorf("partitions mismatch (-want +got):\n%s", diff)
			}
			if len(c.Warnings) != 0 || len(c.Unknown) != 0 {
				t.Errorf("unexpected warnings %v, unknown keys %v", c.Warnings, c.Unknown)
			}
			if diff := cmp.Diff([]string{tc.path}, c.Files); diff != "" {
				t.Errorf("files mismatch (-want +got):\n%s", diff)
			}
			// Every global line is kept in order, with Slurm's spelling.
			first := c.Entries[0]
			if diff := cmp.Diff(Entry{Key: "ClusterName", Value: first.Value, File: tc.path, Line: 1}, first); diff != "" {
				t.Errorf("first entry mismatch (-want +got):\n%s", diff)
			}
			if v, ok := c.Value("slurmctldport"); !ok || v != c.Entries[2].Value {
				t.Errorf("Value(slurmctldport) = %q, %v", v, ok)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, header+"NodeName=n1\nPartitionName=p Nodes=n1\n")
	want := Config{
		ClusterName: "test", SlurmctldHosts: []ControllerHost{{Name: "ctl", Addr: "ctl"}},
		SlurmctldPort: 6817, SlurmctldPortCount: 1, SlurmdPort: 6818,
		StateSaveLocation: "/var/spool", SlurmdSpoolDir: "/var/spool/slurmd", TmpFS: "/tmp",
		SlurmdTimeout: 300 * time.Second, SlurmctldTimeout: 120 * time.Second, KillWait: 30 * time.Second,
		MinJobAge: 300 * time.Second, MessageTimeout: 10 * time.Second, BatchStartTimeout: 10 * time.Second,
		MaxJobCount: 10000, FirstJobID: 1, MaxJobID: 0x03ff0000, MaxArraySize: 1001, MaxStepCount: 40000,
		MaxTasksPerNode: 512, TreeWidth: 16,
		SelectType: "select/cons_tres", SelectTypeParameters: "CR_Core_Memory", SchedulerType: "sched/backfill",
		PriorityType: "priority/multifactor", AuthType: "auth/munge", CredType: "cred/munge",
		ProctrackType: "proctrack/cgroup", JobRequeue: true, SlurmUser: "root", SlurmdUser: "root",
		EnforcePartLimits: "NO", JobAcctGatherFrequency: 30 * time.Second,
		Nodes: []Node{{
			Name: "n1", Hostname: "n1", Addr: "n1", Port: 6818, CPUs: 1, Boards: 1, Sockets: 1,
			CoresPerSocket: 1, ThreadsPerCore: 1, RealMemory: 1, Weight: 1, File: "slurm.conf", Line: 3,
		}},
		Partitions: []Partition{{
			Name: "p", Nodes: []string{"n1"}, NodesExpr: "n1", MaxTime: timefmt.Unlimited,
			PriorityTier: 1, PriorityJobFactor: 1, MaxNodes: Infinite, MaxCPUsPerNode: Infinite, MaxCPUsPerSocket: Infinite,
			Options: []Entry{{Key: "Nodes", Value: "n1", File: "slurm.conf", Line: 4}}, File: "slurm.conf", Line: 4,
		}},
		Entries: []Entry{
			{Key: "ClusterName", Value: "test", File: "slurm.conf", Line: 1},
			{Key: "SlurmctldHost", Value: "ctl", File: "slurm.conf", Line: 2},
		},
		Files: []string{"slurm.conf"},
	}
	if diff := cmp.Diff(&want, c); diff != "" {
		t.Errorf("defaults mismatch (-want +got):\n%s", diff)
	}
}

func TestSyntax(t *testing.T) {
	tests := map[string]struct {
		text string
		key  string
		want string
	}{
		"comment":                 {text: "MpiDefault=pmix # the default", key: "MpiDefault", want: "pmix"},
		"escaped hash":            {text: `MailDomain=a\#b`, key: "MailDomain", want: "a#b"},
		"escaped backslash hash":  {text: `MailDomain=a\\#b`, key: "MailDomain", want: `a\`},
		"continuation":            {text: "SchedulerParameters=a,\\\nb", key: "SchedulerParameters", want: "a,b"},
		"continuation and blanks": {text: "SchedulerParameters=a,\\  \r\nb", key: "SchedulerParameters", want: "a,b"},
		"double backslash":        {text: `PluginDir=a\\`, key: "PluginDir", want: `a\`},
		"quoted":                  {text: `HealthCheckProgram="/bin/check --all"`, key: "HealthCheckProgram", want: "/bin/check --all"},
		"quoted empty":            {text: `MailDomain=""`, key: "MailDomain", want: ""},
		"quote inside":            {text: `MailDomain=a"b`, key: "MailDomain", want: `a"b`},
		"quote not closing":       {text: `MailDomain="a"b`, key: "MailDomain", want: `"a"b`},
		"key case":                {text: "mpidefault=none", key: "MpiDefault", want: "none"},
		"blanks around equals":    {text: "  MpiDefault =  none  ", key: "MpiDefault", want: "none"},
		"crlf":                    {text: "MpiDefault=none\r", key: "MpiDefault", want: "none"},
		"later wins":              {text: "MpiDefault=a\nMpiDefault=b", key: "MpiDefault", want: "b"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := mustParse(t, header+tc.text+"\n")
			got, ok := c.Value(tc.key)
			if !ok {
				t.Fatalf("Value(%q) not set; entries %v", tc.key, c.Entries)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Value(%q) mismatch (-want +got):\n%s", tc.key, diff)
			}
		})
	}
}

func TestGlobals(t *testing.T) {
	c := mustParse(t, `ClusterName=MyCluster
SlurmctldHost=a(10.0.0.1)
SlurmctldHost=b
SlurmctldPort=6817-6820
SlurmdPort=0x1A0A
KillWait=UNLIMITED
MaxArraySize=10k
DefMemPerNode=2000
DefMemPerCPU=100
JobRequeue=5
GresTypes=gpu,,shard
Prolog=/a
Prolog=/b
TaskPlugin=task/affinity,task/cgroup
`)
	type view struct {
		ClusterName        string
		Hosts              []ControllerHost
		Port, Count, Slurm uint16
		KillWait           time.Duration
		MaxArraySize       uint32
		DefMemPerNode      uint64
		DefMemPerCPU       uint64
		JobRequeue         bool
		GresTypes, Prolog  []string
		TaskPlugin         string
		Warnings           []string
	}
	got := view{
		ClusterName: c.ClusterName, Hosts: c.SlurmctldHosts, Port: c.SlurmctldPort, Count: c.SlurmctldPortCount,
		Slurm: c.SlurmdPort, KillWait: c.KillWait, MaxArraySize: c.MaxArraySize, DefMemPerNode: c.DefMemPerNode,
		DefMemPerCPU: c.DefMemPerCPU, JobRequeue: c.JobRequeue, GresTypes: c.GresTypes, Prolog: c.Prolog,
		TaskPlugin: c.TaskPlugin,
	}
	for _, w := range c.Warnings {
		got.Warnings = append(got.Warnings, w.String())
	}
	want := view{
		ClusterName: "mycluster", Hosts: []ControllerHost{{Name: "a", Addr: "10.0.0.1"}, {Name: "b", Addr: "b"}},
		Port: 6817, Count: 4, Slurm: 6666, KillWait: 65535 * time.Second, MaxArraySize: 10240,
		DefMemPerNode: 2000, JobRequeue: true, GresTypes: []string{"gpu", "shard"}, Prolog: []string{"/a", "/b"},
		TaskPlugin: "task/affinity,task/cgroup",
		Warnings:   []string{"slurm.conf:9: DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("globals mismatch (-want +got):\n%s", diff)
	}
}

func TestLegacyController(t *testing.T) {
	c := mustParse(t, "ClusterName=c\nControlMachine=m1\nControlAddr=10.0.0.1\nBackupController=m2\n")
	want := []ControllerHost{{Name: "m1", Addr: "10.0.0.1"}, {Name: "m2", Addr: "m2"}}
	if diff := cmp.Diff(want, c.SlurmctldHosts); diff != "" {
		t.Errorf("controllers mismatch (-want +got):\n%s", diff)
	}
}

func TestControllerAddrs(t *testing.T) {
	tests := map[string]struct {
		text string
		want []string
	}{
		"in order, address before name": {
			text: "SlurmctldHost=c1(10.0.0.1)\nSlurmctldHost=c2\nSlurmctldHost=c3(fe80::3)\nSlurmctldPort=7000\n",
			want: []string{"10.0.0.1:7000", "c2:7000", "[fe80::3]:7000"},
		},
		"default port": {text: "SlurmctldHost=c1\n", want: []string{"c1:6817"}},
		"same address twice": {
			text: "SlurmctldHost=c1(10.0.0.1)\nSlurmctldHost=c2(10.0.0.1)\n",
			want: []string{"10.0.0.1:6817"},
		},
		"legacy backup": {
			text: "ControlMachine=m1\nBackupController=m2\nBackupAddr=10.0.0.2\n",
			want: []string{"m1:6817", "10.0.0.2:6817"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := mustParse(t, "ClusterName=c\n"+tc.text)
			if diff := cmp.Diff(tc.want, c.ControllerAddrs()); diff != "" {
				t.Errorf("ControllerAddrs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodes(t *testing.T) {
	tests := map[string]struct {
		text     string
		want     []Node
		warnings []string
	}{
		"cpus from topology": {
			text: "NodeName=a Boards=2 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=2",
			want: []Node{{Name: "a", CPUs: 32, Boards: 2, Sockets: 4, CoresPerSocket: 4, ThreadsPerCore: 2}},
		},
		"sockets from cpus": {
			text: "NodeName=a CPUs=16 CoresPerSocket=4 ThreadsPerCore=2",
			want: []Node{{Name: "a", CPUs: 16, Boards: 1, Sockets: 2, CoresPerSocket: 4, ThreadsPerCore: 2}},
		},
		"cpus only": {
			text: "NodeName=a CPUs=8",
			want: []Node{{Name: "a", CPUs: 8, Boards: 1, Sockets: 8, CoresPerSocket: 1, ThreadsPerCore: 1}},
		},
		"cpus counting cores": {
			text: "NodeName=a CPUs=8 Sockets=2 CoresPerSocket=4 ThreadsPerCore=2",
			want: []Node{{Name: "a", CPUs: 8, Boards: 1, Sockets: 2, CoresPerSocket: 4, ThreadsPerCore: 2}},
		},
		"procs alias": {
			text: "NodeName=a Procs=4",
			want: []Node{{Name: "a", CPUs: 4, Boards: 1, Sockets: 4, CoresPerSocket: 1, ThreadsPerCore: 1}},
		},
		"inconsistent cpus reset": {
			text:     "NodeName=a CPUs=5 Sockets=2 CoresPerSocket=2",
			want:     []Node{{Name: "a", CPUs: 4, Boards: 1, Sockets: 2, CoresPerSocket: 2, ThreadsPerCore: 1}},
			warnings: []string{"NodeNames=a CPUs=5 match no Sockets, Sockets*CoresPerSocket or Sockets*CoresPerSocket*ThreadsPerCore. Resetting CPUs."},
		},
		"zero reset": {
			text:     "NodeName=a CoresPerSocket=0",
			want:     []Node{{Name: "a", CPUs: 1, Boards: 1, Sockets: 1, CoresPerSocket: 1, ThreadsPerCore: 1}},
			warnings: []string{"NodeNames=a CoresPerSocket=0 is invalid, reset to 1"},
		},
		"defaults apply to later lines": {
			text: "NodeName=DEFAULT CPUs=4 RealMemory=100 State=FUTURE\nNodeName=a\nNodeName=DEFAULT RealMemory=200\nNodeName=b CPUs=2",
			want: []Node{
				{Name: "a", CPUs: 4, Boards: 1, Sockets: 4, CoresPerSocket: 1, ThreadsPerCore: 1, RealMemory: 100, State: NodeStateFuture},
				{Name: "b", CPUs: 2, Boards: 1, Sockets: 2, CoresPerSocket: 1, ThreadsPerCore: 1, RealMemory: 200, State: NodeStateFuture},
			},
		},
		"addresses matched": {
			text: "NodeName=n[1-3] NodeHostname=h[1-3] Port=7001-7003 Weight=UNLIMITED",
			want: []Node{
				{Name: "n1", Hostname: "h1", Addr: "h1", Port: 7001, Weight: Infinite - 1},
				{Name: "n2", Hostname: "h2", Addr: "h2", Port: 7002, Weight: Infinite - 1},
				{Name: "n3", Hostname: "h3", Addr: "h3", Port: 7003, Weight: Infinite - 1},
			},
		},
		"single address for all": {
			text: "NodeName=n[1-2] NodeAddr=10.0.0.1 Port=7000",
			want: []Node{
				{Name: "n1", Hostname: "n1", Addr: "10.0.0.1", Port: 7000},
				{Name: "n2", Hostname: "n2", Addr: "10.0.0.1", Port: 7000},
			},
		},
		"features gres state reason": {
			text: `NodeName=g1 Gres=gpu:a100:4,gpu:2(S:0,1) Features=ib,avx512 State=DRAIN Reason="bad fan" TmpDisk=1K`,
			want: []Node{{Name: "g1", Gres: []string{"gpu:a100:4", "gpu:2(S:0,1)"}, Features: []string{"ib", "avx512"},
				State: NodeStateDrain, Reason: "bad fan", TmpDisk: 1024}},
		},
		"failing": {
			text: "NodeName=a State=failing",
			want: []Node{{Name: "a", State: NodeStateFail}},
		},
		"cloud": {
			text: "NodeName=a State=CLOUD",
			want: []Node{{Name: "a", State: NodeStateCloud}},
		},
	}
	// fill gives unset fields their defaults so that cases list only what
	// they are about.
	fill := func(n Node) Node {
		if n.Hostname == "" {
			n.Hostname = n.Name
		}
		if n.Addr == "" {
			n.Addr = n.Hostname
		}
		if n.Port == 0 {
			n.Port = DefaultSlurmdPort
		}
		if n.CPUs == 0 {
			n.CPUs, n.Boards, n.Sockets, n.CoresPerSocket, n.ThreadsPerCore = 1, 1, 1, 1, 1
		}
		if n.RealMemory == 0 {
			n.RealMemory = 1
		}
		if n.Weight == 0 {
			n.Weight = 1
		}
		return n
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := mustParse(t, header+tc.text+"\n")
			var want []Node
			for _, n := range tc.want {
				want = append(want, fill(n))
			}
			if diff := cmp.Diff(want, c.Nodes, ignoreSource); diff != "" {
				t.Errorf("nodes mismatch (-want +got):\n%s", diff)
			}
			var warnings []string
			for _, w := range c.Warnings {
				warnings = append(warnings, w.Text)
			}
			if diff := cmp.Diff(tc.warnings, warnings); diff != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPartitions(t *testing.T) {
	nodes := "NodeName=n[1-4] Features=ib\nNodeName=m1\n"
	tests := map[string]struct {
		text  string
		check func(p Partition) any
		want  any
	}{
		"all nodes": {
			text: "PartitionName=p Nodes=ALL", check: func(p Partition) any { return p.Nodes },
			want: []string{"n1", "n2", "n3", "n4", "m1"},
		},
		"set in node order": {
			text: "PartitionName=p Nodes=m1,n3,n1,n3", check: func(p Partition) any { return p.Nodes },
			want: []string{"n1", "n3", "m1"},
		},
		"blank separated": {
			text: `PartitionName=p Nodes="n1 m1"`, check: func(p Partition) any { return p.Nodes },
			want: []string{"n1", "m1"},
		},
		"empty": {
			text: `PartitionName=p Nodes=""`, check: func(p Partition) any { return p.Nodes },
			want: []string(nil),
		},
		"nodeset": {
			text: "NodeSet=ibset Feature=ib\nPartitionName=p Nodes=ibset,m1", check: func(p Partition) any { return p.Nodes },
			want: []string{"n1", "n2", "n3", "n4", "m1"},
		},
		"times": {
			text: "PartitionName=p MaxTime=1-00:00:00 DefaultTime=0:30",
			check: func(p Partition) any {
				return []any{p.MaxTime, p.DefaultTime, p.HasDefaultTime}
			},
			want: []any{timefmt.Limit{Minutes: 1440}, timefmt.Limit{Minutes: 1}, true},
		},
		"infinite": {
			text:  "PartitionName=p MaxTime=INFINITE",
			check: func(p Partition) any { return p.MaxTime }, want: timefmt.Unlimited,
		},
		"defaults": {
			text: "PartitionName=DEFAULT State=DOWN MaxNodes=2 ExclusiveUser=YES\nPartitionName=p",
			check: func(p Partition) any {
				return []any{p.State, p.MaxNodes, p.ExclusiveUser}
			},
			// ExclusiveUser is never taken from the defaults, as in Slurm.
			want: []any{PartitionDown, uint32(2), false},
		},
		"oversubscribe": {
			text:  "PartitionName=p OverSubscribe=FORCE:2",
			check: func(p Partition) any { return p.OverSubscribe.String() }, want: "FORCE:2",
		},
		"shared alias": {
			text:  "PartitionName=p Shared=YES",
			check: func(p Partition) any { return p.OverSubscribe.String() }, want: "YES:4",
		},
		"access lists": {
			text: "PartitionName=p AllowAccounts=ALL AllowQos=Normal,HIGH AllowGroups=Staff",
			check: func(p Partition) any {
				return []string{p.AllowAccounts, p.AllowQos, p.AllowGroups}
			},
			want: []string{"", "normal,high", "Staff"},
		},
		"priority": {
			text: "PartitionName=p Priority=7",
			check: func(p Partition) any {
				return []uint16{p.PriorityTier, p.PriorityJobFactor}
			},
			want: []uint16{7, 7},
		},
		"memory": {
			text: "PartitionName=p DefMemPerCPU=500 MaxMemPerNode=UNLIMITED",
			check: func(p Partition) any {
				return []uint64{p.DefMemPerCPU, p.MaxMemPerNode}
			},
			want: []uint64{500, 0},
		},
		"root jobs inherit": {
			text:  "DisableRootJobs=YES\nPartitionName=p",
			check: func(p Partition) any { return p.DisableRootJobs }, want: true,
		},
		"state prefix": {
			text:  "PartitionName=p State=inactive",
			check: func(p Partition) any { return p.State.String() }, want: "INACTIVE",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := mustParse(t, header+nodes+tc.text+"\n")
			p := c.Partition("p")
			if p == nil {
				t.Fatalf("no partition p in %+v", c.Partitions)
			}
			if diff := cmp.Diff(tc.want, tc.check(*p)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	c := mustParse(t, header+`FooBar=1
MpiDefault=none
MpiDefault=pmix
PowerPlugin=x
NodeName=n1 Colour=red
`)
	var got []string
	for _, w := range c.Warnings {
		got = append(got, w.String())
	}
	want := []string{
		`slurm.conf:3: unknown key "FooBar" ignored`,
		`slurm.conf:5: MpiDefault specified more than once, latest value used`,
		`slurm.conf:6: The option "PowerPlugin" is defunct, please remove it from slurm.conf.`,
		`slurm.conf:7: unknown key "Colour" in NodeName ignored`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings mismatch (-want +got):\n%s", diff)
	}
	wantUnknown := []Entry{
		{Key: "FooBar", Value: "1", File: "slurm.conf", Line: 3},
		{Key: "Colour", Value: "red", File: "slurm.conf", Line: 7},
	}
	if diff := cmp.Diff(wantUnknown, c.Unknown); diff != "" {
		t.Errorf("unknown mismatch (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	tests := map[string]struct {
		text string
		want []string
	}{
		"bad hostlist": {
			text: header + "NodeName=n[1-",
			want: []string{`slurm.conf:3: NodeName=n[1-: invalid hostlist: unclosed '[' in "n[1-"`},
		},
		"no equals": {
			text: header + "MpiDefault none",
			want: []string{`slurm.conf:3: MpiDefault none: not a key=value pair`},
		},
		"missing value": {
			text: header + "MpiDefault=",
			want: []string{`slurm.conf:3: MpiDefault=: not a key=value pair`},
		},
		"two settings on a line": {
			text: header + "MpiDefault=none KillWait=3",
			want: []string{`slurm.conf:3: KillWait=3: not a key=value pair (one setting per line)`},
		},
		"bad number": {
			text: header + "KillWait=soon",
			want: []string{`slurm.conf:3: KillWait=soon: "soon" is not a valid number`},
		},
		"negative": {
			text: header + "MaxJobCount=-1",
			want: []string{`slurm.conf:3: MaxJobCount=-1: "-1" is less than zero`},
		},
		"too large": {
			text: header + "KillWait=70000",
			want: []string{`slurm.conf:3: KillWait=70000: "70000" is greater than 65535`},
		},
		"bad boolean": {
			text: header + "NodeName=n1\nPartitionName=p Nodes=n1 Default=maybe",
			want: []string{`slurm.conf:4: Default=maybe: "maybe" is not a valid boolean (YES or NO)`},
		},
		"node cpus": {
			text: header + "NodeName=n1 CPUs=lots",
			want: []string{`slurm.conf:3: CPUs=lots: "lots" is not a valid number`},
		},
		"continued line reports its first line": {
			text: header + "NodeName=n1 \\\n CPUs=x",
			want: []string{`slurm.conf:3: CPUs=x: "x" is not a valid number`},
		},
		"unknown node in partition": {
			text: header + "NodeName=n[1-2]\nPartitionName=p Nodes=n[1-3]",
			want: []string{`slurm.conf:4: Nodes=n[1-3]: invalid node name "n3" in partition p`},
		},
		"duplicate node": {
			text: header + "NodeName=n[1-2]\nNodeName=n2",
			want: []string{`slurm.conf:4: NodeName=n2: duplicated NodeName n2 (first defined at slurm.conf:3)`},
		},
		"duplicate partition": {
			text: header + "PartitionName=p\nPartitionName=p",
			want: []string{`slurm.conf:4: PartitionName=p: duplicated PartitionName p (first defined at slurm.conf:3)`},
		},
		"addr count": {
			text: header + "NodeName=n[1-3] NodeAddr=a[1-2]",
			want: []string{`slurm.conf:3: NodeAddr=a[1-2]: NodeAddr count (2) must equal that of NodeName records (3) or there must be no more than one`},
		},
		"cpu overflow": {
			text: header + "NodeName=a Sockets=256 CoresPerSocket=256 ThreadsPerCore=2",
			want: []string{`slurm.conf:3: NodeName=a: 131072 CPUs (Sockets*CoresPerSocket*ThreadsPerCore) is more than 65535`},
		},
		"port": {
			text: header + "NodeName=n1 Port=70000",
			want: []string{`slurm.conf:3: Port=70000: invalid port "70000"`},
		},
		"node state": {
			text: header + "NodeName=n1 State=SLEEPY",
			want: []string{`slurm.conf:3: State=SLEEPY: invalid node state "SLEEPY"`},
		},
		"default with address": {
			text: header + "NodeName=DEFAULT NodeAddr=x",
			want: []string{`slurm.conf:3: NodeName=DEFAULT: NodeAddr not allowed with NodeName=DEFAULT`},
		},
		"reserved ALL": {
			text: header + "NodeName=ALL",
			want: []string{`slurm.conf:3: NodeName=ALL: 'ALL' is a reserved word disallowed for use with NodeName`},
		},
		"max time": {
			text: header + "PartitionName=p MaxTime=1:2:3:4",
			want: []string{`slurm.conf:3: MaxTime=1:2:3:4: bad value "1:2:3:4" for MaxTime`},
		},
		"partition state": {
			text: header + "PartitionName=p State=OPEN",
			want: []string{`slurm.conf:3: State=OPEN: bad value "OPEN" for State`},
		},
		"oversubscribe": {
			text: header + "PartitionName=p OverSubscribe=SOMETIMES",
			want: []string{`slurm.conf:3: OverSubscribe=SOMETIMES: bad value for OverSubscribe (NO, EXCLUSIVE, YES[:n] or FORCE[:n])`},
		},
		"controller": {
			text: "ClusterName=c\nSlurmctldHost=a(b",
			want: []string{
				`slurm.conf:2: SlurmctldHost=a(b: bad value "a(b" for SlurmctldHost`,
				`slurm.conf: No SlurmctldHost defined.`,
			},
		},
		"controller port range": {
			text: header + "SlurmctldPort=6818-6817",
			want: []string{`slurm.conf:3: SlurmctldPort=6818-6817: invalid SlurmctldPort`},
		},
		"required keys": {
			text: "MpiDefault=none",
			want: []string{`slurm.conf: ClusterName needs to be specified`, `slurm.conf: No SlurmctldHost defined.`},
		},
		"include missing": {
			text: header + "Include nosuch.conf",
			want: []string{`slurm.conf:3: Include nosuch.conf: open nosuch.conf: no such file or directory`},
		},
		"include glob": {
			text: header + "include conf.d/*.conf",
			want: []string{`slurm.conf:3: Include conf.d/*.conf: glob patterns are not supported in Include`},
		},
		"all collected": {
			text: header + "KillWait=x\nNodeName=n1 CPUs=y RealMemory=z",
			want: []string{
				`slurm.conf:3: KillWait=x: "x" is not a valid number`,
				`slurm.conf:4: CPUs=y: "y" is not a valid number`,
				`slurm.conf:4: RealMemory=z: "z" is not a valid number`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Parse(strings.NewReader(tc.text), "slurm.conf")
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T is not Errors: %v", err, err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTooManyErrors(t *testing.T) {
	text := header + strings.Repeat("KillWait=x\n", 200)
	_, err := Parse(strings.NewReader(text), "slurm.conf")
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %T is not Errors: %v", err, err)
	}
	if len(errs) != maxErrors+1 || !errors.Is(err, errTooManyErrors) {
		t.Errorf("got %d errors (%v), want %d ending with %v", len(errs), errs[len(errs)-1], maxErrors+1, errTooManyErrors)
	}
}

func TestInclude(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("slurm.conf", "ClusterName=Alpha\nSlurmctldHost=ctl\nInclude nodes.conf\ninclude %c/parts.conf\nKillWait=5\n")
	write("nodes.conf", "NodeName=n[1-2] CPUs=4\nInclude sub/more.conf\n")
	// Nested includes are relative to the main file's folder, as in Slurm.
	write("sub/more.conf", "NodeName=n3\n")
	write("alpha/parts.conf", "PartitionName=p Nodes=n[1-3] Default=YES\n")

	c, err := Load(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name+"@"+filepath.Base(n.File))
	}
	if diff := cmp.Diff([]string{"n1@nodes.conf", "n2@nodes.conf", "n3@more.conf"}, names); diff != "" {
		t.Errorf("nodes mismatch (-want +got):\n%s", diff)
	}
	if p := c.DefaultPartition(); p == nil || hostlist.Compress(p.Nodes) != "n[1-3]" {
		t.Errorf("default partition = %+v", p)
	}
	wantFiles := []string{"slurm.conf", "nodes.conf", "sub/more.conf", "alpha/parts.conf"}
	for i := range wantFiles {
		wantFiles[i] = filepath.Join(dir, wantFiles[i])
	}
	if diff := cmp.Diff(wantFiles, c.Files); diff != "" {
		t.Errorf("files mismatch (-want +got):\n%s", diff)
	}
	if c.KillWait != 5*time.Second {
		t.Errorf("KillWait = %v after the includes, want 5s", c.KillWait)
	}

	write("loop.conf", "ClusterName=a\nSlurmctldHost=b\nInclude loop.conf\n")
	_, err = Load(filepath.Join(dir, "loop.conf"))
	if err == nil || !strings.Contains(err.Error(), "loop.conf:3: Include loop.conf: Include loop") {
		t.Errorf("Load(loop.conf) error = %v, want an include loop error", err)
	}
}

func TestLogicalLines(t *testing.T) {
	got := logicalLines([]byte("a=1\nb=2 \\\n c=3\\\\\nd=4 # x \\\ne=5\\"))
	want := []logicalLine{
		{text: "a=1\n", line: 1},
		{text: "b=2  c=3\\\n", line: 2},
		{text: "d=4 ", line: 4},
		{text: "e=5", line: 5},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(logicalLine{})); diff != "" {
		t.Errorf("logicalLines mismatch (-want +got):\n%s", diff)
	}
}

func TestParseUint(t *testing.T) {
	tests := map[string]struct {
		in   string
		bits int
		want uint64
		inf  bool
		err  string
	}{
		"decimal":       {in: "42", bits: 16, want: 42},
		"hex":           {in: "0x10", bits: 16, want: 16},
		"octal":         {in: "010", bits: 16, want: 8},
		"zero":          {in: "0", bits: 16, want: 0},
		"plus":          {in: "+7", bits: 32, want: 7},
		"kilo":          {in: "2k", bits: 32, want: 2048},
		"no kilo in 16": {in: "2k", bits: 16, err: `"2k" is not a valid number`},
		"unlimited":     {in: "unlimited", bits: 16, want: 65535, inf: true},
		"infinite 32":   {in: "INFINITE", bits: 32, want: 4294967295, inf: true},
		"bad octal":     {in: "08", bits: 16, err: `"08" is not a valid number`},
		"negative":      {in: "-3", bits: 32, err: `"-3" is less than zero`},
		"overflow":      {in: "99999999999999999999999", bits: 64, err: `"99999999999999999999999" is out of range`},
		"too big":       {in: "4294967296", bits: 32, err: `"4294967296" is greater than 4294967295`},
		"empty":         {in: "", bits: 16, err: `"" is not a valid number`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v, inf, err := parseUint(tc.in, tc.bits)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("parseUint(%q) error = %v, want %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || v != tc.want || inf != tc.inf {
				t.Errorf("parseUint(%q) = %d, %v, %v; want %d, %v", tc.in, v, inf, err, tc.want, tc.inf)
			}
		})
	}
}

func TestParseCgroupConf(t *testing.T) {
	c, err := ParseCgroupConf([]byte("CgroupPlugin=autodetect\n# ConstrainDevices=no\nConstrainDevices=YES ConstrainRAMSpace=no\n"), "cgroup.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !c.ConstrainDevices || c.Other["CgroupPlugin"] != "autodetect" || c.Other["ConstrainRAMSpace"] != "no" {
		t.Errorf("got %+v", c)
	}
	for _, bad := range []string{"ConstrainDevices=maybe\n", "ConstrainDevices\n", "CgroupPlugin+=x\n"} {
		if _, err := ParseCgroupConf([]byte(bad), "cgroup.conf"); err == nil || !strings.Contains(err.Error(), "cgroup.conf:1") {
			t.Errorf("ParseCgroupConf(%q) error = %v, want one naming cgroup.conf:1", bad, err)
		}
	}
	c, err = LoadCgroupConf(filepath.Join(t.TempDir(), "missing"))
	if err != nil || c.ConstrainDevices {
		t.Errorf("missing file: %+v, %v", c, err)
	}
}

func TestParseLicenses(t *testing.T) {
	got, err := ParseLicenses("fluent:10, matlab*2,sas")
	if err != nil {
		t.Fatal(err)
	}
	want := []License{{"fluent", 10}, {"matlab", 2}, {"sas", 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"a:x", ":3", "a:1,a:2", "a b:1"} {
		if _, err := ParseLicenses(bad); err == nil {
			t.Errorf("ParseLicenses(%q) succeeded", bad)
		}
	}
}

func TestParseAuthInfo(t *testing.T) {
	tests := map[string]struct {
		in   string
		want AuthInfo
		err  bool
	}{
		"defaults":   {in: "", want: AuthInfo{CredExpire: 120 * time.Second, TTL: 60 * time.Second}},
		"both":       {in: "cred_expire=1, ttl=30", want: AuthInfo{CredExpire: time.Second, TTL: 30 * time.Second}},
		"others":     {in: "socket=/var/run/munge/munge.socket.2,use_client_ids", want: AuthInfo{CredExpire: 120 * time.Second, TTL: 60 * time.Second}},
		"zero ttl":   {in: "ttl=0", err: true},
		"bad expire": {in: "cred_expire=soon", err: true},
		"negative":   {in: "cred_expire=-1", err: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseAuthInfo(tt.in)
			if (err != nil) != tt.err || (!tt.err && got != tt.want) {
				t.Errorf("ParseAuthInfo(%q) = %+v, %v", tt.in, got, err)
			}
		})
	}
}
