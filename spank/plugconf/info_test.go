package plugconf

import (
	"os"
	"path/filepath"
	"testing"
)

// Cached answers from the cache for programs it knows as they are, once
// each and in order, and names the others.
func TestCached(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cache := map[string]Info{}
	entries := []Entry{{Path: a}, {Path: b}, {Path: a, Line: 3}}
	described := 0
	got, added, err := Resolve(entries, cache, func(e Entry) (Info, bool, error) {
		described++
		return Info{Entry: e, Name: filepath.Base(e.Path)}, e.Path == a, nil
	})
	if err != nil || !added || described != 2 || len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("first pass: %+v added=%v described=%d %v", got, added, described, err)
	}
	file := filepath.Join(dir, "cache.json")
	if err := WriteCache(file, cache); err != nil {
		t.Fatal(err)
	}
	known, missing := Cached(entries, file)
	if len(known) != 1 || known[0].Name != "a" || len(missing) != 1 || missing[0].Path != b {
		t.Fatalf("from the cache: known %+v, missing %+v", known, missing)
	}
	// A changed program is described again.
	if err := os.WriteFile(a, []byte("#!/bin/sh\necho changed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if known, missing := Cached(entries, file); len(known) != 0 || len(missing) != 2 {
		t.Errorf("after a change: known %+v, missing %+v", known, missing)
	}
}
