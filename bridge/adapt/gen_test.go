package adapt_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAdaptersAreFresh regenerates each version's adapter as `go generate
// ./bridge/...` does and fails when the committed one differs.
func TestAdaptersAreFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	for _, v := range []string{"v0042", "v0043", "v0045"} {
		out := filepath.Join(t.TempDir(), "adapter_gen.go")
		cmd := exec.Command("go", "run", "./gen", "-from", filepath.Join("..", "..", "openapi", v), "-to", filepath.Join("..", "..", "openapi", "v0044"), "-out", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gen %s: %v\n%s", v, err, b)
		}
		want, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", v, "adapter_gen.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("bridge/%s/adapter_gen.go is stale: run go generate ./bridge/...", v)
		}
	}
}
