package conf

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/gres.conf.22.05", "testdata/gres.conf.26.11", "testdata/manpage.conf"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		"Name=gpu File=/dev/nvidia[0-3] Cores=0-15 Links=-1,2,0,0 Flags=nvidia_gpu_env\n",
		"NodeName=n[1-4] AutoDetect=nvml\nNodeName=n4 AutoDetect=off\n",
		"Name=gpu \\\n Type=\"a 1\" # x\n",
		"Name=shard Count=8 File=/dev/nvidia0\nName=mps Count=1k\n",
		"AutoDetect=nvml Name=gpu MultipleFiles=/dev/a,/dev/b\n",
		"NodeName=\"n1 n2\" Name=gpu File=/dev/x\\#1\\\\\n",
		"Include x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(strings.ToLower(s), "include") {
			return // no file access from the fuzzer
		}
		cfg, err := Parse(strings.NewReader(s), "fuzz.conf")
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) && !strings.HasPrefix(err.Error(), "fuzz.conf: ") {
				t.Fatalf("error %q names no file and line", err)
			}
			return
		}
		var text strings.Builder
		for _, l := range cfg.Lines {
			if l.File != "fuzz.conf" || l.Line < 1 || l.Name == "" {
				t.Fatalf("line without position or name: %+v", l)
			}
			if len(l.Files) > 0 && !l.MultipleFiles && !isShared(l.Name) && l.Count != uint64(len(l.Files)) {
				t.Fatalf("Count %d for %d files: %+v", l.Count, len(l.Files), l)
			}
			for node := range l.nodes {
				found := false
				for _, got := range cfg.ForNode(node).Lines {
					found = found || (got.Line == l.Line && got.Name == l.Name)
				}
				if !found {
					t.Fatalf("ForNode(%q) misses line %d", node, l.Line)
				}
				break // one node is enough, and keeps big hostlists fast
			}
			if strings.Contains(l.NodeName+strings.Join(l.Files, ""), `"`) {
				return // a quote next to a blank cannot be written back
			}
			text.WriteString(l.String())
			text.WriteByte('\n')
		}
		// Writing the lines back and parsing them gives the same lines.
		again, err := Parse(strings.NewReader(text.String()), "fuzz.conf")
		if err != nil {
			t.Fatalf("reparse of\n%s\nfailed: %v", text.String(), err)
		}
		strip := func(ls []Line) []Line {
			out := make([]Line, len(ls))
			for i, l := range ls {
				l.Line, l.nodes = 0, nil
				out[i] = l
			}
			return out
		}
		if diff := cmp.Diff(strip(cfg.Lines), strip(again.Lines), ignoreNodes); diff != "" {
			t.Fatalf("round trip mismatch (-first +again):\n%s\ntext:\n%s", diff, text.String())
		}
	})
}
