package jobopts

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Plugin options are accepted like srun's own, abbreviations included,
// listed in --help as Slurm's spank_print_options lists them, and one
// whose name srun has is left out.
func TestPluginOptions(t *testing.T) {
	cfg := Config{Prog: "srun", Now: time.Unix(0, 0), PluginOptions: []PluginOption{
		{Plugin: "spank-hello", Name: "hello", ArgInfo: "name", Usage: "greet name from every task", HasArg: true},
		{Plugin: "spank-x", Name: "x-verbose-flag-with-a-long-name", Usage: "a flag whose usage is long enough to be wrapped onto a second line of the help"},
		{Plugin: "spank-x", Name: "ntasks", Usage: "clashes with srun's own", HasArg: true},
	}}
	p := NewSrun(cfg)
	ops, err := p.ParseArgs([]string{"--hell=Ada", "--x-verbose-flag-with-a-long-name", "-n2", "true"})
	if err != nil {
		t.Fatal(err)
	}
	want := []PluginValue{{Plugin: "spank-hello", Name: "hello", Value: "Ada"}, {Plugin: "spank-x", Name: "x-verbose-flag-with-a-long-name"}}
	if diff := cmp.Diff(want, p.Options().PluginValues); diff != "" || len(ops) != 1 || p.Options().Ntasks.Val != 2 {
		t.Errorf("values (-want +got):\n%s; operands %q", diff, ops)
	}
	help := p.Help()
	wantHelp := "\nOptions provided by plugins:\n" +
		"      --hello=name            greet name from every task\n" +
		"\n      --x-verbose-flag-with-a-long-name\n" +
		"                              a flag whose usage is long enough to be wrapped\n" +
		"                              onto a second line of the help\n"
	if !strings.HasSuffix(help, wantHelp) {
		t.Errorf("--help ends with\n%s\nwant\n%s", help[max(0, len(help)-400):], wantHelp)
	}
	if strings.Contains(help, "clashes") {
		t.Errorf("a plugin option named like srun's own is in --help")
	}
	sb := NewSbatch(Config{Prog: "sbatch", Now: time.Unix(0, 0), PluginOptions: cfg.PluginOptions[:1]})
	if _, err := sb.ParseArgs([]string{"--hello", "Grace", "job.sh"}); err != nil || len(sb.Options().PluginValues) != 1 || sb.Options().PluginValues[0].Value != "Grace" {
		t.Errorf("sbatch --hello Grace: %v, %+v", err, sb.Options().PluginValues)
	}
	if !strings.Contains(sb.Help(), "Options provided by plugins:\n      --hello=name") {
		t.Errorf("sbatch --help lacks the plugin's option")
	}
}
