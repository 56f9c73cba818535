package partition

import "testing"

func TestBillingWeights(t *testing.T) {
	w, err := ParseBillingWeights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
	if err != nil {
		t.Fatal(err)
	}
	// 4 CPUs, 8 GB, 2 GPUs: 4 + 2 + 4.
	if got := w.Billing(map[string]uint64{"cpu": 4, "mem": 8192, "gres/gpu": 2}, false); got != 10 {
		t.Errorf("billing %d, want 10", got)
	}
	if got := w.Billing(map[string]uint64{"cpu": 4, "mem": 8192, "gres/gpu": 2}, true); got != 4 {
		t.Errorf("MAX_TRES billing %d, want 4", got)
	}
	if got := BillingWeights(nil).Billing(map[string]uint64{"cpu": 3}, false); got != 3 {
		t.Errorf("no weights: %d", got)
	}
	for _, bad := range []string{"cpu", "cpu=x", "=1", "mem=-1"} {
		if _, err := ParseBillingWeights(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseBillingWeights(f *testing.F) {
	f.Add("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
	f.Add("mem=1K")
	f.Fuzz(func(t *testing.T, s string) {
		if w, err := ParseBillingWeights(s); err == nil {
			w.Billing(map[string]uint64{"cpu": 1, "mem": 1 << 20}, false)
		}
	})
}
