package daemon

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
)

// underJournal reports whether standard error is systemd's journal
// stream (JOURNAL_STREAM names its device and inode), as sd_journal's
// documentation has services check before they format for it.
func underJournal() bool {
	want := os.Getenv("JOURNAL_STREAM")
	if want == "" {
		return false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(os.Stderr.Fd()), &st); err != nil {
		return false
	}
	return want == fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

// journalLogger writes to w as journald reads a service's output: each
// line led by its syslog priority ("<3>" an error, "<4>" a warning, "<6>"
// information, "<7>" debugging), so that journalctl -p filters them, and
// no time of its own (journald stamps each line).
func journalLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(&priorityWriter{w: w}, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// priorityWriter puts the syslog priority of the level each record
// starts with ("level=WARN ...") before it. The text handler writes a
// record in one call.
type priorityWriter struct{ w io.Writer }

func (p *priorityWriter) Write(b []byte) (int, error) {
	prio := "<6>"
	switch {
	case bytes.HasPrefix(b, []byte("level=ERROR")):
		prio = "<3>"
	case bytes.HasPrefix(b, []byte("level=WARN")):
		prio = "<4>"
	case bytes.HasPrefix(b, []byte("level=DEBUG")):
		prio = "<7>"
	}
	if _, err := io.WriteString(p.w, prio); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
