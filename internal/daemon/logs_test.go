package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/daemon"
)

// SlurmdLogFile (with %n) is where the node daemon logs; after
// logrotate moves it, SIGUSR2 opens it again at its path.
func TestDaemonLogFileReopensOnSIGUSR2(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=logs\nSlurmctldHost=localhost\nSlurmdLogFile="+dir+"/slurmd.%n.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := daemon.Settings()
	v.Set("conf", conf)
	logger, done, err := daemon.DaemonLogger(v, "SlurmdLogFile", "n7")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	path := filepath.Join(dir, "slurmd.n7.log")
	logger.Info("before rotation")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), "log file opened again") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new log file after SIGUSR2: %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	logger.Info("after rotation")
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if !strings.Contains(string(old), "before rotation") || strings.Contains(string(old), "after rotation") || !strings.Contains(string(cur), "after rotation") {
		t.Errorf("rotated file %q, new file %q", old, cur)
	}
}

// Without a log file the daemon logs to standard error, and SIGUSR2
// (logrotate's signal) does not stop it, as it would by default.
func TestDaemonLoggerWithoutFileSurvivesSIGUSR2(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=logs\nSlurmctldHost=localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := daemon.Settings()
	v.Set("conf", conf)
	_, done, err := daemon.DaemonLogger(v, "SlurmctldLogFile", "")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // still here: the signal was taken
}

// A log file that cannot be opened stops the daemon with the key named.
func TestDaemonLogFileRefused(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=logs\nSlurmctldHost=localhost\nSlurmctldLogFile="+dir+"/missing/ctl.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := daemon.Settings()
	v.Set("conf", conf)
	if _, _, err := daemon.DaemonLogger(v, "SlurmctldLogFile", ""); err == nil || !strings.Contains(err.Error(), "SlurmctldLogFile=") {
		t.Errorf("err %v, want one naming SlurmctldLogFile", err)
	}
}
