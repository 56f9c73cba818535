package sbatch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// referenceArgs splits a capture's command line ("sbatch -H --wrap 'sleep
// 10'") into arguments, honouring single quotes.
func referenceArgs(t *testing.T, cmdline string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for _, r := range cmdline {
		switch {
		case r == '\'':
			inQuote = !inQuote
			inWord = true
		case r == ' ' && !inQuote:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) == 0 || out[0] != "sbatch" {
		t.Fatalf("not an sbatch command: %q", cmdline)
	}
	return out[1:]
}

// TestReferenceCaptures replays every sbatch capture of real Slurm 25.11
// (shared/reference/cli/{err_,}sbatch_*) and compares stdout, stderr and the
// exit status exactly. The server answers as the captured cluster did.
func TestReferenceCaptures(t *testing.T) {
	dir := filepath.Join(clitest.ReferenceDir(t), "cli")
	tests := map[string]struct {
		// reply is the controller's answer; nil accepts the job with
		// the id found in the capture's output.
		reply v0044.SlurmV0044PostJobSubmitRes
		// script is written to the working directory under its name.
		script, scriptName string
	}{
		"sbatch_success":            {},
		"sbatch_parsable":           {},
		"sbatch_parsable_array":     {},
		"err_sbatch_unknown_option": {},
		"err_sbatch_invalid_time":   {},
		"err_sbatch_invalid_partition": {
			reply: rejected(500, 2000, "Invalid partition name specified", "invalid partition specified: nosuch"),
		},
		"err_sbatch_too_many_gpus": {
			// slurmrestd's own wording: a generic description.
			reply: rejected(500, 2014, "Requested node configuration is not available", "Batch job submission failed"),
		},
		"err_sbatch_bad_directive": {
			scriptName: "bad_directive.sh",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			read := func(ext string) string {
				b, err := os.ReadFile(filepath.Join(dir, name+ext))
				if os.IsNotExist(err) {
					return ""
				}
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			cmdline := strings.TrimSpace(read(".cmd"))
			wantOut, wantErr := read(".out"), read(".err")
			wantCode, _ := strconv.Atoi(strings.TrimSpace(read(".rc")))

			f := newFixture(t)
			if tc.scriptName != "" {
				// The capture ran "cat script; sbatch script": the
				// script is the start of stdout.
				if err := os.WriteFile(filepath.Join(f.h.Env.Cwd, tc.scriptName), []byte(wantOut), 0o644); err != nil {
					t.Fatal(err)
				}
				cmdline = strings.TrimPrefix(cmdline, "cat "+tc.scriptName+"; ")
				wantOut = ""
			}
			if tc.reply != nil {
				f.srv.replies = append(f.srv.replies, tc.reply)
			} else if id, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(wantOut), "Submitted batch job ")); err == nil {
				f.srv.replies = append(f.srv.replies, ok(int32(id)))
			}
			got := f.run("", referenceArgs(t, cmdline)...)
			want := clitest.Run{Code: wantCode, Stdout: wantOut, Stderr: wantErr}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", cmdline, diff)
			}
		})
	}
}
