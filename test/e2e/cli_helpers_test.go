package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// referenceDir locates the captures of real Slurm 25.11 (see their
// README) as internal/cli/clitest does: $DROVER_REFERENCE_DIR, else
// shared/reference beside the repository.
func referenceDir() string {
	if d := os.Getenv("DROVER_REFERENCE_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "reference")
}

// reference returns a CLI capture's stdout, skipping the comparison when
// the captures are not on this machine.
func reference(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(referenceDir(), "cli", name+".out"))
	if err != nil {
		t.Skipf("reference capture %s not available: %v", name, err)
	}
	return string(data)
}

// firstLine is the text up to the first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// WaitOutput polls a file under the work folder until its content is want.
func (c *Cluster) WaitOutput(name, want string, timeout time.Duration) {
	c.t.Helper()
	path := name
	if !filepath.IsAbs(name) {
		path = filepath.Join(c.WorkDir, name)
	}
	deadline := time.Now().Add(timeout)
	var got string
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(path)
		if got = string(data); err == nil && got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("%s: %q after %v, want %q", path, got, timeout, want)
}

// WaitRun polls a command until its stdout is want.
func (c *Cluster) WaitRun(want string, timeout time.Duration, prog string, args ...string) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	var r Result
	for time.Now().Before(deadline) {
		if r = c.Run("", prog, args...); r.Code == 0 && r.Stdout == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("%s %q: exit %d stdout %q stderr %q after %v, want %q", prog, args, r.Code, r.Stdout, r.Stderr, timeout, want)
}

// WaitDone waits until every job has ended with COMPLETED.
func (c *Cluster) WaitDone(ids ...string) {
	c.t.Helper()
	for _, id := range ids {
		c.WaitState(id, "COMPLETED", 20*time.Second)
	}
}

// RunJob submits a job with sbatch --parsable, waits for it to complete and
// returns the id and its output file (-o is added as out-<name>.txt).
func (c *Cluster) RunJob(name string, args ...string) (string, string) {
	c.t.Helper()
	out := "out-" + name + ".txt"
	id := c.Submit("", append([]string{"-o", out}, args...)...)
	c.WaitState(id, "COMPLETED", 20*time.Second)
	return id, c.ReadFile(out)
}

// keyValue is one field of scontrol's key=value layouts.
type keyValue struct{ Key, Value string }

// scontrolFields splits `scontrol show` output into its fields, in order.
// A word without '=' continues the value before it (Comment=two words,
// OS=Linux 6.1 #1 SMP), as scontrol prints such values unquoted.
func scontrolFields(out string) []keyValue {
	var kv []keyValue
	for _, line := range strings.Split(out, "\n") {
		for _, w := range strings.Fields(line) {
			k, v, ok := strings.Cut(w, "=")
			if !ok || !validKey(k) {
				if len(kv) > 0 {
					kv[len(kv)-1].Value += " " + w
				}
				continue
			}
			kv = append(kv, keyValue{k, v})
		}
	}
	return kv
}

var keyRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_:/()]*$`)

func validKey(k string) bool { return keyRE.MatchString(k) }

// fieldMap is scontrolFields as a map (the last value of a repeated key).
func fieldMap(out string) map[string]string {
	m := map[string]string{}
	for _, f := range scontrolFields(out) {
		m[f.Key] = f.Value
	}
	return m
}

// fieldKeys lists the keys of an scontrol record in order, without those
// in skip.
func fieldKeys(out string, skip ...string) []string {
	var keys []string
	for _, f := range scontrolFields(out) {
		if !slices.Contains(skip, f.Key) {
			keys = append(keys, f.Key)
		}
	}
	return keys
}

// lines splits command output into its lines, without the final newline.
func lines(out string) []string {
	out = strings.TrimSuffix(out, "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// readRef reads one file of the CLI captures ("" when absent).
func readRef(name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(referenceDir(), "cli", name))
	return string(data), err
}

// jsonPaths lists the object keys of a JSON document as paths
// ("sinfo[].node.state"), each once, in the order they first appear: the
// layout of a document, whatever its values.
func jsonPaths(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	seen := map[string]bool{}
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				p := path + "." + k.(string)
				if path == "" {
					p = k.(string)
				}
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
				if err := walk(p); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(path + "[]"); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	return out, nil
}

// jsonObjects lists, for each object path of a JSON document ("" for the
// document, "jobs[]" for the members of the jobs array), the member keys of
// every object found there, in order.
func jsonObjects(data []byte) (map[string][][]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	out := map[string][][]string{}
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			var keys []string
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				keys = append(keys, k.(string))
				p := k.(string)
				if path != "" {
					p = path + "." + p
				}
				if err := walk(p); err != nil {
					return err
				}
			}
			out[path] = append(out[path], keys)
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(path + "[]"); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	return out, nil
}
