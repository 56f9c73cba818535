package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/internal/testutil"
)

// busyboxRootfs makes a tiny root file system from the host's static
// busybox: /bin with busybox and its applets, /etc/os-release and an
// /etc/environment that sets IMAGE_VAR.
func busyboxRootfs(t *testing.T, dir string) string {
	t.Helper()
	bb := testutil.StaticBusybox()
	if bb == "" {
		t.Skip("no static busybox (Debian's busybox-static) to make an image of")
	}
	root, err := testutil.BusyboxRootfs(dir, bb,
		[]string{"sh", "cat", "echo", "id", "pwd", "hostname", "ls", "sleep", "touch", "sed"},
		map[string]string{
			"etc/os-release":  "NAME=\"Drover busybox\"\nID=busybox\n",
			"etc/environment": "IMAGE_VAR=from-image\nPATH=/bin\n",
		})
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(root, "data"), 0o755))
	return root
}

func requireRuntime(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the OCI runtime runs containers as root")
	}
	for _, p := range []string{"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"} {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	t.Skip("runc is not installed (.ci/run installs it)")
}

// TestContainers runs steps in containers with the container plugin and
// runc: a directory image used in place, a tar archive kept under a name
// for a later step, a squashfs image, bind mounts, the image's variables
// against the host's, and a refused image.
func TestContainers(t *testing.T) {
	requireRuntime(t)
	t.Parallel()
	dir := t.TempDir()
	must(t, os.Chmod(dir, 0o755))
	root := busyboxRootfs(t, dir)
	tarball := filepath.Join(dir, "image.tar")
	if out, err := exec.Command("tar", "-C", root, "-cf", tarball, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	sqsh := filepath.Join(dir, "image.sqsh")
	haveSquash := false
	if _, err := exec.LookPath("mksquashfs"); err == nil {
		if out, err := exec.Command("mksquashfs", root, sqsh, "-quiet", "-noappend").CombinedOutput(); err != nil {
			t.Fatalf("mksquashfs: %v: %s", err, out)
		}
		haveSquash = true
	}
	hostData := filepath.Join(dir, "hostdata")
	must(t, os.MkdirAll(hostData, 0o755))
	must(t, os.WriteFile(filepath.Join(hostData, "file"), []byte("from the host\n"), 0o644))

	// Two fake GPUs (NVIDIA's major number, no driver behind them).
	devDir := filepath.Join(dir, "dev")
	must(t, os.MkdirAll(devDir, 0o755))
	for i := range 2 {
		if err := unix.Mknod(filepath.Join(devDir, "nvidia"+string(rune('0'+i))), unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(i)))); err != nil {
			t.Skipf("cannot make device nodes: %v", err)
		}
	}
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, GPUs: 2, GresConf: "Name=gpu File=" + devDir + "/nvidia[0-1]\n",
		PlugStack: "required drover-spank-container\n"})

	// A directory image: the tasks see its files, not the host's.
	out := c.MustRun("", "srun", "-N2", "-n2", "--container-image="+root, "sh", "-c", `. /etc/os-release; echo "$NAME $(id -u) $SLURM_PROCID"`)
	if got := sortLines(out); got != "Drover busybox 0 0\nDrover busybox 0 1\n" {
		t.Errorf("directory image: %q", out)
	}
	// The image's variables win, unless --container-env names them.
	env := []string{"IMAGE_VAR=from-host"}
	r := c.RunEnv(env, "", "srun", "--container-image="+root, "sh", "-c", "echo $IMAGE_VAR")
	if r.Code != 0 || r.Stdout != "from-image\n" {
		t.Errorf("image variable: %+v", r)
	}
	r = c.RunEnv(env, "", "srun", "--container-image="+root, "--container-env=IMAGE_VAR", "sh", "-c", "echo $IMAGE_VAR")
	if r.Code != 0 || r.Stdout != "from-host\n" {
		t.Errorf("--container-env: %+v", r)
	}
	// Bind mounts, read-only when asked; the working folder.
	r = c.Run("", "srun", "--container-image="+root, "--container-mounts="+hostData+":/data:ro", "--container-workdir=/data",
		"sh", "-c", "pwd; cat file; touch x 2>&1 | sed 's/.*: //'")
	if r.Code != 0 || r.Stdout != "/data\nfrom the host\nRead-only file system\n" {
		t.Errorf("mounts: %+v", r)
	}

	// The step's GPU, and only it, is a device node in the container
	// (an unpacked image: the fake devices' folder is under /tmp, which
	// a directory image gets as a nodev tmpfs).
	r = c.Run("", "srun", "--gres=gpu:1", "--container-image="+tarball, "sh", "-c", "ls "+devDir+"; cat "+devDir+"/nvidia0 2>&1 | sed 's/.*: //'")
	if r.Code != 0 || r.Stdout != "nvidia0\nNo such device or address\n" {
		t.Errorf("GPU in the container: %+v", r)
	}

	// A tar archive, unpacked once and kept as "bb" for the job's next
	// step, which sees what the first one wrote.
	id := c.Submit("", "-N1", "-o", "named.out", "--wrap",
		"srun --container-image="+tarball+" --container-name=bb sh -c 'echo kept > /tmp/mark; . /etc/os-release; echo $ID'; srun --container-name=bb cat /tmp/mark")
	c.WaitState(id, "COMPLETED", 30*time.Second)
	if got := c.ReadFile("named.out"); got != "busybox\nkept\n" {
		t.Errorf("named container: %q", got)
	}

	if haveSquash {
		r = c.Run("", "srun", "--container-image="+sqsh, "cat", "/etc/os-release")
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "NAME=\"Drover busybox\"") {
			t.Errorf("squashfs image: %+v", r)
		}
	}

	// A cancelled containerised step ends at once: its containers are
	// in the step's cgroup.
	long := c.Submit("", "-N1", "--wrap", "srun --container-image="+root+" sleep 300")
	c.WaitState(long, "RUNNING", 20*time.Second)
	time.Sleep(time.Second)
	c.MustRun("", "scancel", long)
	c.WaitState(long, "CANCELLED", 20*time.Second)

	// A script on standard input whose directives use the plugin: the
	// commands' binary, which runs no plugin, reads the script, finds
	// the option and hands itself to drover, which reads the same script
	// again; the plugin checks the options at submission.
	r = c.Run("#!/bin/sh\n#SBATCH --container-image="+root+"\n#SBATCH --container-mounts=relative:/x\ntrue\n", "sbatch")
	if r.Code == 0 || !strings.Contains(r.Stderr, "paths must be absolute") {
		t.Errorf("sbatch, bad mount in a script on stdin: %+v", r)
	}
	r = c.Run("#!/bin/sh\n#SBATCH --container-image="+root+"\n#SBATCH -o stdin-script.out\n#SBATCH -J from-stdin\nsrun cat /etc/os-release\n", "sbatch")
	if r.Code != 0 {
		t.Fatalf("sbatch, script on stdin: %+v", r)
	}
	fromStdin := strings.TrimSpace(strings.TrimPrefix(r.Stdout, "Submitted batch job "))
	c.WaitState(fromStdin, "COMPLETED", 30*time.Second)
	if got := c.ReadFile("stdin-script.out"); !strings.HasPrefix(got, "NAME=\"Drover busybox\"") {
		t.Errorf("script on stdin, handed over: %q", got)
	}
	if f := fieldMap(c.MustRun("", "scontrol", "show", "job", fromStdin)); f["JobName"] != "from-stdin" {
		t.Errorf("script on stdin, handed over: JobName=%s", f["JobName"])
	}

	// Mistakes are the user's to see.
	r = c.Run("", "srun", "--container-image="+filepath.Join(dir, "missing.tar"), "true")
	if r.Code == 0 || !strings.Contains(r.Stderr, "missing.tar: no such file or directory") {
		t.Errorf("missing image: %+v", r)
	}
	r = c.Run("", "srun", "--container-image="+root, "--container-mounts=relative:/x", "true")
	if r.Code == 0 || !strings.Contains(r.Stderr, "paths must be absolute") {
		t.Errorf("bad mount: %+v", r)
	}
}

func sortLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && lines[j] < lines[j-1]; j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
