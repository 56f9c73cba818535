package container

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/slurmconf"
)

// Runtime is how containers are run: oci.conf's RunTimeRun and
// RunTimeDelete command patterns.
type Runtime struct {
	Run    string
	Delete string
	// builtin names the runtime of DefaultRuntime, whose state folder
	// Drover knows ("" for oci.conf's commands).
	builtin string
}

// Leftover reports whether a task's container may still exist after its
// run command ended, so that Delete is worth running: always for
// oci.conf's commands; for the built-in ones only when the runtime's
// state for it is still there (run removes it when the task ends by
// itself, and a runtime's delete costs tens of milliseconds).
func (r Runtime) Leftover(spool string, job, step uint32, task int) bool {
	if r.builtin == "" {
		return true
	}
	_, err := os.Stat(filepath.Join(spool, "containers", r.builtin, fmt.Sprintf("drover-%d.%d.%d", job, step, task)))
	return err == nil
}

// DefaultRuntime is the runtime named by the plugin's runtime= argument,
// with its state under the node's spool.
func DefaultRuntime(name string) (Runtime, error) {
	switch name {
	case "", "runc", "crun":
	default:
		return Runtime{}, fmt.Errorf("runtime=%s: want runc or crun, or give oci_conf=", name)
	}
	if name == "" {
		name = "runc"
	}
	path := runtimePath(name)
	root := shellQuote(path) + " --root %m/containers/" + name
	return Runtime{
		Run:     root + " run --bundle %b drover-%j.%s.%t",
		Delete:  root + " delete --force drover-%j.%s.%t",
		builtin: name,
	}, nil
}

// runtimePath finds a runtime program where root's PATH has it: the
// task's PATH, under which the command runs, may lack the sbin folders.
func runtimePath(name string) string {
	for _, dir := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// LoadOCIConf reads oci.conf.
func LoadOCIConf(path string) (Runtime, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Runtime{}, fmt.Errorf("oci.conf: %w", err)
	}
	return ParseOCIConf(data, path)
}

// ParseOCIConf reads the keys of Slurm's oci.conf that say how to run a
// container: RunTimeRun (required here: the create/start/kill style of
// RunTimeCreate... is not supported) and RunTimeDelete. Other keys are
// accepted and ignored.
func ParseOCIConf(data []byte, filename string) (Runtime, error) {
	pairs, err := slurmconf.ParsePairs(data, filename)
	if err != nil {
		return Runtime{}, err
	}
	var r Runtime
	for _, p := range pairs {
		switch strings.ToLower(p.Key) {
		case "runtimerun":
			r.Run = p.Value
		case "runtimedelete":
			r.Delete = p.Value
		}
	}
	if strings.TrimSpace(r.Run) == "" {
		return Runtime{}, fmt.Errorf("%s: RunTimeRun is required", filename)
	}
	return r, nil
}

// Values fill a pattern's % fields, as oci.conf names them.
type Values struct {
	Bundle, Rootfs, SpoolDir, Node, User string
	JobID, StepID, UID                   uint32
	TaskID                               int
}

// Expand fills pattern's fields: %b bundle, %r rootfs, %m spool folder,
// %n node, %u user, %U uid, %j job, %s step, %t task, %% a percent sign.
// Every value is quoted for the shell that runs the command; an unknown
// field is an error.
func Expand(pattern string, v Values) (string, error) {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(pattern) {
			return "", fmt.Errorf("%q: lone %% at the end", pattern)
		}
		i++
		switch pattern[i] {
		case '%':
			b.WriteByte('%')
		case 'b':
			b.WriteString(shellQuote(v.Bundle))
		case 'r':
			b.WriteString(shellQuote(v.Rootfs))
		case 'm':
			b.WriteString(shellQuote(v.SpoolDir))
		case 'n':
			b.WriteString(shellQuote(v.Node))
		case 'u':
			b.WriteString(shellQuote(v.User))
		case 'U':
			b.WriteString(strconv.FormatUint(uint64(v.UID), 10))
		case 'j':
			b.WriteString(strconv.FormatUint(uint64(v.JobID), 10))
		case 's':
			b.WriteString(strconv.FormatUint(uint64(v.StepID), 10))
		case 't':
			b.WriteString(strconv.Itoa(v.TaskID))
		default:
			return "", fmt.Errorf("%q: unknown field %%%c", pattern, pattern[i])
		}
	}
	return b.String(), nil
}

// shellQuote quotes s for /bin/sh unless it is plainly safe.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+=:,@", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
