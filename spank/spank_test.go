package spank

import (
	"context"
	"fmt"
	"github.com/droverhq/drover/spank/plugconf"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

// helloPlugin is examples/spank-hello, built as a third party builds it.
var helloPlugin string

// The test binary doubles as a second plugin whose task_init fails when
// its plugstack.conf arguments say "fail".
func TestMain(m *testing.M) {
	if os.Getenv(protocol.MagicCookieKey) == protocol.MagicCookieValue {
		sdk.ServeSpank(&sdk.Spank{
			TaskInit: func(c *sdk.Context) error {
				if slices.Contains(c.Args, "fail") {
					return fmt.Errorf("no GPU for task %d", c.TaskID)
				}
				prev, _ := c.Getenv("HELLO")
				return c.Setenv("SEEN_HELLO", prev, true)
			},
		})
		return
	}
	dir, err := os.MkdirTemp("", "spank-test")
	if err != nil {
		panic(err)
	}
	helloPlugin = filepath.Join(dir, "spank-hello")
	if out, err := exec.Command("go", "build", "-o", helloPlugin, "github.com/droverhq/drover/examples/spank-hello").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the example plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestReadConf(t *testing.T) {
	dir := t.TempDir()
	plugDir := filepath.Join(dir, "lib")
	must(t, os.MkdirAll(filepath.Join(dir, "plugstack.conf.d"), 0o755))
	must(t, os.MkdirAll(plugDir, 0o755))
	must(t, os.WriteFile(filepath.Join(plugDir, "nccl"), nil, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "plugstack.conf"), []byte(
		"# site plugins\n"+
			"required /opt/pyxis.so container_scope=job\n"+
			"optional nccl --debug=INFO # from PluginDir\n"+
			"\n"+
			"bogus line here\n"+
			"include plugstack.conf.d/*.conf\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugstack.conf.d", "a.conf"), []byte("optional   /x/a\targ1 arg2\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugstack.conf.d", "b.conf"), []byte("required relative-not-found\n"), 0o644))
	var logs strings.Builder
	got, err := plugconf.ReadConf(filepath.Join(dir, "plugstack.conf"), "/nowhere:"+plugDir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "plugstack.conf")
	want := []Entry{
		{Required: true, Path: "/opt/pyxis.so", Args: []string{"container_scope=job"}, File: conf, Line: 2},
		{Path: filepath.Join(plugDir, "nccl"), Args: []string{"--debug=INFO"}, File: conf, Line: 3},
		{Path: "/x/a", Args: []string{"arg1", "arg2"}, File: filepath.Join(dir, "plugstack.conf.d", "a.conf"), Line: 1},
		{Required: true, Path: "relative-not-found", File: filepath.Join(dir, "plugstack.conf.d", "b.conf"), Line: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "spank: "+conf+":5: Invalid line. Ignoring.") {
		t.Errorf("log %q", logs.String())
	}
	if es, err := plugconf.ReadConf(filepath.Join(dir, "missing.conf"), "", nil); err != nil || es != nil {
		t.Errorf("missing plugstack.conf: %v, %v; want an empty stack", es, err)
	}
	loop := filepath.Join(dir, "loop.conf")
	must(t, os.WriteFile(loop, []byte("include loop.conf\n"), 0o644))
	if _, err := plugconf.ReadConf(loop, "", nil); err == nil || !strings.Contains(err.Error(), "nest deeper") {
		t.Errorf("include loop: %v", err)
	}
	if _, err := plugconf.Parse(strings.NewReader("include\n"), "x.conf", nil, nil); err == nil || err.Error() != "x.conf: 1: Invalid include directive" {
		t.Errorf("bare include: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"required /a b c\n", "optional x # c\ninclude *.conf\n", "bogus\n", "", "required\n", "REQUIRED /a\n\t\n#\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := plugconf.Parse(strings.NewReader(s), "f.conf", slog.New(slog.DiscardHandler), func(string) ([]Entry, error) { return nil, nil })
		if err != nil {
			return
		}
		for _, e := range es {
			if e.Path == "" || strings.ContainsAny(e.Path, " \t#") || e.Line < 1 {
				t.Fatalf("entry %+v from %q", e, s)
			}
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The example plugin, then the test plugin: options come from the
// plugins, each stage sees what the plugins before it set, and the
// user's variables are kept.
func TestStackRunsStagesInOrder(t *testing.T) {
	ctx := context.Background()
	s, err := Load(ctx, []Entry{
		{Required: true, Path: helloPlugin, Args: []string{"greeting=Hi"}},
		{Required: true, Path: os.Args[0]},
		{Path: helloPlugin},
	}, 10*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 2 {
		t.Fatalf("%d plugins loaded, want 2 (the second listing of spank-hello is refused)", s.Len())
	}
	opts := s.Options()
	if len(opts) != 1 || opts[0].Name != "hello" || opts[0].Plugin != "spank-hello" {
		t.Fatalf("options %+v", opts)
	}
	ada := plugconf.OptionEnvName("spank-hello", "hello") + "=Ada"
	if ada != "_SLURM_SPANK_OPTION_spank_hello_hello=Ada" {
		t.Fatalf("option variable %s", ada)
	}
	hook := protocol.Hook{Stage: protocol.StageTaskInit, Context: protocol.ContextRemote, TaskID: 5, Env: []string{"PATH=/bin", ada}}
	changes, err := s.Run(ctx, hook)
	if err != nil {
		t.Fatal(err)
	}
	env := plugconf.Apply(hook.Env, changes)
	want := []string{"PATH=/bin", ada, "HELLO=Hi Ada from task 5", "SEEN_HELLO=Hi Ada from task 5"}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("task environment (-want +got):\n%s", diff)
	}
	// A variable the user set is not replaced.
	hook.Env = []string{"HELLO=mine", "SPANK_" + ada}
	changes, _ = s.Run(ctx, hook)
	if env := plugconf.Apply(hook.Env, changes); !slices.Equal(env, []string{"HELLO=mine", "SPANK_" + ada, "SEEN_HELLO=mine"}) {
		t.Errorf("with HELLO set: %q", env)
	}
	// The example's own error for --hello without a name fails the stage.
	hook.Env = []string{plugconf.OptionEnvName("spank-hello", "hello") + "="}
	if _, err := s.Run(ctx, hook); err == nil ||
		err.Error() != "spank: required plugin spank-hello: task_init() failed: --hello needs a name" {
		t.Errorf("--hello=: %v", err)
	}
}

// A required plugin that fails to load fails the stack; an optional one
// is left out. A failing stage stops the step for a required plugin and
// is ignored for an optional one.
func TestStackRequiredAndOptional(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	_, err := Load(ctx, []Entry{{Required: true, Path: "/nonexistent/plug", File: "plugstack.conf", Line: 3}}, 2*time.Second, quiet)
	if err == nil || !strings.HasPrefix(err.Error(), "spank: plugstack.conf:3: Failed to load plugin /nonexistent/plug. Aborting.") {
		t.Fatalf("required missing plugin: %v", err)
	}
	s, err := Load(ctx, []Entry{{Path: "/nonexistent/plug"}, {Path: os.Args[0], Args: []string{"fail"}}}, 2*time.Second, quiet)
	if err != nil || s.Len() != 1 {
		t.Fatalf("optional plugins: %v, %d loaded", err, s.Len())
	}
	if _, err := s.Run(ctx, protocol.Hook{Stage: protocol.StageTaskInit}); err != nil {
		t.Errorf("an optional plugin's failure stopped the stage: %v", err)
	}
	s.Close()
	s, err = Load(ctx, []Entry{{Required: true, Path: os.Args[0], Args: []string{"fail"}}}, 2*time.Second, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(ctx, protocol.Hook{Stage: protocol.StageTaskInit, TaskID: 2}); err == nil ||
		err.Error() != "spank: required plugin spank.test: task_init() failed: no GPU for task 2" {
		t.Errorf("required plugin failing: %v", err)
	}
}

// Describe learns a plugin's options and stages once and then answers
// from its cache while the program is unchanged.
func TestDescribeCaches(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	cache := filepath.Join(t.TempDir(), "cache", "spank.json")
	// A copy of the example, so that the test can change it.
	plug := filepath.Join(t.TempDir(), "spank-hello")
	b, err := os.ReadFile(helloPlugin)
	must(t, err)
	must(t, os.WriteFile(plug, b, 0o755))
	entries := []Entry{{Path: plug, Args: []string{"greeting=Hi"}}, {Path: "/nonexistent/plug"}}
	infos, err := Describe(ctx, entries, cache, 10*time.Second, quiet)
	if err != nil || len(infos) != 1 {
		t.Fatalf("Describe: %v, %+v", err, infos)
	}
	in := infos[0]
	if in.Name != "spank-hello" || len(in.Options) != 1 || in.Options[0].Name != "hello" || !slices.Equal(in.Stages, []string{"task_init"}) || !in.Has("task_init") || in.Has("init") {
		t.Fatalf("info %+v", in)
	}
	// From the cache: the program can no longer be run (its mode changed,
	// not its size or time), so an answer proves it was not started.
	must(t, os.Chmod(plug, 0o644))
	if infos, err = Describe(ctx, entries, cache, 10*time.Second, quiet); err != nil || len(infos) != 1 || infos[0].Options[0].Name != "hello" {
		t.Fatalf("cached Describe: %v, %+v", err, infos)
	}
	future := time.Now().Add(time.Hour)
	// A changed program is started again.
	must(t, os.WriteFile(plug, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	must(t, os.Chtimes(plug, future, future))
	if infos, err = Describe(ctx, entries, cache, 2*time.Second, quiet); err != nil || len(infos) != 0 {
		t.Fatalf("Describe of a changed, broken optional plugin: %v, %+v", err, infos)
	}
	if _, err := Describe(ctx, []Entry{{Required: true, Path: plug, File: "p.conf", Line: 1}}, cache, 2*time.Second, quiet); err == nil {
		t.Errorf("a required plugin that does not start was described")
	}
}
