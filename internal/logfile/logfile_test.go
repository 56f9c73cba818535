package logfile

import (
	"os"
	"path/filepath"
	"testing"
)

// After logrotate moves the file away, writes go to the moved file until
// Reopen, then to a new file at the path.
func TestReopenAfterRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "slurmctld.log")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Write([]byte("one\n"))
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("two\n"))
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("three\n"))
	for name, want := range map[string]string{path + ".1": "one\ntwo\n", path: "three\n"} {
		got, err := os.ReadFile(name)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q (%v), want %q", name, got, err, want)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("new file mode: %v %v", st.Mode(), err)
	}
}

// A path that cannot be opened is an error at Open, and keeps the old
// file at Reopen.
func TestOpenFailures(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing", "x.log")); err == nil {
		t.Error("Open in a missing folder succeeded")
	}
	sub := filepath.Join(dir, "logs")
	os.Mkdir(sub, 0o755)
	l, err := Open(filepath.Join(sub, "x.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.RemoveAll(sub)
	if err := l.Reopen(); err == nil {
		t.Error("Reopen into a removed folder succeeded")
	}
	if _, err := l.Write([]byte("still\n")); err != nil {
		t.Errorf("write after a failed reopen: %v", err)
	}
}
