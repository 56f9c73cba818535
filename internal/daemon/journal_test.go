package daemon

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Under journald each line carries its priority and no time of its own.
func TestJournalLogger(t *testing.T) {
	var b bytes.Buffer
	l := journalLogger(&b, parseLevel("debug"))
	l.Error("broken", "job", 7)
	l.Warn("odd")
	l.Info("fine")
	l.Debug("detail")
	want := "<3>level=ERROR msg=broken job=7\n<4>level=WARN msg=odd\n<6>level=INFO msg=fine\n<7>level=DEBUG msg=detail\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// JOURNAL_STREAM counts only when it names this process's standard
// error.
func TestUnderJournal(t *testing.T) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(os.Stderr.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino))
	if !underJournal() {
		t.Error("standard error named, not under the journal")
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino+1))
	if underJournal() {
		t.Error("another stream named, under the journal")
	}
	t.Setenv("JOURNAL_STREAM", "")
	if underJournal() {
		t.Error("no JOURNAL_STREAM, under the journal")
	}
}
