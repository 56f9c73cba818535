package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/drovercmd"
)

// A page for drover and each of its daemons' subcommands, dated as
// asked (none for the hidden drop-in commands, which are Slurm's own),
// and completions the shells read.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	date := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if err := generate(drovercmd.Root(), dir, date); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"drover.1", "drover-controller.1", "drover-node.1", "drover-restd.1", "drover-sackd.1", "drover-keygen.1"} {
		b, err := os.ReadFile(filepath.Join(dir, "man1", page))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `.TH "DROVER" "1" "Dec 2026"`) {
			t.Errorf("%s: no dated .TH header:\n%.200s", page, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "man1", "drover-sbatch.1")); err == nil {
		t.Error("a page for the hidden sbatch command")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "man1", "drover-controller.1")); err != nil || !strings.Contains(string(b), "--conf") {
		t.Errorf("drover-controller.1 does not list --conf: %v", err)
	}
	for _, f := range []string{"drover.bash", "_drover", "drover.fish"} {
		if st, err := os.Stat(filepath.Join(dir, "completions", f)); err != nil || st.Size() == 0 {
			t.Errorf("completion %s: %v", f, err)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", filepath.Join(dir, "completions", "drover.bash")).CombinedOutput(); err != nil {
			t.Errorf("bash -n drover.bash: %v\n%s", err, out)
		}
	}
}
