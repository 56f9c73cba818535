package openapi

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedIsFresh regenerates every API version into a temporary
// folder, exactly as `go generate ./openapi` does, and fails when the
// committed code differs: the generated packages must be reproducible.
func TestGeneratedIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating takes a while")
	}
	for _, v := range []struct{ spec, pkg string }{
		{"slurmrestd-v0.0.42.json", "v0042"},
		{"slurmrestd-v0.0.43.json", "v0043"},
		{"slurmrestd-v0.0.44.json", "v0044"},
		{"slurmrestd-v0.0.45.json", "v0045"},
	} {
		t.Run(v.pkg, func(t *testing.T) {
			tmp := t.TempDir()
			norm := filepath.Join(tmp, v.spec)
			run(t, "go", "run", "./normalize", "-in", filepath.Join("spec", v.spec), "-out", norm)
			out := filepath.Join(tmp, v.pkg)
			run(t, "go", "tool", "ogen", "--config", "ogen.yml", "--target", out, "--package", v.pkg, "--clean", norm)
			compareDirs(t, v.pkg, out)
		})
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
}

func compareDirs(t *testing.T, committed, fresh string) {
	t.Helper()
	want, err := filepath.Glob(filepath.Join(fresh, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	have, err := filepath.Glob(filepath.Join(committed, "*_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(have) {
		t.Fatalf("%s has %d generated files, generation gives %d: run `make generate`", committed, len(have), len(want))
	}
	for _, f := range want {
		name := filepath.Base(f)
		a, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Fatalf("%s/%s missing: run `make generate`", committed, name)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s/%s is stale: run `make generate` and commit the result", committed, name)
		}
	}
}
