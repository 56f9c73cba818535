package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ThawCgroups thaws every cgroup v1 freezer below drover/<cluster>: a node
// daemon killed while it was killing a job (freeze, signal, thaw) leaves
// that job's processes frozen, and a frozen process dies of SIGKILL only
// once thawed. A daemon that starts again thaws them itself when it
// adopts the job; a test cluster is not started again.
func ThawCgroups(cluster string) {
	root := filepath.Join("/sys/fs/cgroup/freezer/drover", cluster)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "freezer.state" {
			_ = os.WriteFile(p, []byte("THAWED"), 0)
		}
		return nil
	})
}

// RemoveCgroups removes the empty cgroups left below drover/<cluster> in
// every hierarchy, deepest first, once the cluster's processes are gone:
// node daemons killed by a test do not clean up after themselves, and
// runtimes make folders in hierarchies the daemons never use. A process
// killed a moment ago may still be leaving its cgroup (rmdir says busy):
// it tries again for up to two seconds.
func RemoveCgroups(cluster string) {
	for try := 0; try < 20; try++ {
		if removeCgroups(cluster) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroups makes one pass and reports whether nothing is left.
func removeCgroups(cluster string) bool {
	clean := true
	mounts, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, m := range append(mounts, "/sys/fs/cgroup") {
		root := filepath.Join(m, "drover", cluster)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
				clean = false
			}
		}
	}
	return clean
}

// RemoveCgroupRoots removes the drover folder every hierarchy holds the
// clusters' cgroups in, where it is empty: call it once no cluster runs
// (a cluster starting beside it would find its parent gone).
func RemoveCgroupRoots() {
	mounts, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, m := range append(mounts, "/sys/fs/cgroup") {
		_ = os.Remove(filepath.Join(m, "drover"))
	}
}
