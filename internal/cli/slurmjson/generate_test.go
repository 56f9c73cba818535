package slurmjson

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOrderIsFresh regenerates order_gen.go as `go generate` does and
// fails when the committed file differs.
func TestOrderIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating runs the Go toolchain")
	}
	out := filepath.Join(t.TempDir(), "order_gen.go")
	cmd := exec.Command("go", "run", "genorder.go", "-spec", "../../../openapi/spec/slurmrestd-v0.0.44.json", "-out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go run genorder.go: %v\n%s", err, stderr.String())
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("order_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Fatal("order_gen.go is stale: run `make generate`")
	}
}
