package nodeagent

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/nodeproto"
	stepio "github.com/droverhq/drover/internal/step/stream"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/spank"
	"github.com/droverhq/drover/spank/plugconf"
)

// spankState is the node's SPANK stack, loaded from plugstack.conf on the
// first step that needs it. A stack that failed to load (a required
// plugin missing) is tried again on the next step, as slurmstepd reads
// plugstack.conf for every step.
type spankState struct {
	mu    sync.Mutex
	stack *spank.Stack
	empty bool
	// retired are stacks a reconfigure replaced: steps that started with
	// them still call their hooks, so they are closed with the daemon.
	retired []*spank.Stack
}

// reloadSpank makes the next step load plugstack.conf again.
func (a *Agent) reloadSpank() {
	st := &a.spank
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.stack != nil {
		st.retired = append(st.retired, st.stack)
	}
	st.stack, st.empty = nil, false
}

// spankStack returns the node's stack, nil when plugstack.conf lists no
// plugin.
func (a *Agent) spankStack(ctx context.Context) (*spank.Stack, error) {
	st := &a.spank
	st.mu.Lock()
	defer st.mu.Unlock()
	files := a.current()
	if st.stack != nil || st.empty || files.PlugStack == "" {
		return st.stack, nil
	}
	entries, err := plugconf.ReadConf(files.PlugStack, files.PluginDir, a.logger)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		st.empty = true
		return nil, nil
	}
	stack, err := spank.Load(ctx, entries, 0, a.logger)
	if err != nil {
		return nil, err
	}
	st.stack = stack
	return stack, nil
}

func (a *Agent) closeSpank() {
	a.spank.mu.Lock()
	defer a.spank.mu.Unlock()
	if a.spank.stack != nil {
		a.spank.stack.Close()
		a.spank.stack = nil
	}
	for _, old := range a.spank.retired {
		old.Close()
	}
	a.spank.retired = nil
}

// spankHook is what a stage of this step sees; t is nil for the step's
// stages.
func (s *step) spankHook(stage string, t *stepTask, env []string) protocol.Hook {
	l := s.l
	ntasks := 0
	for _, n := range l.TasksPerNode {
		ntasks += n
	}
	h := protocol.Hook{
		Stage: stage, Context: protocol.ContextRemote,
		JobID: l.JobID, StepID: l.StepID, UID: s.cred.UID, GID: s.cred.GID,
		NodeList: hostlist.Compress(l.Nodes), NodeAddrs: l.NodeAddrs,
		NodeID: l.NodeIndex, NNodes: len(l.Nodes), NTasks: ntasks,
		Argv: l.Argv, Env: env, LocalTasks: len(l.Tasks),
		Cwd: s.cwd, SpoolDir: s.agent.cfg.SpoolDir,
	}
	for _, g := range s.agent.cfg.GPUs {
		if g.File != "" && slices.Contains(l.GPUs, g.Index) {
			h.Devices = append(h.Devices, g.File)
		}
	}
	s.mu.Lock()
	if s.group != nil {
		h.Cgroup = s.group.CgroupPath()
	}
	s.mu.Unlock()
	if t != nil {
		h.TaskID, h.LocalTaskID = t.id, t.local
	}
	return h
}

// spankStepStart runs the step's first stages (init, init_post_opt,
// user_init) and applies what they set to the tasks' environment. An
// error (a required plugin failed) fails the step.
func (s *step) spankStepStart() error {
	stack, err := s.agent.spankStack(s.agent.stepCtx)
	if err != nil || stack == nil {
		return err
	}
	s.spank = stack
	for _, stage := range []string{protocol.StageInit, protocol.StageInitPostOpt, protocol.StageUserInit} {
		changes, err := stack.Run(s.agent.stepCtx, s.spankHook(stage, nil, s.l.Env))
		if err != nil {
			return err
		}
		s.l.Env = plugconf.Apply(s.l.Env, changes)
	}
	return nil
}

// spankTaskInit runs a task's stages before it starts and returns its
// environment with their changes.
func (s *step) spankTaskInit(t *stepTask, env []string) ([]string, []string, error) {
	if s.spank == nil {
		return env, nil, nil
	}
	var execArgv []string
	for _, stage := range []string{protocol.StageTaskInitPrivileged, protocol.StageTaskInit} {
		changes, ex, err := s.spank.RunExec(s.agent.stepCtx, s.spankHook(stage, t, env))
		if err != nil {
			return env, nil, err
		}
		env = plugconf.Apply(env, changes)
		if len(ex) > 0 {
			execArgv = ex
		}
	}
	return env, execArgv, nil
}

// spankTaskStage runs task_post_fork or task_exit; by then a failure can
// only be logged.
func (s *step) spankTaskStage(stage string, t *stepTask, pid int, status syscall.WaitStatus) {
	if s.spank == nil {
		return
	}
	h := s.spankHook(stage, t, t.env)
	h.TaskPID, h.ExitStatus = pid, int(status)
	if _, err := s.spank.Run(s.agent.stepCtx, h); err != nil {
		s.agent.logger.Warn("spank stage failed", "job", s.key.job, "step", s.key.step, "task", t.id, "err", err)
	}
}

// spankStepExit runs the exit stage once the step's tasks have ended.
func (s *step) spankStepExit() {
	if s.spank == nil {
		return
	}
	if _, err := s.spank.Run(s.agent.stepCtx, s.spankHook(protocol.StageExit, nil, s.l.Env)); err != nil {
		s.agent.logger.Warn("spank exit stage failed", "job", s.key.job, "step", s.key.step, "err", err)
	}
}

// spankFail reports a task that a plugin kept from starting: its error
// on the task's stderr, as slurmstepd's, and exit status 1.
func (s *step) spankFail(t *stepTask, err error) {
	node := uint32(s.l.NodeIndex)
	msg := "slurmstepd: error: " + strings.TrimSpace(err.Error()) + "\n"
	s.send(stepio.Frame{Kind: stepio.Stderr, Node: node, Task: uint32(t.id), Data: []byte(msg)})
	s.send(stepio.Frame{Kind: stepio.Exit, Node: node, Task: uint32(t.id), Code: 1})
}

// spankBatchStart runs a batch script's stages before it starts (init,
// init_post_opt, user_init, task_init_privileged, task_init: the batch
// step is one task) and returns its environment with their changes, and
// the hook its last stages need (nil without hooks). A required
// plugin's failure fails the launch.
func (a *Agent) spankBatchStart(l *nodeproto.Launch, env []string) ([]string, *protocol.Hook, error) {
	stack, err := a.spankStack(a.stepCtx)
	if err != nil {
		return env, nil, fmt.Errorf("launch hooks: %w", err)
	}
	if stack == nil {
		return env, nil, nil
	}
	addr := a.cfg.Advertise
	if addr == "" {
		addr = a.cfg.Listen
	}
	if h, _, err := net.SplitHostPort(addr); err == nil {
		addr = h
	}
	h := protocol.Hook{
		Context: protocol.ContextRemote, JobID: l.JobID, StepID: protocol.BatchStepID, UID: l.UID, GID: l.GID,
		NodeList: a.cfg.Name, NodeAddrs: []string{addr}, NNodes: 1, NTasks: 1, LocalTasks: 1, Argv: l.Argv,
	}
	for _, stage := range []string{protocol.StageInit, protocol.StageInitPostOpt, protocol.StageUserInit,
		protocol.StageTaskInitPrivileged, protocol.StageTaskInit} {
		h.Stage, h.Env = stage, env
		changes, err := stack.Run(a.stepCtx, h)
		if err != nil {
			return env, nil, fmt.Errorf("launch hooks: %w", err)
		}
		env = plugconf.Apply(env, changes)
	}
	h.Env = env
	return env, &h, nil
}

// spankBatchEnd runs a batch script's task_exit and exit stages.
func (a *Agent) spankBatchEnd(h *protocol.Hook, status syscall.WaitStatus) {
	if h == nil {
		return
	}
	a.spank.mu.Lock()
	stack := a.spank.stack
	a.spank.mu.Unlock()
	if stack == nil {
		return
	}
	for _, stage := range []string{protocol.StageTaskExit, protocol.StageExit} {
		hook := *h
		hook.Stage, hook.ExitStatus = stage, int(status)
		if _, err := stack.Run(a.stepCtx, hook); err != nil {
			a.logger.Warn("spank stage failed", "job", h.JobID, "stage", stage, "err", err)
		}
	}
}
