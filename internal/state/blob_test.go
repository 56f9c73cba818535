package state

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBlobs stores blobs with records, across snapshots and a restart,
// then deletes some.
func TestBlobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	l := openTest(t, path, &listFSM{}, Options{SnapshotEvery: 2})
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		if _, err := l.ApplyWithBlobs(ctx, []byte("rec-"+k), []Blob{{Key: k + "/script", Data: []byte("#!/bin/sh\necho " + k)}, {Key: k + "/env", Data: []byte("X=" + k)}}); err != nil {
			t.Fatalf("ApplyWithBlobs: %v", err)
		}
	}
	if _, err := l.ApplyWithBlobs(ctx, []byte("bad"), []Blob{{Key: "", Data: []byte("x")}}); err == nil {
		t.Errorf("a blob without a key was accepted")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fsm := &listFSM{}
	l = openTest(t, path, fsm, Options{})
	got, err := l.Blob("b/script")
	if err != nil || string(got) != "#!/bin/sh\necho b" {
		t.Errorf("Blob(b/script) = %q, %v", got, err)
	}
	if err := l.DeleteBlobs([]string{"a/script", "a/env", "nosuch"}); err != nil {
		t.Fatalf("DeleteBlobs: %v", err)
	}
	if _, err := l.Blob("a/script"); !errors.Is(err, ErrNoBlob) {
		t.Errorf("deleted blob: %v, want ErrNoBlob", err)
	}
	keys, err := l.BlobKeys()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	if d := cmp.Diff([]string{"b/env", "b/script", "c/env", "c/script"}, keys); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	if entries, _ := fsm.state(); len(entries) != 3 {
		t.Errorf("%d records replayed, want 3", len(entries))
	}
}
