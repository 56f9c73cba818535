// Package sdk is what a third party imports to write a Drover plugin: a
// program whose main calls one Serve function with its implementation.
// The program is started by Drover (never by hand) and speaks the
// versioned protocol of package protocol over go-plugin; a panic or an
// exit fails only the call under way, and Drover starts the program again
// on its next use.
//
// A SPANK-like plugin that sets a variable for every task:
//
//	func main() {
//		sdk.ServeSpank(&sdk.Spank{
//			TaskInit: func(c *sdk.Context) error {
//				return c.Setenv("HELLO", "world", false)
//			},
//		})
//	}
package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/protocol/rpc"
)

// Stage functions run in one SPANK stage; an error fails it, with the
// error's text shown to the user (for a required plugin, the job or
// step then fails).
type StageFunc func(c *Context) error

// Spank is a SPANK-like plugin: the options it adds to sbatch, srun and
// salloc, and a function for each stage it cares about (nil: nothing to
// do there). Args are its plugstack.conf arguments.
type Spank struct {
	// Options returns the options to register; args are the plugin's
	// arguments in plugstack.conf.
	Options func(args []string) []protocol.Option
	// OnlyWithOptions: the stages are called only for jobs and steps
	// that gave one of the plugin's options.
	OnlyWithOptions bool

	Init               StageFunc
	InitPostOpt        StageFunc
	LocalUserInit      StageFunc
	UserInit           StageFunc
	TaskInitPrivileged StageFunc
	TaskInit           StageFunc
	TaskPostFork       StageFunc
	TaskExit           StageFunc
	Exit               StageFunc
}

func (s *Spank) stage(name string) StageFunc {
	switch name {
	case protocol.StageInit:
		return s.Init
	case protocol.StageInitPostOpt:
		return s.InitPostOpt
	case protocol.StageLocalUserInit:
		return s.LocalUserInit
	case protocol.StageUserInit:
		return s.UserInit
	case protocol.StageTaskInitPrivileged:
		return s.TaskInitPrivileged
	case protocol.StageTaskInit:
		return s.TaskInit
	case protocol.StageTaskPostFork:
		return s.TaskPostFork
	case protocol.StageTaskExit:
		return s.TaskExit
	case protocol.StageExit:
		return s.Exit
	}
	return nil
}

// handle serves the spank methods.
func (s *Spank) handle(_ context.Context, method string, req json.RawMessage) (any, error) {
	switch method {
	case protocol.SpankMethodOptions:
		var in protocol.OptionsRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		out := protocol.OptionsReply{OnlyWithOptions: s.OnlyWithOptions}
		if s.Options != nil {
			out.Options = s.Options(in.Args)
		}
		for _, st := range protocol.SpankStages {
			if s.stage(st) != nil {
				out.Stages = append(out.Stages, st)
			}
		}
		return &out, nil
	case protocol.SpankMethodHook:
		var h protocol.Hook
		if err := json.Unmarshal(req, &h); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		c := &Context{Hook: h}
		if f := s.stage(h.Stage); f != nil {
			if err := f(c); err != nil {
				c.reply.Error = err.Error()
			}
		}
		return &c.reply, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

// Context is what a stage sees (spank_get_item) and changes
// (spank_setenv).
type Context struct {
	protocol.Hook
	reply protocol.HookReply
}

// Option returns the value the user gave the plugin's option name, and
// whether it was given.
func (c *Context) Option(name string) (string, bool) {
	v, ok := c.Options[name]
	return v, ok
}

// Getenv reads the job's or task's environment, with the changes this
// stage made.
func (c *Context) Getenv(name string) (string, bool) {
	for _, ch := range slices.Backward(c.reply.Env) {
		if ch.Name == name {
			return ch.Value, !ch.Unset
		}
	}
	for _, kv := range slices.Backward(c.Env) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Setenv sets name for the job or task, keeping a value already there
// unless overwrite, as spank_setenv does.
func (c *Context) Setenv(name, value string, overwrite bool) error {
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return fmt.Errorf("invalid variable name %q", name)
	}
	if _, set := c.Getenv(name); set && !overwrite {
		return nil
	}
	c.reply.Env = append(c.reply.Env, protocol.EnvChange{Name: name, Value: value, Overwrite: true})
	return nil
}

// Unsetenv removes name from the job's or task's environment.
func (c *Context) Unsetenv(name string) {
	c.reply.Env = append(c.reply.Env, protocol.EnvChange{Name: name, Unset: true})
}

// logger writes to the plugin's original stderr, which Drover reads log
// lines from (go-plugin redirects os.Stderr once the plugin serves).
var logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: os.Stderr, JSONFormat: true})

// Logger returns the plugin's logger: what it logs reaches the daemon's
// log under the plugin's name.
func Logger() hclog.Logger { return logger }

// ServeSpank serves p until Drover stops the plugin. It does not return.
func ServeSpank(p *Spank) {
	serve(protocol.KindSpank, protocol.SpankMethods, p.handle)
}

func serve(kind string, methods []string, h rpc.Handler) {
	sets := map[int]plugin.PluginSet{}
	for _, v := range protocol.Versions[kind] {
		sets[v] = plugin.PluginSet{kind: &rpc.GRPCPlugin{Kind: kind, Major: v, Methods: methods, Handler: h}}
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  rpc.Handshake,
		VersionedPlugins: sets,
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           logger,
	})
}

// Exec asks the node daemon to start the task as argv instead of its own
// program (task_init, remote context): argv runs as root with the task's
// standard streams, cgroup and limits, and must start the task itself, as
// a container runtime does.
func (c *Context) Exec(argv ...string) { c.reply.Exec = argv }

// ExecArgv is what Exec asked for, for tests.
func (c *Context) ExecArgv() []string { return c.reply.Exec }

// NewContext is a stage's context for h, for testing a plugin's stage
// functions without running the plugin.
func NewContext(h protocol.Hook) *Context { return &Context{Hook: h} }

// Changes are the environment changes the stage made so far.
func (c *Context) Changes() []protocol.EnvChange { return c.reply.Env }
