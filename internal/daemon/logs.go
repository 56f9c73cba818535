package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/logfile"
	"github.com/droverhq/drover/internal/slurmconf"
)

// DaemonLogger is a daemon's logger: to the file slurm.conf names under
// key (SlurmctldLogFile, SlurmdLogFile; %n is node's name and %h the
// host's in it, as slurmd expands them), else to standard error, in
// journald's form when that is systemd's journal (priorities, no time). SIGUSR2 opens the file again, as Slurm's
// daemons do after logrotate; without a file the signal is ignored
// rather than stopping the daemon (its default). done releases both. A
// daemon without a log file of its own (restd, sackd) passes key "".
func DaemonLogger(v *viper.Viper, key, node string) (logger *slog.Logger, done func(), err error) {
	level := v.GetString("log-level")
	path := ""
	// An unreadable slurm.conf is for the daemon to report, in its words.
	if key != "" {
		if sc, err := slurmconf.Load(ConfPath(v.GetString("conf"))); err == nil {
			path, _ = sc.Value(key)
		}
	}
	usr2 := make(chan os.Signal, 1)
	signal.Notify(usr2, syscall.SIGUSR2)
	stop := make(chan struct{})
	release := func() {
		signal.Stop(usr2)
		close(stop)
	}
	if path == "" {
		go func() {
			for {
				select {
				case <-usr2:
				case <-stop:
					return
				}
			}
		}()
		if underJournal() {
			return journalLogger(os.Stderr, parseLevel(level)), release, nil
		}
		return Logger(os.Stderr, level), release, nil
	}
	host, _ := os.Hostname()
	path = strings.NewReplacer("%n", node, "%h", strings.SplitN(host, ".", 2)[0]).Replace(path)
	f, err := logfile.Open(path)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("%s=%s: %w", key, path, err)
	}
	logger = Logger(f, level)
	go func() {
		for {
			select {
			case <-usr2:
				if err := f.Reopen(); err != nil {
					logger.Error("SIGUSR2: log file not opened again; writing on to the old one", "err", err)
					continue
				}
				logger.Info("SIGUSR2: log file opened again", "path", path)
			case <-stop:
				return
			}
		}
	}()
	return logger, func() { release(); f.Close() }, nil
}
