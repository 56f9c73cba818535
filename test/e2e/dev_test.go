package e2e

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/testutil"
)

// devCluster is a `drover dev` process started by a test.
type devCluster struct {
	t        *testing.T
	cmd      *exec.Cmd
	env      string // the export lines it printed
	work     string
	done     chan error
	output   *bytes.Buffer
	stateDir string
}

// startDev runs `drover dev` in its own process and waits for the
// environment lines it prints once its daemons run.
func startDev(t *testing.T, stateDir string, args ...string) *devCluster {
	t.Helper()
	d := &devCluster{t: t, work: filepath.Join(stateDir, "..", "work"), done: make(chan error, 1), output: &bytes.Buffer{}, stateDir: stateDir}
	must(t, os.MkdirAll(d.work, 0o755))
	d.cmd = exec.Command(droverBin, append([]string{"dev", "--state-dir", stateDir}, args...)...)
	d.cmd.Env = append(os.Environ(), "SLURM_CONF=/nonexistent")
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := d.cmd.StdoutPipe()
	must(t, err)
	d.cmd.Stderr = d.output
	must(t, d.cmd.Start())
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.done
		}
		testutil.KillJobProcesses(filepath.Join(stateDir, "etc", "slurm.conf"))
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(stateDir, "log", "*.log"))
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				if len(data) > 4000 {
					data = data[len(data)-4000:]
				}
				t.Logf("==== %s ====\n%s", filepath.Base(l), data)
			}
			t.Logf("==== drover dev stderr ====\n%s", d.output)
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
		d.done <- d.cmd.Wait()
	}()
	var env strings.Builder
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("drover dev ended before it was ready: %s", d.output)
			}
			if strings.HasPrefix(l, "# Drover dev cluster") {
				d.env = env.String()
				go func() {
					for range lines {
					}
				}()
				return d
			}
			env.WriteString(l + "\n")
		case <-timeout:
			t.Fatalf("drover dev printed no environment within 30s: %s", d.output)
		}
	}
}

// run runs a command in a shell that evaluated the printed lines, as a
// user pointing a shell at the dev cluster does.
func (d *devCluster) run(prog string, args ...string) Result {
	d.t.Helper()
	cmd := exec.Command("bash", append([]string{"-c", `eval "$DEV_ENV" && exec "$@"`, "bash", prog}, args...)...)
	cmd.Dir = d.work
	env := []string{"DEV_ENV=" + d.env}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLURM_CONF=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return runCmd(d.t, cmd)
}

func (d *devCluster) mustRun(prog string, args ...string) string {
	d.t.Helper()
	r := d.run(prog, args...)
	if r.Code != 0 {
		d.t.Fatalf("%s %v: exit %d\nstdout: %s\nstderr: %s", prog, args, r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// waitJob polls squeue until the job has the given state.
func (d *devCluster) waitJob(id, state string) {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		if got = d.run("squeue", "-h", "-t", "all", "-j", id, "-o", "%T").Stdout; got == state+"\n" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.t.Fatalf("job %s: %q after 30s, want %s", id, got, state)
}

// stop sends SIGINT (Ctrl-C) and expects a clean exit.
func (d *devCluster) stop() {
	d.t.Helper()
	must(d.t, d.cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-d.done:
		if err != nil {
			d.t.Errorf("drover dev after SIGINT: %v\n%s", err, d.output)
		}
	case <-time.After(20 * time.Second):
		d.t.Fatalf("drover dev still running 20s after SIGINT")
	}
}

var envLinesRE = regexp.MustCompile(`^export PATH=(\S+)/bin:\$PATH\nexport SLURM_CONF=(\S+)/etc/slurm\.conf\nexport DROVER_REST_URL=http://127\.0\.0\.1:(\d+)\n$`)

// TestDevCluster runs `drover dev` as a user would: print its
// environment, start it, submit a GPU job, stop it with Ctrl-C, start it
// again and find the first run's job.
func TestDevCluster(t *testing.T) {
	t.Parallel()
	stateDir := filepath.Join(t.TempDir(), "dev")

	// --print-env on a fresh folder prepares it and prints three lines,
	// starting nothing.
	out, err := exec.Command(droverBin, "dev", "--print-env", "--state-dir", stateDir).Output()
	if err != nil {
		t.Fatalf("drover dev --print-env: %v", err)
	}
	m := envLinesRE.FindStringSubmatch(string(out))
	if m == nil || m[1] != stateDir || m[2] != stateDir {
		t.Fatalf("drover dev --print-env printed %q", out)
	}
	if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+m[3], time.Second); err == nil {
		conn.Close()
		t.Fatalf("something listens on %s after --print-env", m[3])
	}
	for _, f := range []string{"etc/slurm.conf", "bin/sbatch", "bin/squeue", "bin/scontrol"} {
		if _, err := os.Stat(filepath.Join(stateDir, f)); err != nil {
			t.Errorf("after --print-env: %v", err)
		}
	}

	d := startDev(t, stateDir, "--nodes", "2")
	if d.env != string(out) {
		t.Errorf("drover dev printed\n%s\nwant the --print-env lines\n%s", d.env, out)
	}
	// --print-env next to a running cluster reads its configuration,
	// whatever the options.
	conf, _ := os.ReadFile(filepath.Join(stateDir, "etc", "slurm.conf"))
	again, err := exec.Command(droverBin, "dev", "--print-env", "--nodes", "3", "--state-dir", stateDir).Output()
	if err != nil || string(again) != d.env {
		t.Errorf("--print-env while running: %v %q, want %q", err, again, d.env)
	}
	if now, _ := os.ReadFile(filepath.Join(stateDir, "etc", "slurm.conf")); !bytes.Equal(now, conf) {
		t.Errorf("--print-env rewrote the running cluster's slurm.conf")
	}
	// A second cluster on the same folder is refused.
	if out, err := exec.Command(droverBin, "dev", "--nodes", "1", "--state-dir", stateDir).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "another drover dev is running") {
		t.Errorf("second drover dev on the same folder: %v %q", err, out)
	}

	var nodes string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if nodes = d.run("sinfo", "-h", "-N", "-p", "gpu", "-o", "%N %t").Stdout; nodes == "n1 idle\nn2 idle\n" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if nodes != "n1 idle\nn2 idle\n" {
		t.Fatalf("sinfo on the dev cluster: %q", nodes)
	}
	node := fieldMap(d.mustRun("scontrol", "show", "node", "n1"))
	if !strings.Contains(node["CfgTRES"], "gres/gpu=8") || !regexp.MustCompile(`^gpu(:\w+)?:8(\(S:[-0-9,]+\))?$`).MatchString(node["Gres"]) {
		t.Errorf("n1: Gres=%s CfgTRES=%s, want 8 GPUs", node["Gres"], node["CfgTRES"])
	}
	r := d.run("sbatch", "--parsable", "--gres=gpu:2", "-o", "gpu.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES $SLURM_GPUS_ON_NODE")
	if r.Code != 0 {
		t.Fatalf("sbatch: %+v", r)
	}
	id := strings.TrimSpace(r.Stdout)
	d.waitJob(id, "COMPLETED")
	if got, _ := os.ReadFile(filepath.Join(d.work, "gpu.out")); string(got) != "0,1 2\n" {
		t.Errorf("GPU job wrote %q, want \"0,1 2\"", got)
	}
	// A tool that clears every SLURM_* variable before it calls the
	// commands (nested submissions do) still reaches this cluster: the
	// commands read the slurm.conf they were installed with.
	r = d.run("sbatch", "--parsable", "-o", "nested.out", "--wrap",
		`id=$SLURM_JOB_ID; env -i PATH="$PATH" HOME="$HOME" squeue -h -j $id -o "%i %T"`)
	if r.Code != 0 {
		t.Fatalf("sbatch: %+v", r)
	}
	nested := strings.TrimSpace(r.Stdout)
	d.waitJob(nested, "COMPLETED")
	if got, _ := os.ReadFile(filepath.Join(d.work, "nested.out")); string(got) != nested+" RUNNING\n" {
		t.Errorf("squeue without SLURM_* in a job wrote %q, want %q", got, nested+" RUNNING\n")
	}
	d.stop()

	// The second run keeps the ports and finds the first run's job.
	d2 := startDev(t, stateDir, "--nodes", "2")
	if d2.env != d.env {
		t.Errorf("second run printed\n%s\nwant\n%s", d2.env, d.env)
	}
	if got := d2.mustRun("squeue", "-h", "-t", "all", "-o", "%i %j %T"); !strings.Contains(got, id+" wrap COMPLETED\n") {
		t.Errorf("squeue -t all after a restart: %q, want job %s", got, id)
	}
	if f := fieldMap(d2.mustRun("scontrol", "show", "job", id)); f["JobState"] != "COMPLETED" || f["TresPerNode"] != "gres/gpu:2" {
		t.Errorf("scontrol show job %s after a restart: JobState=%s TresPerNode=%s", id, f["JobState"], f["TresPerNode"])
	}
	d2.stop()
}

// TestVersions checks --version and -V of every drop-in command, and
// `drover version`.
func TestVersions(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"sbatch", "squeue", "scancel", "sinfo", "scontrol"} {
		for _, flag := range []string{"--version", "-V"} {
			cmd := exec.Command(filepath.Join(binDir, "shims", prog), flag)
			cmd.Env = append(os.Environ(), "SLURM_CONF=/nonexistent/slurm.conf")
			out, err := cmd.Output()
			if err != nil || string(out) != "slurm 25.11.0\n" {
				t.Errorf("%s %s: %v %q", prog, flag, err, out)
			}
		}
	}
	out, err := exec.Command(droverBin, "version").Output()
	if err != nil || !regexp.MustCompile(`^drover \S+ \(Slurm compatibility 25\.11\.0\)\n$`).MatchString(string(out)) {
		t.Errorf("drover version: %v %q", err, out)
	}
}
