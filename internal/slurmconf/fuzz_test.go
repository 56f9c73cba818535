package slurmconf

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fuzzFiles stands in for the file system during fuzzing, so that Include
// lines never reach real files (/dev/stdin would block).
var fuzzFiles = map[string]string{
	"nodes.conf": "NodeName=x[1-2] CPUs=2\n",
	"bad.conf":   "NodeName=y[\n",
}

// fuzzLimits keep each input fast; the limit checks are the same code.
var fuzzLimits = limits{nodes: 1 << 12, members: 1 << 14}

func fuzzRead(path string) ([]byte, error) {
	if s, ok := fuzzFiles[path]; ok {
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
}

// FuzzParse checks that parsing never panics, that every error names its
// file and a line (or is one of the whole-configuration errors), and that
// an accepted configuration keeps its invariants: nodes are unique, their
// CPU counts agree with their topology, partitions name configured nodes
// once each, and parsing is deterministic.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/slurm.conf.22.05", "testdata/slurm.conf.26.11"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	for _, s := range []string{
		header + "Include nodes.conf\nPartitionName=p Nodes=ALL Default=YES\n",
		header + "Include bad.conf\n",
		header + "NodeName=DEFAULT CPUs=8 Sockets=2\nNodeName=n[01-10] CoresPerSocket=2 ThreadsPerCore=2 Port=[7001-7010]\n",
		header + "NodeSet=s Feature=f\nNodeName=a Features=f\nPartitionName=p Nodes=s MaxTime=1-00:00 OverSubscribe=YES:2\n",
		header + "SchedulerParameters=a,\\\nb # comment\nReason=\"x y\"\n",
		"ControlMachine=a\nClusterName=b\nDownNodes=a State=DRAIN Reason=x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := parseWith([]byte(text), "slurm.conf", fuzzRead, fuzzLimits)
		if err != nil {
			checkErrors(t, text, err)
			return
		}
		checkConfig(t, c)
		again, err := parseWith([]byte(text), "slurm.conf", fuzzRead, fuzzLimits)
		if err != nil {
			t.Fatalf("second parse failed: %v", err)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("parse is not deterministic (-first +second):\n%s", diff)
		}
	})
}

func checkErrors(t *testing.T, text string, err error) {
	t.Helper()
	var errs Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		t.Fatalf("error %T is not a non-empty Errors: %v", err, err)
	}
	lines := bytes.Count([]byte(text), []byte("\n")) + 1
	for _, e := range errs {
		if e.File == "" || e.Err == nil {
			t.Fatalf("error without file or cause: %#v", e)
		}
		if e.Line == 0 {
			msg := e.Err.Error()
			if msg != "ClusterName needs to be specified" && msg != "No SlurmctldHost defined." {
				t.Fatalf("error without a line: %v", e)
			}
			continue
		}
		if e.File == "slurm.conf" && e.Line > lines {
			t.Fatalf("error at line %d of a %d-line file: %v", e.Line, lines, e)
		}
	}
}

func checkConfig(t *testing.T, c *Config) {
	t.Helper()
	if c.ClusterName == "" || c.ClusterName != strings.ToLower(c.ClusterName) || len(c.SlurmctldHosts) == 0 {
		t.Fatalf("accepted without a cluster name or controller: %q %v", c.ClusterName, c.SlurmctldHosts)
	}
	names := make(map[string]bool, len(c.Nodes))
	for _, n := range c.Nodes {
		if n.Name == "" || names[n.Name] {
			t.Fatalf("empty or duplicated node name %q", n.Name)
		}
		names[n.Name] = true
		s, co, th := uint32(n.Sockets), uint32(n.CoresPerSocket), uint32(n.ThreadsPerCore)
		if cpus := uint32(n.CPUs); cpus != s && cpus != s*co && cpus != s*co*th {
			t.Fatalf("node %s: CPUs=%d fits no Sockets=%d CoresPerSocket=%d ThreadsPerCore=%d", n.Name, n.CPUs, s, co, th)
		}
		if n.Sockets < n.Boards || n.Boards == 0 || n.CoresPerSocket == 0 || n.ThreadsPerCore == 0 || n.Port == 0 || n.Line == 0 {
			t.Fatalf("node %s: impossible values %+v", n.Name, n)
		}
	}
	for _, p := range c.Partitions {
		seen := make(map[string]bool)
		for _, n := range p.Nodes {
			if !names[n] || seen[n] {
				t.Fatalf("partition %s: unknown or repeated node %q", p.Name, n)
			}
			seen[n] = true
		}
	}
	for _, w := range c.Warnings {
		if w.File == "" || w.Line == 0 {
			t.Fatalf("warning without a place: %+v", w)
		}
	}
}

func FuzzParseCgroupConf(f *testing.F) {
	f.Add([]byte("CgroupPlugin=autodetect\nConstrainDevices=yes\nConstrainRAMSpace=no # comment\n"))
	f.Add([]byte("ConstrainDevices=maybe\n"))
	f.Add([]byte("ConstrainDevices\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCgroupConf(data, "cgroup.conf")
		if err == nil && c.Other == nil {
			t.Fatal("nil Other on success")
		}
	})
}

func FuzzParseLicenses(f *testing.F) {
	f.Add("fluent:10,matlab*2,sas")
	f.Add(":3,a:b")
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := ParseLicenses(s)
		if err != nil {
			return
		}
		for _, l := range ls {
			if l.Name == "" {
				t.Fatal("empty name")
			}
		}
	})
}

func FuzzParseNodeLine(f *testing.F) {
	for _, s := range []string{"NodeName=n9 CPUs=4 State=FUTURE", "NodeName=d[1-3] CPUs=8 RealMemory=1000 Gres=gpu:2 Feature=f1 State=CLOUD", "NodeName=x\nPartitionName=p", "CPUs=4", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		nodes, err := ParseNodeLine(line)
		if err == nil && len(nodes) == 0 {
			t.Fatalf("%q: no error and no node", line)
		}
	})
}

func FuzzParseAuthInfo(f *testing.F) {
	for _, s := range []string{"", "cred_expire=1", "ttl=30,cred_expire=300", "ttl=0", "socket=/run/munge,ttl=x", "TTL=5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAuthInfo(s)
		if err != nil {
			return
		}
		if a.TTL < time.Second || a.CredExpire < 0 {
			t.Fatalf("ParseAuthInfo(%q) = %+v", s, a)
		}
	})
}

func FuzzParsePortRange(f *testing.F) {
	for _, s := range []string{"", "0-0", "60001-63000", "5-4", "1-65536", "x-y", "80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lo, hi, err := ParsePortRange(s)
		if err == nil && (lo < 0 || hi > 65535 || lo > hi) {
			t.Fatalf("ParsePortRange(%q) = %d, %d", s, lo, hi)
		}
	})
}
