// Package jobsubmit runs slurm.conf's JobSubmitPlugins over new jobs and
// job changes, as slurmctld's job_submit plugins do: each plugin in turn
// sees the job as the ones before left it, may change it, and may reject
// it with a message for the user.
package jobsubmit

import (
	"context"
	"fmt"
	"strings"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/plugins/protocol"
)

// Plugin is one filter (a *host.JobSubmit).
type Plugin interface {
	Name() string
	Submit(ctx context.Context, req protocol.SubmitRequest) (*protocol.SubmitReply, error)
	Modify(ctx context.Context, req protocol.ModifyRequest) (*protocol.SubmitReply, error)
	Close()
}

// Chain is the configured filters, in slurm.conf's order.
type Chain struct {
	plugins []Plugin
}

// New makes a chain of plugins.
func New(plugins ...Plugin) *Chain { return &Chain{plugins: plugins} }

// Close stops the plugins.
func (c *Chain) Close() {
	for _, p := range c.plugins {
		p.Close()
	}
}

// Submit runs every plugin over a new job, applying their changes to r.
// It returns the messages for the user, one a line, and a *slurmerr.Error
// when a plugin rejects the job (its message is the error's detail) or
// fails (the job is refused, as job_submit/lua refuses it when its script
// fails).
func (c *Chain) Submit(ctx context.Context, r *job.Request, submitUID uint32) (string, error) {
	var msgs []string
	for _, p := range c.plugins {
		reply, err := p.Submit(ctx, protocol.SubmitRequest{Job: Desc(r), SubmitUID: submitUID})
		if err != nil {
			return "", slurmerr.New(slurmerr.Unspecified, "%v", err)
		}
		if reply.Reject {
			return "", rejection(p.Name(), reply, msgs)
		}
		if reply.Job != nil {
			if err := Apply(r, reply.Job); err != nil {
				return "", fmt.Errorf("job_submit plugin %s: %w", p.Name(), err)
			}
		}
		if reply.Message != "" {
			msgs = append(msgs, reply.Message)
		}
	}
	return strings.Join(msgs, "\n"), nil
}

// Modify runs every plugin over a change to job id, whose current
// request is cur, and applies what they change to upd (the change asked
// for, in the same form). The result is as Submit's.
func (c *Chain) Modify(ctx context.Context, id job.ID, cur, upd *job.Request, submitUID uint32) (string, error) {
	var msgs []string
	for _, p := range c.plugins {
		reply, err := p.Modify(ctx, protocol.ModifyRequest{JobID: uint32(id), Job: Desc(cur), Update: Desc(upd), SubmitUID: submitUID})
		if err != nil {
			return "", slurmerr.New(slurmerr.Unspecified, "%v", err)
		}
		if reply.Reject {
			return "", rejection(p.Name(), reply, msgs)
		}
		if reply.Job != nil {
			if err := Apply(upd, reply.Job); err != nil {
				return "", fmt.Errorf("job_submit plugin %s: %w", p.Name(), err)
			}
		}
		if reply.Message != "" {
			msgs = append(msgs, reply.Message)
		}
	}
	return strings.Join(msgs, "\n"), nil
}

// rejection is a plugin's refusal as the error the user sees: its
// message (after what earlier plugins said) and its Slurm error number.
func rejection(name string, reply *protocol.SubmitReply, earlier []string) error {
	code := slurmerr.Code(reply.ErrorCode)
	if code == slurmerr.NoError {
		code = slurmerr.Unspecified
	}
	msg := reply.Message
	if msg == "" {
		msg = "job rejected by job_submit plugin " + name
	}
	return slurmerr.New(code, "%s", strings.Join(append(earlier, msg), "\n"))
}

// Desc is r as a plugin sees it.
func Desc(r *job.Request) protocol.JobDesc {
	d := protocol.JobDesc{
		Name: r.Name, Partition: r.Partition, Account: r.Account, QOS: r.QOS,
		Reservation: r.Reservation, Comment: r.Comment, Dependency: r.Dependency,
		TimeLimit: r.TimeLimit, TimeMin: r.TimeMin, Nice: r.Nice,
		MinNodes: r.MinNodes, MaxNodes: r.MaxNodes, NumTasks: r.NumTasks,
		CPUsPerTask: r.CPUsPerTask, TasksPerNode: r.TasksPerNode,
		MemPerNode: r.MemPerNode, MemPerCPU: r.MemPerCPU,
		Gres: gresOf(r), Exclusive: r.Exclusive, Requeue: r.Requeue,
		UserID: r.UserID, GroupID: r.GroupID, UserName: r.UserName,
		WorkDir: r.WorkDir, StdOut: r.StdOut, StdErr: r.StdErr,
		Script: r.Script, Argv: r.Argv, Environment: r.Environment,
		Array: r.Array.Expr, Interactive: r.Interactive, SubmitHost: r.SubmitHost,
	}
	return d
}

// gresOf is the job's per-node GPU request as --gres writes it.
func gresOf(r *job.Request) string {
	if r.GPUsPerNode == 0 {
		return ""
	}
	return gres.Request{Name: "gpu", Type: r.GPUType, Count: uint64(r.GPUsPerNode)}.String()
}

// Apply copies the changeable fields of d into r; a GRES request that
// does not parse, or names anything but GPUs, is an error.
func Apply(r *job.Request, d *protocol.JobDesc) error {
	r.Name, r.Partition, r.Account, r.QOS = d.Name, d.Partition, d.Account, d.QOS
	r.Reservation, r.Comment, r.Dependency = d.Reservation, d.Comment, d.Dependency
	r.TimeLimit, r.TimeMin, r.Nice = d.TimeLimit, d.TimeMin, d.Nice
	r.MinNodes, r.MaxNodes, r.NumTasks = d.MinNodes, d.MaxNodes, d.NumTasks
	r.CPUsPerTask, r.TasksPerNode = d.CPUsPerTask, d.TasksPerNode
	r.MemPerNode, r.MemPerCPU = d.MemPerNode, d.MemPerCPU
	r.Exclusive, r.Requeue = d.Exclusive, d.Requeue
	if d.Gres == gresOf(r) {
		return nil
	}
	r.GPUsPerNode, r.GPUType, r.Gres = 0, "", ""
	if d.Gres == "" {
		return nil
	}
	reqs, err := gres.ParseRequest(d.Gres)
	if err != nil {
		return slurmerr.New(slurmerr.InvalidGRES, "gres %q: %v", d.Gres, err)
	}
	for _, g := range reqs {
		if g.Name != "gpu" {
			return slurmerr.New(slurmerr.InvalidGRES, "gres %q: only gpu is known", d.Gres)
		}
		r.GPUsPerNode, r.GPUType = uint32(g.Count), g.Type
	}
	r.Gres = gres.FormatTRES(reqs)
	return nil
}
