package slurmconf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseParams(t *testing.T) {
	tests := map[string]struct {
		in   string
		want Params
	}{
		"empty":      {in: "", want: Params{}},
		"one word":   {in: "enable_configless", want: Params{"enable_configless": ""}},
		"mixed case": {in: "Enable_Configless", want: Params{"enable_configless": ""}},
		"list": {in: "idle_on_node_suspend, enable_configless,max_dbd_msg_action=discard",
			want: Params{"idle_on_node_suspend": "", "enable_configless": "", "max_dbd_msg_action": "discard"}},
		"blank items":       {in: ",,a,,", want: Params{"a": ""}},
		"last value wins":   {in: "x=1,x=2", want: Params{"x": "2"}},
		"value with equals": {in: "k=a=b", want: Params{"k": "a=b"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseParams(tc.in)); diff != "" {
				t.Errorf("ParseParams(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestConfigless(t *testing.T) {
	tests := map[string]bool{
		"":                                      false,
		"enable_configless":                     true,
		"reconfig_on_restart,enable_configless": true,
		// A substring is not the option (xstrcasestr would take it; the
		// list's items are what slurm.conf(5) documents).
		"disable_enable_configless_x": false,
	}
	for in, want := range tests {
		c := &Config{SlurmctldParameters: in}
		if got := c.Configless(); got != want {
			t.Errorf("SlurmctldParameters=%q: Configless() = %v, want %v", in, got, want)
		}
	}
}

// FuzzParseParams checks that splitting never panics and that every key
// it keeps is lower case, trimmed and free of commas.
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{"", "enable_configless", "a=b,c", ",=,", " X = 1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for k := range ParseParams(s) {
			if strings.Contains(k, ",") {
				t.Fatalf("key %q holds a comma", k)
			}
			if k != strings.ToLower(strings.TrimSpace(k)) {
				t.Fatalf("key %q is not trimmed lower case", k)
			}
		}
	})
}
