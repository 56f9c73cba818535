package failover_test

import (
	"net"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/failover"
)

func FuzzParseLeader(f *testing.F) {
	for _, s := range []string{"ctl1:6817", "[::1]:6817", "CTL:1", "ctl:0", "ctl:65536", "ctl", ":6817", "a b:1", "ctl:06817", " ctl:6817 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := failover.ParseLeader(s)
		if err != nil {
			return
		}
		// What it returns is a host:port it takes again unchanged, in
		// lower case, with a port net.Dial takes.
		again, err := failover.ParseLeader(got)
		if err != nil || again != got {
			t.Fatalf("ParseLeader(%q) = %q, which reads back as %q, %v", s, got, again, err)
		}
		if got != strings.ToLower(got) {
			t.Fatalf("ParseLeader(%q) = %q: not lower case", s, got)
		}
		if _, port, err := net.SplitHostPort(got); err != nil || port == "0" {
			t.Fatalf("ParseLeader(%q) = %q: port %q, %v", s, got, port, err)
		}
	})
}

func FuzzRequestIDAndPath(f *testing.F) {
	f.Add("0123abcd", "/slurm/v0.0.44/job/submit")
	f.Add("a-b_C", "/slurm/v0.0.45/job/allocate/")
	f.Add("", "/slurm/v0.0.x/job/submit")
	f.Add(strings.Repeat("a", 65), "/slurmdb/v0.0.44/job/submit")
	f.Add("x", "/drover/v1/job/42/steps")
	f.Add("x", "/drover/v1/job/4x/steps")
	f.Fuzz(func(t *testing.T, id, path string) {
		if failover.ValidRequestID(id) {
			if len(id) == 0 || len(id) > 64 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
				t.Fatalf("ValidRequestID(%q) took it", id)
			}
		}
		if failover.IsCreation("POST", path) {
			job := strings.HasPrefix(path, "/slurm/v0.0.") && (strings.Contains(path, "/job/submit") || strings.Contains(path, "/job/allocate"))
			step := strings.HasPrefix(path, "/drover/v1/job/") && strings.Contains(path, "/steps")
			if !job && !step {
				t.Fatalf("IsCreation(POST, %q)", path)
			}
		}
		if failover.IsCreation("GET", path) {
			t.Fatalf("IsCreation(GET, %q)", path)
		}
	})
}

func TestNewRequestID(t *testing.T) {
	a, err := failover.NewRequestID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := failover.NewRequestID()
	if !failover.ValidRequestID(a) || a == b {
		t.Errorf("ids %q and %q: want two different valid ids", a, b)
	}
}
