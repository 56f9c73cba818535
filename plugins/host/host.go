// Package host runs Drover's plugins: each is a separate program started
// with go-plugin and called over the versioned protocol of package
// protocol. A plugin that panics, exits or overruns its per-call timeout
// fails only that call, with the plugin's name in the error; the next
// call starts the program again. What a plugin logs reaches the daemon's
// log (slog) under the plugin's name.
package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/protocol/rpc"
)

// DefaultTimeout bounds one call when Spec.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Spec says how to run one plugin.
type Spec struct {
	// Path is the plugin program; Args its arguments from the
	// configuration (plugstack.conf), passed in calls, not on its
	// command line.
	Path string
	Args []string
	// Kind is the protocol kind it serves (protocol.KindSpank...).
	Kind string
	// Name names it in errors and logs (default: Path's base name).
	Name string
	// Timeout bounds each call (default DefaultTimeout); a plugin that
	// does not answer in time is stopped.
	Timeout time.Duration
	// Logger receives the plugin's log lines (default slog.Default()).
	Logger *slog.Logger
}

// Plugin is one plugin program, started on first use and again after it
// died. Safe for concurrent use.
type Plugin struct {
	spec   Spec
	logger hclog.Logger
	logOut io.Closer

	mu     sync.Mutex
	client *running
	conn   *rpc.Conn
	closed bool
}

// running is a started plugin program and the folder its socket is in.
// A program that is killed (hung, crashed) cannot remove its socket; the
// host removes the folder once the program is gone, so that none stays
// behind in the temporary folder.
type running struct {
	*plugin.Client
	sockets string
}

// socketDirPrefix leads the name of a plugin's socket folder, followed by
// the host process's pid, so that a later host can tell whose it was.
const socketDirPrefix = "drover-plugin-"

// SweepSocketDirs removes the socket folders in dir (the temporary folder
// when "") left by hosts that are gone: a daemon killed with SIGKILL
// cannot remove its plugins' folders. A folder of a live process, or of
// another user, is left alone. It returns how many it removed.
func SweepSocketDirs(dir string) int {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), socketDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		// Signal 0 reaches a live process (ESRCH: gone; EPERM: alive,
		// another user's).
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// Kill stops the program and removes its socket's folder.
func (r *running) Kill() {
	r.Client.Kill()
	os.RemoveAll(r.sockets)
}

// rpcClient is the program's RPC client, starting it (plugin.Client's
// Client, which the embedding names).
func (r *running) rpcClient() (plugin.ClientProtocol, error) { return r.Client.Client() }

// Open prepares a plugin; nothing runs until the first call.
func Open(spec Spec) *Plugin {
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Path)
	}
	if spec.Timeout <= 0 {
		spec.Timeout = DefaultTimeout
	}
	if spec.Logger == nil {
		spec.Logger = slog.Default()
	}
	p := &Plugin{spec: spec}
	p.logger, p.logOut = newLogger(spec.Logger.With("plugin", spec.Name))
	return p
}

// Name is the plugin's name.
func (p *Plugin) Name() string { return p.spec.Name }

// Args are the plugin's configured arguments.
func (p *Plugin) Args() []string { return p.spec.Args }

// Start runs the program now (a required plugin's load check): it
// fails when the program cannot be started or speaks no version of its
// kind this build knows.
func (p *Plugin) Start() error {
	_, err := p.connect()
	return err
}

// Call invokes method with in and decodes the answer into out, within
// the plugin's timeout (or ctx's, when sooner).
func (p *Plugin) Call(ctx context.Context, method string, in, out any) error {
	conn, err := p.connect()
	if err != nil {
		return err
	}
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, p.spec.Timeout)
	defer cancel()
	// gRPC may report a deadline a moment before the context's own
	// timer fires, so whose deadline ran out is told by which came first.
	own, _ := ctx.Deadline()
	callerDeadline, callerHas := caller.Deadline()
	callersFirst := callerHas && !callerDeadline.After(own)
	err = conn.Call(ctx, method, in, out)
	if err == nil {
		return nil
	}
	timedOut := ctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded
	switch {
	case caller.Err() != nil || (timedOut && callersFirst):
		// The caller gave up: the plugin is not at fault, and may be
		// serving others (the PMIx plugin serves every step of its
		// node).
		err = caller.Err()
		if err == nil {
			err = context.DeadlineExceeded
		}
	case timedOut:
		// gRPC may see the deadline a moment before ctx says so.
		// A plugin that hangs is stopped: the next call starts it
		// afresh rather than queue behind the stuck one.
		p.reset()
		err = fmt.Errorf("no answer within %v", p.spec.Timeout)
	case status.Code(err) == codes.Unavailable || p.exited():
		// The connection broke: the program died (a panic, an exit)
		// or is about to.
		p.reset()
		err = errors.New("plugin exited")
	}
	return fmt.Errorf("plugin %s: %s: %w", p.spec.Name, method, err)
}

// Close stops the program.
func (p *Plugin) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.reset()
	p.logOut.Close()
}

func (p *Plugin) exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.client != nil && p.client.Exited()
}

// reset stops the program, if running, so that the next call starts it.
func (p *Plugin) reset() {
	p.mu.Lock()
	c := p.client
	p.client, p.conn = nil, nil
	p.mu.Unlock()
	if c != nil {
		c.Kill()
	}
}

// connect returns a connection to a running program, starting it when
// needed.
func (p *Plugin) connect() (*rpc.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("plugin %s: closed", p.spec.Name)
	}
	if p.client != nil && !p.client.Exited() {
		return p.conn, nil
	}
	if p.client != nil {
		p.client.Kill()
		p.client, p.conn = nil, nil
	}
	if _, ok := protocol.Versions[p.spec.Kind]; !ok {
		return nil, fmt.Errorf("plugin %s: unknown plugin kind %q", p.spec.Name, p.spec.Kind)
	}
	sockets, err := os.MkdirTemp("", socketDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("plugin %s: socket folder: %w", p.spec.Name, err)
	}
	cmd := exec.Command(p.spec.Path)
	cmd.Env = []string{plugin.EnvUnixSocketDir + "=" + sockets} // go-plugin adds the host's
	client := &running{sockets: sockets, Client: plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  rpc.Handshake,
		VersionedPlugins: rpc.PluginSets(p.spec.Kind),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		// The plugin's socket is a file other users of the host could
		// connect to: mutual TLS, with certificates made for this one
		// plugin process and exchanged over its stdin and stdout, keeps
		// them off it.
		AutoMTLS: true,
		Logger:   p.logger,
		// What the plugin writes to stderr by itself (not through
		// its logger) is logged too.
		SyncStderr:   &lineLogger{l: p.spec.Logger.With("plugin", p.spec.Name)},
		StartTimeout: p.spec.Timeout,
	})}
	rc, err := client.rpcClient()
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("plugin %s: start %s: %w", p.spec.Name, p.spec.Path, err)
	}
	raw, err := rc.Dispense(p.spec.Kind)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("plugin %s: %w", p.spec.Name, err)
	}
	conn, ok := raw.(*rpc.Conn)
	if !ok {
		client.Kill()
		return nil, fmt.Errorf("plugin %s: unexpected %T", p.spec.Name, raw)
	}
	p.client, p.conn = client, conn
	return conn, nil
}

// newLogger is an hclog.Logger whose lines (go-plugin's own, and those
// the plugin writes, which go-plugin relays) go to slog until the closer
// is closed.
func newLogger(l *slog.Logger) (hclog.Logger, io.Closer) {
	pr, pw := io.Pipe()
	go relay(pr, l)
	return hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: pw, JSONFormat: true}), pw
}

// relay turns hclog's JSON lines into slog records.
func relay(r io.Reader, l *slog.Logger) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			l.Info(strings.TrimSpace(sc.Text()))
			continue
		}
		level := slog.LevelInfo
		switch strings.ToLower(fmt.Sprint(rec["@level"])) {
		case "trace", "debug":
			level = slog.LevelDebug
		case "warn":
			level = slog.LevelWarn
		case "error":
			level = slog.LevelError
		}
		msg := fmt.Sprint(rec["@message"])
		var attrs []any
		for k, v := range rec {
			if !strings.HasPrefix(k, "@") {
				attrs = append(attrs, k, v)
			}
		}
		l.Log(context.Background(), level, msg, attrs...)
	}
}

// lineLogger logs each line written to it.
type lineLogger struct {
	l   *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *lineLogger) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		w.l.Warn("plugin stderr", "line", string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}
