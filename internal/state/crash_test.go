package state

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// crashHelperEnv names the file TestHelperProcess appends to; its presence
// is what turns the test into the child half of TestCrashSafety.
const crashHelperEnv = "DROVER_STATE_CRASH_HELPER"

// crashRoundEnv tags the child's records so every round's are distinct.
const crashRoundEnv = "DROVER_STATE_CRASH_ROUND"

// crashStageEnv, when set, names the step of a snapshot (see
// snapshotStage) at which the child stops, announces it and waits for the
// kill.
const crashStageEnv = "DROVER_STATE_CRASH_STAGE"

// crashFSM is listFSM with snapshots padded by whitespace, which Restore
// skips: every snapshot writes past the log's write buffer, so a kill can
// land with a partial file on disk, and random kills land in a snapshot
// more often.
type crashFSM struct {
	*listFSM
}

func (f crashFSM) Snapshot(w io.Writer) error {
	if _, err := w.Write(bytes.Repeat([]byte("\n"), 2*snapshotBufSize)); err != nil {
		return err
	}
	snapshotStage("writing")
	return f.listFSM.Snapshot(w)
}

// TestHelperProcess is the child of TestCrashSafety, not a test: it appends
// records from 16 goroutines until it is killed, printing "index record" for
// each one Apply acknowledged.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(crashHelperEnv)
	if path == "" {
		t.Skip("helper process for TestCrashSafety")
	}
	round := os.Getenv(crashRoundEnv)
	if stop := os.Getenv(crashStageEnv); stop != "" {
		testHookSnapshot = func(stage string) {
			if stage == stop {
				fmt.Fprintf(os.Stdout, "stage %s\n", stage)
				select {}
			}
		}
	}
	// A small SnapshotEvery puts snapshots (and truncations) in the window
	// the kill can land in.
	l, err := Open(path, crashFSM{&listFSM{}}, Options{SnapshotEvery: 97})
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper: %v\n", err)
		os.Exit(2)
	}
	// Never outlive a parent that failed to kill us.
	time.AfterFunc(30*time.Second, func() { os.Exit(3) })
	var out sync.Mutex
	for g := range 16 {
		go func() {
			for i := 0; ; i++ {
				record := fmt.Sprintf("r%s-g%d-%d", round, g, i)
				res, err := l.Apply(context.Background(), []byte(record))
				if err != nil {
					fmt.Fprintf(os.Stderr, "helper: Apply: %v\n", err)
					os.Exit(2)
				}
				// One write per line: a line on the pipe means acknowledged.
				out.Lock()
				fmt.Fprintf(os.Stdout, "ack %d %s\n", res.(entry).Index, record)
				out.Unlock()
			}
		}()
	}
	select {}
}

func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path := filepath.Join(t.TempDir(), "state.db")
	// Each child recovers what the previous one left after its SIGKILL,
	// then is killed in turn: after some acknowledgements, wherever the
	// writer is then, or at a given step of a snapshot.
	rounds := []struct {
		killAfter int
		stage     string
	}{
		{killAfter: 150},
		{stage: "writing"}, // a partial temporary file
		{killAfter: 250},
		{stage: "written"}, // a complete temporary file
		{stage: "renamed"}, // a complete snapshot file no commit names
		{killAfter: 350},
		{stage: "committed"}, // the superseded file not yet deleted
		{killAfter: 450},
		{killAfter: 550},
	}
	acked := map[uint64]string{}
	for round, r := range rounds {
		got := runAndKill(t, path, round, r.killAfter, r.stage)
		if len(got) < r.killAfter {
			t.Fatalf("round %d: child acknowledged only %d records", round, len(got))
		}
		if r.stage != "" {
			checkKilledAt(t, path, r.stage)
		}
		for index, record := range got {
			if prev, ok := acked[index]; ok {
				t.Fatalf("round %d: index %d acknowledged for %q and earlier for %q", round, index, record, prev)
			}
			acked[index] = record
		}
	}

	fsm := &listFSM{}
	l := openTest(t, path, fsm, Options{})
	entries, violation := fsm.state()
	if violation != "" {
		t.Fatalf("FSM contract violated during recovery: %s", violation)
	}
	seen := map[string]uint64{}
	for _, e := range entries {
		if prev, ok := seen[e.Data]; ok {
			t.Errorf("record %q applied twice, at %d and %d", e.Data, prev, e.Index)
		}
		seen[e.Data] = e.Index
	}
	for index, record := range acked {
		if index == 0 || index > uint64(len(entries)) {
			t.Errorf("acknowledged record %q at index %d is missing (log ends at %d)", record, index, len(entries))
			continue
		}
		if got := entries[index-1].Data; got != record {
			t.Errorf("index %d holds %q, but %q was acknowledged there", index, got, record)
		}
	}
	// Recovery cleared what the crashes left: only the file the state
	// names remains.
	var want []string
	if st := l.Stats(); st.SnapshotIndex > 0 {
		want = []string{snapshotName(st.SnapshotIndex)}
	}
	if diff := cmp.Diff(want, snapshotFiles(t, path)); diff != "" {
		t.Errorf("snapshot folder after recovery (-want +got):\n%s", diff)
	}
	t.Logf("%d kills, %d records acknowledged; %d recovered (snapshot at %d, %d replayed)",
		len(rounds), len(acked), len(entries), l.Stats().SnapshotIndex, l.Stats().Replayed)
}

// checkKilledAt checks that the snapshot folder holds what a kill at stage
// leaves, beside the file the state names: proof that the kill landed there.
func checkKilledAt(t *testing.T, path, stage string) {
	t.Helper()
	_, snap, _ := storedMeta(t, path)
	var tmp, other int
	for _, name := range snapshotFiles(t, path) {
		switch {
		case strings.HasSuffix(name, tmpSuffix):
			tmp++
		case name != snap.file.Name:
			other++
		}
	}
	want := map[string][2]int{"writing": {1, 0}, "written": {1, 0}, "renamed": {0, 1}, "committed": {0, 1}}[stage]
	if [2]int{tmp, other} != want {
		t.Fatalf("killed at %q: %d temporary and %d other snapshot files beside %q (%v), want %d and %d",
			stage, tmp, other, snap.file.Name, snapshotFiles(t, path), want[0], want[1])
	}
}

// runAndKill starts the helper on path, SIGKILLs it once it has acknowledged
// killAfter records or, when stage is set, once it stops at that step of a
// snapshot, and returns every acknowledgement it printed.
func runAndKill(t *testing.T, path string, round, killAfter int, stage string) map[uint64]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+path, fmt.Sprintf("%s=%d", crashRoundEnv, round), crashStageEnv+"="+stage)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()

	acks := map[uint64]string{}
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		if stage != "" && scanner.Text() == "stage "+stage && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("kill helper: %v", err)
			}
			killed = true
			continue
		}
		var index uint64
		var record string
		if _, err := fmt.Sscanf(scanner.Text(), "ack %d %s", &index, &record); err != nil {
			continue // test framework chatter
		}
		acks[index] = record
		if stage == "" && len(acks) == killAfter && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("kill helper: %v", err)
			}
			killed = true
		}
	}
	// Lines written before the kill are still in the pipe: the loop above
	// reads them all before EOF, so late acknowledgements are checked too.
	err = cmd.Wait()
	if !killed {
		t.Fatalf("round %d: helper exited before it was killed: %v\n%s", round, err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: helper ended with %v, not SIGKILL\n%s", round, err, stderr.String())
	}
	return acks
}
