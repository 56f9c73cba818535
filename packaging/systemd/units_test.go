// Package systemd holds the daemons' systemd units; its test checks them
// as systemd itself reads them.
package systemd

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// units are the units the packages install, with the drover
// subcommand each starts.
var units = map[string]string{
	"drover-controller.service": "controller",
	"drover-node.service":       "node",
	"drover-restd.service":      "restd",
	"drover-sackd.service":      "sackd",
}

// Each unit is one systemd reads without a word of complaint
// (systemd-analyze verify), of Type=notify as the daemons notify, with a
// watchdog they feed, restarted on failure, starting the subcommand it
// is named for from /usr/sbin/drover.
func TestUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd package)")
	}
	names, err := filepath.Glob("*.service")
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, n := range names {
		have = append(have, n)
	}
	var want []string
	for n := range units {
		want = append(want, n)
	}
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Fatalf("units %v, want %v", have, want)
	}
	dir := t.TempDir()
	for name, sub := range units {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		keys := map[string]string{}
		sc := bufio.NewScanner(strings.NewReader(string(text)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
				keys[k] = v
			}
		}
		for k, v := range map[string]string{"Type": "notify", "Restart": "on-failure", "WatchdogSec": "60"} {
			if keys[k] != v {
				t.Errorf("%s: %s=%s, want %s", name, k, keys[k], v)
			}
		}
		if f := strings.Fields(keys["ExecStart"]); len(f) < 2 || f[0] != "/usr/sbin/drover" || f[1] != sub {
			t.Errorf("%s: ExecStart=%s, want /usr/sbin/drover %s ...", name, keys["ExecStart"], sub)
		}
		// verify checks that the program exists: a stand-in here,
		// where nothing is installed.
		local := strings.ReplaceAll(string(text), "/usr/sbin/drover", "/bin/true")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(local), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(analyze, "verify", "--man=no", "./drover-controller.service", "./drover-node.service", "./drover-restd.service", "./drover-sackd.service")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
