package archtest

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/droverhq/drover/"

// pkg is what `go list -json` says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// packages lists the module's packages with their imports and
// dependencies.
func packages(t *testing.T) map[string]pkg {
	t.Helper()
	watchSources(t)
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	all := map[string]pkg{}
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		all[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return all
}

// under reports whether path is one of the prefixes or below one.
func under(path string, prefixes ...string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// Wire types stop at the bridges (server side) and the commands' room
// (client side), with the HTTP front that mounts the bridges: the
// controller, scheduler, state and node runtime see domain types only.
func TestWireTypesStayAtTheEdges(t *testing.T) {
	allowed := []string{"openapi", "bridge", "internal/restapi", "internal/cli", "test"}
	for path, p := range packages(t) {
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module+"openapi/v0") {
				continue
			}
			if !under(path, allowed...) {
				t.Errorf("%s imports the wire types of %s", path, strings.TrimPrefix(imp, module))
			}
		}
	}
}

// The scheduler and the domain model are pure: snapshot and clock in,
// plan out. None of them reaches the network, the disk, other processes
// or the logs, directly or through what it imports.
func TestPurePackagesDoNoIO(t *testing.T) {
	pure := []string{
		"internal/sched", "internal/job", "internal/node", "internal/partition", "internal/assoc",
		"internal/reservation", "internal/depend", "internal/step/layout", "internal/acctpolicy",
		"internal/acctrec", "internal/cstrconv",
	}
	// Packages whose use means I/O. (fmt and errors link os; that is
	// not I/O of the package's own.)
	ioPkgs := []string{"net", "net/http", "os/exec", "database/sql", "log", "log/slog", "go.etcd.io/bbolt",
		"modernc.org/sqlite", "github.com/jackc/pgx/v5", "github.com/containerd/cgroups/v3"}
	direct := []string{"os", "io/fs", "syscall", "path/filepath", "time/tzdata"}
	all := packages(t)
	for _, path := range pure {
		p, ok := all[path]
		if !ok {
			t.Errorf("no package %s", path)
			continue
		}
		for _, d := range p.Deps {
			if slices.Contains(ioPkgs, d) {
				t.Errorf("%s links %s", path, d)
			}
			if rel, ok := strings.CutPrefix(d, module); ok && !under(rel, pure...) && !under(rel, "internal/slurmerr", "internal/hostlist", "internal/topology", "gres") {
				t.Errorf("%s links %s, which is not one of the pure packages", path, rel)
			}
		}
		for _, imp := range p.Imports {
			if slices.Contains(direct, imp) {
				t.Errorf("%s imports %s", path, imp)
			}
		}
	}
}

// The controller's state machine does no I/O and knows nothing of the
// daemons: no network, no HTTP, no node protocol, no state log, no
// accounting store, no logs; the controller proposes commands to it and
// reads it. It links the pure packages and a few more whose code it runs
// does no I/O: the parsers arrayspec and timefmt, and priority (for the
// usage it keeps), which links slurmconf for priority.FromSlurm alone;
// that is why it is not in the pure set above.
func TestStateMachineDoesNoIO(t *testing.T) {
	const path = "internal/controller/ctlstate"
	ioPkgs := []string{"net", "net/http", "os/exec", "database/sql", "log", "log/slog", "go.etcd.io/bbolt",
		"modernc.org/sqlite", "github.com/jackc/pgx/v5", "github.com/containerd/cgroups/v3"}
	direct := []string{"os", "io/fs", "syscall", "path/filepath", "time/tzdata"}
	allowed := []string{
		path, "internal/job", "internal/node", "internal/partition", "internal/assoc", "internal/reservation",
		"internal/acctpolicy", "internal/acctrec", "internal/slurmerr", "internal/hostlist",
		"internal/arrayspec", "internal/timefmt", "internal/priority", "internal/slurmconf",
	}
	p, ok := packages(t)[path]
	if !ok {
		t.Fatalf("no package %s", path)
	}
	for _, d := range p.Deps {
		if slices.Contains(ioPkgs, d) {
			t.Errorf("%s links %s", path, d)
		}
		if rel, ok := strings.CutPrefix(d, module); ok && !slices.Contains(allowed, rel) {
			t.Errorf("%s links %s, which the state machine has no use for", path, rel)
		}
	}
	for _, imp := range p.Imports {
		if slices.Contains(direct, imp) {
			t.Errorf("%s imports %s", path, imp)
		}
	}
}

// The controller's side of the node protocol (nodeapi) reads, authenticates
// and answers the node daemons' messages, and knows the controller only
// through its own interface of one method per message: the node registry,
// dispatch and the controller's lock stay in the controller, and a message
// changes the state only through the controller's methods. So it links
// neither the controller nor its state machine, the scheduler, the state
// log, the accounting store, nor the REST front and the bridges that mount
// it.
func TestNodeAPILinksNoController(t *testing.T) {
	const path = "internal/controller/nodeapi"
	forbidden := []string{
		"internal/controller", "internal/sched", "internal/state", "internal/acctdb", "internal/restapi",
		"bridge", "openapi",
	}
	p, ok := packages(t)[path]
	if !ok {
		t.Fatalf("no package %s", path)
	}
	for _, d := range p.Deps {
		if rel, ok := strings.CutPrefix(d, module); ok && under(rel, forbidden...) && !under(rel, path) {
			t.Errorf("%s links %s", path, rel)
		}
	}
}

// The commands link no server code: none of the daemons' packages, the
// state store, the accounting store, the REST server or the bridges, nor
// the libraries only the daemons use (cmd/commands' TestNoServerCode
// checks the programs; this checks each command's package).
func TestCommandsLinkNoServerCode(t *testing.T) {
	server := []string{
		"internal/controller", "internal/sched", "internal/state", "internal/acctdb", "internal/restapi",
		"internal/restd", "internal/nodeagent", "internal/daemon", "internal/proctrack", "internal/devcluster",
		"internal/drovercmd",
		"plugins/host", "plugins/protocol/rpc",
	}
	libraries := []string{"github.com/containerd/cgroups", "go.etcd.io/bbolt", "modernc.org/sqlite",
		"github.com/jackc/pgx", "github.com/hashicorp/go-plugin", "google.golang.org/grpc"}
	// plugopts/hosted hands the commands inside drover the plugin host.
	exempt := []string{"internal/cli/plugopts/hosted", "internal/cli/clitest"}
	n := 0
	for path, p := range packages(t) {
		if !under(path, "internal/cli") || under(path, exempt...) {
			continue
		}
		n++
		for _, d := range p.Deps {
			if rel, ok := strings.CutPrefix(d, module); ok {
				if under(rel, server...) || (under(rel, "bridge") && !under(rel, "bridge/v0044/limitwire")) {
					t.Errorf("%s links %s", path, rel)
				}
				continue
			}
			if under(d, libraries...) {
				t.Errorf("%s links %s", path, d)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d command packages found", n)
	}
}

// watchSources stats every Go file of the module: go test caches a
// test's result against the files the test itself looked at, and the
// import graph comes from a go list it runs, whose reads it cannot see.
func watchSources(t *testing.T) {
	t.Helper()
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(strings.TrimSpace(string(root)), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != strings.TrimSpace(string(root)) {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
