package nodeagent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// runScripts writes and runs scripts from several goroutines at once, as
// concurrent job launches do, and counts the runs that failed because the
// script was busy (ETXTBSY) when executed.
func runScripts(t *testing.T, write func(path string, data []byte) error) (busy int) {
	t.Helper()
	dir := t.TempDir()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				path := filepath.Join(dir, fmt.Sprintf("s%d-%d", g, i))
				if err := write(path, []byte("#!/bin/sh\nexit 0\n")); err != nil {
					t.Error(err)
					return
				}
				err := exec.Command(path).Run()
				if errors.Is(err, syscall.ETXTBSY) {
					mu.Lock()
					busy++
					mu.Unlock()
				} else if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	return busy
}

// TestWriteExecutableNeverBusy checks that scripts written with
// writeExecutable are never busy when run, while launches fork in
// parallel. Without the fork lock the same load hits ETXTBSY on most
// machines (it is timing-dependent, so that half is only logged).
func TestWriteExecutableNeverBusy(t *testing.T) {
	if busy := runScripts(t, writeExecutable); busy > 0 {
		t.Fatalf("%d of 320 scripts were busy when executed", busy)
	}
	plain := func(path string, data []byte) error { return os.WriteFile(path, data, 0o700) }
	t.Logf("without the fork lock: %d of 320 scripts busy", runScripts(t, plain))
}
