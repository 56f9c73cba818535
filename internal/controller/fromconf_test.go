package controller_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/slurmconf"
)

func TestConfigDependencyParameters(t *testing.T) {
	for params, want := range map[string]bool{
		"": false,
		"DependencyParameters=kill_invalid_depend":                          true,
		"DependencyParameters=disable_remote_singleton,KILL_INVALID_DEPEND": true,
		"DependencyParameters=max_depend_depth=10":                          false,
	} {
		path := filepath.Join(t.TempDir(), "slurm.conf")
		text := "ClusterName=c\nSlurmctldHost=h\n" + params + "\nNodeName=n1 CPUs=8\nPartitionName=p Nodes=n1 Default=YES\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := slurmconf.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := controller.ConfigFromSlurm(sc, path)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.KillInvalidDepend != want {
			t.Errorf("%q: KillInvalidDepend %v, want %v", params, cfg.KillInvalidDepend, want)
		}
	}
}

func configFrom(t *testing.T, text string) (controller.Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(path, []byte("ClusterName=c\nSlurmctldHost=h\nNodeName=n1 CPUs=8\n"+text), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := slurmconf.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return controller.ConfigFromSlurm(sc, path)
}

func TestConfigScheduling(t *testing.T) {
	cfg, err := configFrom(t, "SchedulerType=sched/builtin\nPreemptType=preempt/partition_prio\nPreemptMode=CANCEL\nPartitionName=a Nodes=n1 GraceTime=30\nPartitionName=b Nodes=n1 PreemptMode=REQUEUE\nPartitionName=c Nodes=n1 PreemptMode=off\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Scheduler != "sched/builtin" || !cfg.PreemptByPartition {
		t.Errorf("scheduler %q preempt %v", cfg.Scheduler, cfg.PreemptByPartition)
	}
	got := map[string]string{}
	for _, p := range cfg.Partitions {
		got[p.Name] = p.PreemptMode + " " + p.GraceTime.String()
	}
	want := map[string]string{"a": "CANCEL 30s", "b": "REQUEUE 0s", "c": "OFF 0s"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("partition %s: %q, want %q", k, got[k], v)
		}
	}
	for text, wantErr := range map[string]string{
		"PreemptMode=SUSPEND,GANG\nPartitionName=a Nodes=n1\n":        "PreemptMode=SUSPEND,GANG: SUSPEND is not supported (CANCEL or REQUEUE)",
		"PreemptType=preempt/foo\nPartitionName=a Nodes=n1\n":         "PreemptType=preempt/foo: not supported (preempt/none, preempt/partition_prio or preempt/qos)",
		"AccountingStorageEnforce=assocs\nPartitionName=a Nodes=n1\n": "invalid parameter for AccountingStorageEnforce: assocs",
		"SchedulerType=sched/hold\nPartitionName=a Nodes=n1\n":        "SchedulerType=sched/hold: not supported (sched/backfill or sched/builtin)",
	} {
		if _, err := configFrom(t, text); err == nil || err.Error() != wantErr {
			t.Errorf("%q: %v, want %q", text, err, wantErr)
		}
	}
}

func TestConfigTopology(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "slurm.conf")
	load := func(plugin string) (controller.Config, error) {
		write("slurm.conf", "ClusterName=c\nSlurmctldHost=h\nTopologyPlugin="+plugin+"\nNodeName=n[1-4] CPUs=8\nPartitionName=p Nodes=n[1-4]\n")
		sc, err := slurmconf.Load(conf)
		if err != nil {
			t.Fatal(err)
		}
		return controller.ConfigFromSlurm(sc, conf)
	}
	if _, err := load("topology/tree"); err == nil {
		t.Errorf("topology/tree without topology.conf accepted")
	}
	write("topology.conf", "SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[3-4]\n")
	cfg, err := load("topology/tree")
	if err != nil || cfg.Topology == nil || cfg.Topology.Leaves() != 2 {
		t.Errorf("tree: %v %v", cfg.Topology, err)
	}
	if _, err := load("topology/block"); err == nil {
		t.Errorf("topology/block over a tree accepted")
	}
	if _, err := load("topology/3d_torus"); err == nil {
		t.Errorf("topology/3d_torus accepted")
	}
}

func TestConfigPriority(t *testing.T) {
	cfg, err := configFrom(t, "PriorityWeightAge=1000\nPriorityWeightJobSize=50\nPriorityMaxAge=1-0\nPriorityFavorSmall=YES\nPartitionName=a Nodes=n1\n")
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Priority; p == nil || p.WeightAge != 1000 || p.WeightJobSize != 50 || p.MaxAge != 24*time.Hour || !p.FavorSmall {
		t.Errorf("multifactor settings: %+v", p)
	}
	if cfg, err := configFrom(t, "PriorityType=priority/basic\nPartitionName=a Nodes=n1\n"); err != nil || cfg.Priority != nil {
		t.Errorf("priority/basic: %+v %v", cfg.Priority, err)
	}
	if _, err := configFrom(t, "PriorityType=priority/fancy\nPartitionName=a Nodes=n1\n"); err == nil {
		t.Errorf("PriorityType=priority/fancy accepted")
	}
}

func TestConfigRequeueDelayAndJobComp(t *testing.T) {
	for text, want := range map[string]time.Duration{
		"":                                       121 * time.Second,
		"AuthInfo=cred_expire=30\n":              31 * time.Second,
		"AuthInfo=socket=/run/x,cred_expire=0\n": time.Second,
	} {
		cfg, err := configFrom(t, text+"PartitionName=p Nodes=n1\n")
		if err != nil {
			t.Fatal(err)
		}
		if cfg.RequeueDelay != want {
			t.Errorf("%q: requeue delay %v, want %v", text, cfg.RequeueDelay, want)
		}
		if cfg.JobComp != nil {
			t.Errorf("%q: a job completion log without JobCompType", text)
		}
	}
	for text, want := range map[string]string{
		"AuthInfo=cred_expire=soon\n": "AuthInfo=cred_expire=soon: cred_expire=soon: not a number of seconds",
		"JobCompType=jobcomp/mysql\n": "JobCompType=jobcomp/mysql: not supported (jobcomp/none or jobcomp/filetxt)",
	} {
		if _, err := configFrom(t, text+"PartitionName=p Nodes=n1\n"); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
	}
	cfg, err := configFrom(t, "JobCompType=jobcomp/filetxt\nJobCompLoc=/tmp/x\nPartitionName=p Nodes=n1\n")
	if err != nil || cfg.JobComp == nil {
		t.Errorf("jobcomp/filetxt: %v %v", cfg.JobComp, err)
	}
}
