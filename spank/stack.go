package spank

import (
	"context"
	"errors"
	"fmt"
	"github.com/droverhq/drover/spank/plugconf"
	"log/slog"
	"slices"
	"time"

	"github.com/droverhq/drover/plugins/host"
	"github.com/droverhq/drover/plugins/protocol"
)

// Stack is the loaded plugins of one plugstack.conf, in its order.
type Stack struct {
	plugins []stackPlugin
	log     *slog.Logger
}

type stackPlugin struct {
	*host.Plugin
	required bool
	options  []protocol.Option
	// stages are those the plugin implements; nil: unknown (a plugin
	// built before the SDK said), so every stage is called.
	stages []string
	// onlyWithOptions skips the plugin where none of its options
	// were given.
	onlyWithOptions bool
}

// Load starts every plugin and asks for its options. A required plugin
// that fails fails the load ("spank: FILE:LINE: Failed to load plugin
// PATH. Aborting."), an optional one is logged and left out. A plugin
// listed twice is loaded once, as Slurm refuses to load it again.
func Load(ctx context.Context, entries []Entry, timeout time.Duration, log *slog.Logger) (*Stack, error) {
	if log == nil {
		log = slog.Default()
	}
	s := &Stack{log: log}
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Path] {
			log.Error(fmt.Sprintf("spank: %s: cowardly refusing to load a second time", e.Path))
			continue
		}
		seen[e.Path] = true
		p := host.Open(host.Spec{Path: e.Path, Args: e.Args, Kind: protocol.KindSpank, Timeout: timeout, Logger: log})
		var opts protocol.OptionsReply
		err := p.Call(ctx, protocol.SpankMethodOptions, protocol.OptionsRequest{Args: e.Args}, &opts)
		if err != nil {
			p.Close()
			if e.Required {
				s.Close()
				return nil, fmt.Errorf("spank: %s:%d: Failed to load plugin %s. Aborting.: %w", e.File, e.Line, e.Path, err)
			}
			log.Info(fmt.Sprintf("spank: %s:%d: Failed to load optional plugin %s. Ignored.", e.File, e.Line, e.Path), "err", err)
			continue
		}
		s.plugins = append(s.plugins, stackPlugin{Plugin: p, required: e.Required, options: opts.Options, stages: opts.Stages, onlyWithOptions: opts.OnlyWithOptions})
	}
	return s, nil
}

// Close stops every plugin.
func (s *Stack) Close() {
	for _, p := range s.plugins {
		p.Close()
	}
}

// Len is the number of loaded plugins.
func (s *Stack) Len() int { return len(s.plugins) }

// PluginOption is a plugin's option with the plugin that owns it.
type PluginOption struct {
	protocol.Option
	Plugin string
}

// Options lists every plugin's options, in stack order.
func (s *Stack) Options() []PluginOption {
	var out []PluginOption
	for _, p := range s.plugins {
		for _, o := range p.options {
			out = append(out, PluginOption{Option: o, Plugin: p.Name()})
		}
	}
	return out
}

// Run calls stage on every plugin in order, each seeing the environment
// as the plugins before it left it, and returns the environment changes.
// The options the user gave a plugin come from the environment, where
// the commands put them as Slurm's do (OptionEnvName). A required
// plugin's failure stops the stage with Slurm's words and the plugin's
// message; an optional plugin's is logged and ignored, as spank.c's
// _do_call_stack does.
func (s *Stack) Run(ctx context.Context, hook protocol.Hook) ([]protocol.EnvChange, error) {
	changes, _, err := s.RunExec(ctx, hook)
	return changes, err
}

// RunExec is Run that also returns the command a plugin asked to start
// the task with instead of its own (HookReply.Exec; the last plugin's).
func (s *Stack) RunExec(ctx context.Context, hook protocol.Hook) ([]protocol.EnvChange, []string, error) {
	var changes []protocol.EnvChange
	var execArgv []string
	env := hook.Env
	for _, p := range s.plugins {
		if p.stages != nil && !slices.Contains(p.stages, hook.Stage) {
			// Nothing to do there: no round trip.
			continue
		}
		h := hook
		h.Args = p.Args()
		h.Env = env
		h.Options = map[string]string{}
		for _, o := range p.options {
			for _, name := range []string{plugconf.OptionEnvName(p.Name(), o.Name), "SPANK_" + plugconf.OptionEnvName(p.Name(), o.Name)} {
				if i := plugconf.Index(env, name); i >= 0 {
					h.Options[o.Name] = env[i][len(name)+1:]
					break
				}
			}
		}
		if p.onlyWithOptions && len(h.Options) == 0 {
			continue
		}
		var reply protocol.HookReply
		err := p.Call(ctx, protocol.SpankMethodHook, h, &reply)
		if err == nil && reply.Error != "" {
			err = errors.New(reply.Error)
		}
		if err != nil {
			if p.required {
				return changes, execArgv, fmt.Errorf("spank: required plugin %s: %s() failed: %w", p.Name(), hook.Stage, err)
			}
			s.log.Warn(fmt.Sprintf("spank: optional plugin %s: %s() failed", p.Name(), hook.Stage), "err", err)
			continue
		}
		changes = append(changes, reply.Env...)
		env = plugconf.Apply(env, reply.Env)
		if len(reply.Exec) > 0 {
			execArgv = reply.Exec
		}
	}
	return changes, execArgv, nil
}
