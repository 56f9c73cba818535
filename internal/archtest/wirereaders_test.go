package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// wireReaders are the command files that still import the generated
// wire types, beside the read model (internal/cli/readmodel), which is
// where a command reads a record. The list may only shrink. What
// legitimately stays builds request bodies, prints --json/--yaml from the
// wire records themselves (sinfo.go loads the answers its --json dumps),
// or is the client plumbing (clienv, connect, jobstream, clitest,
// wireval); every command reads its records through the model.
var wireReaders = []string{
	"internal/cli/alloc/alloc.go",
	"internal/cli/clienv/api.go",
	"internal/cli/clitest/clitest.go",
	"internal/cli/clusters/clusters.go",
	"internal/cli/connect/connect.go",
	"internal/cli/jobopts/jobdesc.go",
	"internal/cli/jobstream/jobstream.go",
	"internal/cli/sacct/json.go",
	"internal/cli/sacctmgr/assoc.go",
	"internal/cli/sacctmgr/rest.go",
	"internal/cli/salloc/salloc.go",
	"internal/cli/sbatch/sbatch.go",
	"internal/cli/sbatch/submit.go",
	"internal/cli/scancel/scancel.go",
	"internal/cli/scancel/select.go",
	"internal/cli/scontrol/doc.go",
	"internal/cli/scontrol/hold.go",
	"internal/cli/scontrol/node_update.go",
	"internal/cli/scontrol/nodes_dynamic.go",
	"internal/cli/scontrol/partition_update.go",
	"internal/cli/scontrol/reservation_update.go",
	"internal/cli/scontrol/rest.go",
	"internal/cli/scontrol/top.go",
	"internal/cli/scontrol/update.go",
	"internal/cli/sdiag/json.go",
	"internal/cli/sinfo/json.go",
	"internal/cli/sinfo/sinfo.go",
	"internal/cli/slurmjson/meta.go",
	"internal/cli/slurmjson/slurmjson.go",
	"internal/cli/squeue/json.go",
	"internal/cli/squeue/squeue.go",
	"internal/cli/srun/het.go",
	"internal/cli/srun/srun.go",
	"internal/cli/sshare/json.go",
	"internal/cli/wireval/wireval.go",
}

// The commands read wire records through the read model: no other file
// of internal/cli imports openapi/v0*, and the list of those that still
// do does not grow.
func TestCommandsReadThroughTheModel(t *testing.T) {
	watchSources(t)
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSpace(string(out))
	allowed := map[string]bool{}
	for _, f := range wireReaders {
		allowed[f] = true
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(filepath.Join(root, "internal/cli"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module+"openapi/v0") {
				continue
			}
			seen[rel] = true
			if !allowed[rel] && !under(filepath.ToSlash(filepath.Dir(rel)), "internal/cli/readmodel") {
				t.Errorf("%s imports %s: read the record through internal/cli/readmodel", rel, strings.TrimPrefix(p, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range wireReaders {
		if !seen[f] {
			t.Errorf("%s no longer imports the wire types: take it off wireReaders", f)
		}
	}
}
