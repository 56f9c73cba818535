package host

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"

	"github.com/droverhq/drover/internal/testutil"
)

// The test binary doubles as a plugin: go-plugin starts it with its
// handshake cookie set, and a hook's arguments choose how it misbehaves.
func TestMain(m *testing.M) {
	if os.Getenv(protocol.MagicCookieKey) == protocol.MagicCookieValue {
		sdk.ServeSpank(&sdk.Spank{
			Options: func(args []string) []protocol.Option {
				return []protocol.Option{{Name: "greeting", ArgInfo: "word", Usage: "what to greet with", HasArg: true}}
			},
			TaskInit: func(c *sdk.Context) error {
				switch {
				case slices.Contains(c.Args, "panic"):
					panic("the plugin broke")
				case slices.Contains(c.Args, "hang"):
					time.Sleep(time.Hour)
				case slices.Contains(c.Args, "fail"):
					return os.ErrPermission
				}
				sdk.Logger().Info("task_init ran", "task", c.TaskID)
				word, _ := c.Option("greeting")
				if err := c.Setenv("GREETING", word, false); err != nil {
					return err
				}
				rank, _ := c.Getenv("SLURM_PROCID")
				return c.Setenv("RANK_SEEN", rank, true)
			},
		})
		return
	}
	os.Exit(m.Run())
}

func open(t *testing.T, timeout time.Duration) (*Plugin, *testutil.SyncBuffer) {
	t.Helper()
	var logs testutil.SyncBuffer
	p := Open(Spec{Path: os.Args[0], Kind: protocol.KindSpank, Name: "hello", Timeout: timeout,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(p.Close)
	return p, &logs
}

func hook(p *Plugin, args ...string) (protocol.HookReply, error) {
	var out protocol.HookReply
	err := p.Call(context.Background(), protocol.SpankMethodHook, protocol.Hook{
		Stage: protocol.StageTaskInit, Context: protocol.ContextRemote, Args: args, TaskID: 3,
		Options: map[string]string{"greeting": "hi"}, Env: []string{"SLURM_PROCID=3", "GREETING=kept"},
	}, &out)
	return out, err
}

// A plugin registers its options and changes a task's environment the
// SPANK way (no overwrite unless asked), and its log lines reach the
// daemon's log under its name.
func TestSpankCalls(t *testing.T) {
	p, logs := open(t, 0)
	var opts protocol.OptionsReply
	if err := p.Call(context.Background(), protocol.SpankMethodOptions, protocol.OptionsRequest{}, &opts); err != nil {
		t.Fatal(err)
	}
	if len(opts.Options) != 1 || opts.Options[0].Name != "greeting" || !opts.Options[0].HasArg {
		t.Fatalf("options %+v", opts.Options)
	}
	out, err := hook(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []protocol.EnvChange{{Name: "RANK_SEEN", Value: "3", Overwrite: true}}
	if len(out.Env) != 1 || out.Env[0] != want[0] || out.Error != "" {
		t.Errorf("reply %+v, want only RANK_SEEN set (GREETING was set already)", out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "task_init ran") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if l := logs.String(); !strings.Contains(l, "task_init ran") || !strings.Contains(l, "plugin=hello") || !strings.Contains(l, "task=3") {
		t.Errorf("daemon log:\n%s", l)
	}
}

// A stage that fails says why; the plugin lives on.
func TestSpankStageError(t *testing.T) {
	p, _ := open(t, 0)
	out, err := hook(p, "fail")
	if err != nil || out.Error != "permission denied" {
		t.Fatalf("failing stage: %+v, %v", out, err)
	}
}

// A plugin that panics, or hangs past its timeout, fails that call only,
// with its name in the error; the next call starts it again.
func TestCrashAndHangIsolation(t *testing.T) {
	// The sockets of the programs that crashed or were killed go with
	// them: nothing stays in the temporary folder.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Cleanup(func() {
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("left in the temporary folder: %v", left)
		}
	})
	p, _ := open(t, 500*time.Millisecond)
	for _, tc := range []struct{ arg, want string }{
		{"panic", "plugin hello: Hook: plugin exited"},
		{"hang", "plugin hello: Hook: no answer within 500ms"},
	} {
		if _, err := hook(p, tc.arg); err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.arg, err, tc.want)
		}
		out, err := hook(p)
		if err != nil || len(out.Env) != 1 {
			t.Errorf("after %s, the next call: %+v, %v", tc.arg, out, err)
		}
	}
}

// A program that is missing, or is no Drover plugin, fails to start with
// a clear error.
func TestStartFailures(t *testing.T) {
	for _, path := range []string{"/nonexistent/plugin", "/bin/true"} {
		p := Open(Spec{Path: path, Kind: protocol.KindSpank, Timeout: 2 * time.Second, Logger: slog.New(slog.DiscardHandler)})
		err := p.Start()
		p.Close()
		if err == nil || !strings.HasPrefix(err.Error(), "plugin "+path[strings.LastIndex(path, "/")+1:]+": start "+path) {
			t.Errorf("Start(%s) = %v", path, err)
		}
	}
	p := Open(Spec{Path: os.Args[0], Kind: "nonsense"})
	if err := p.Start(); err == nil || !strings.Contains(err.Error(), `unknown plugin kind "nonsense"`) {
		t.Errorf("unknown kind: %v", err)
	}
	p.Close()
}

// The plugin's socket takes only the daemon that started it: mutual TLS
// with certificates made for this plugin process. Another program of the
// host, which can reach the socket file, gets nowhere, in plain text or
// in TLS without the daemon's certificate.
func TestPluginSocketNeedsTheDaemonsCertificate(t *testing.T) {
	p, _ := open(t, 0)
	if _, err := hook(p); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	rc := p.client.ReattachConfig()
	p.mu.Unlock()
	if rc == nil || rc.Addr == nil {
		t.Fatal("no plugin address")
	}
	addr := rc.Addr.String()
	for name, creds := range map[string]credentials.TransportCredentials{
		"plain text":          insecure.NewCredentials(),
		"TLS, no client cert": credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}),
	} {
		conn, err := grpc.NewClient("unix://"+addr, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "plugin"})
		cancel()
		conn.Close()
		if err == nil {
			t.Errorf("%s: another program reached the plugin", name)
		}
	}
}

// A call its caller gives up on fails, and the plugin goes on running:
// it may be serving others (the PMIx plugin serves every step).
func TestCallerCancelKeepsPlugin(t *testing.T) {
	p, _ := open(t, time.Minute)
	if _, err := hook(p); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	before := p.client
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out protocol.HookReply
	err := p.Call(ctx, protocol.SpankMethodHook, protocol.Hook{Stage: protocol.StageTaskInit, Context: protocol.ContextRemote, Args: []string{"hang"}}, &out)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled call: %v", err)
	}
	p.mu.Lock()
	after := p.client
	p.mu.Unlock()
	if after != before || after.Exited() {
		t.Errorf("the plugin was stopped when its caller gave up")
	}
}

// A host killed with SIGKILL leaves its plugins' socket folders; the next
// daemon removes those of processes that are gone, and only those.
func TestSweepSocketDirs(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := gone.Process.Pid
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk(fmt.Sprintf("%s%d-123", socketDirPrefix, dead))
	live := mk(fmt.Sprintf("%s%d-456", socketDirPrefix, os.Getppid()))
	mine := mk(fmt.Sprintf("%s%d-789", socketDirPrefix, os.Getpid()))
	other := mk("drover-plugin-notapid")
	unrelated := mk(fmt.Sprintf("something-%d-1", dead))
	if n := SweepSocketDirs(dir); n != 1 {
		t.Errorf("removed %d folders, want 1", n)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder of a process that is gone is still there: %v", err)
	}
	for _, p := range []string{live, mine, other, unrelated} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}
