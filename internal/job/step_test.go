package job

import (
	"testing"
	"time"
)

func TestUsageStats(t *testing.T) {
	var a, b UsageStats
	a.AddTask(Usage{UserCPU: 2 * time.Second, MaxRSS: 10}, "n1", 0)
	a.AddTask(Usage{UserCPU: time.Second, MaxRSS: 30, MaxDiskWrite: 5}, "n1", 1)
	b.AddTask(Usage{SystemCPU: 500 * time.Millisecond, MaxRSS: 20, MaxDiskWrite: 7}, "n2", 2)
	a.Merge(b)
	a.Merge(UsageStats{})
	if a.Tasks != 3 || a.CPU.Max != 2000 || a.CPU.MaxNode != "n1" || a.CPU.MaxTask != 0 || a.CPU.Min != 500 || a.CPU.MinNode != "n2" ||
		a.CPU.MinTask != 2 || a.CPU.Tot != 3500 || a.RSS.Max != 30 || a.RSS.MaxTask != 1 || a.Write.Tot != 12 || a.Write.Min != 0 {
		t.Fatalf("stats %+v", a)
	}
}
