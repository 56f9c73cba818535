package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"

	"github.com/droverhq/drover/internal/pmi"
	"github.com/droverhq/drover/internal/stepio"
)

// MPI types a step may ask the node daemon to serve.
const mpiPMI2 = "pmi2"

// pmiFD is the descriptor a task finds its PMI socket on (PMI_FD): the
// first after its standard streams.
const pmiFD = 3

// stepPMI is a step's PMI service on this node (srun --mpi=pmi2): a
// pmi.Server for its tasks, whose fences go through srun.
type stepPMI struct {
	srv *pmi.Server
	// epoch counts this node's fences; in carries srun's answer to the
	// one in progress (every node's pairs), fed by readSrun.
	epoch int32
	in    chan []byte
	buf   []byte
}

// newStepPMI sets up PMI for a step that asks for it; nil for one that
// does not.
func (s *step) newStepPMI() (*stepPMI, error) {
	switch s.l.MPI {
	case "", "none", "openmpi":
		return nil, nil
	case mpiPMI2:
	default:
		return nil, fmt.Errorf("MPI: Cannot create context for mpi/%s", s.l.MPI)
	}
	size := 0
	for _, n := range s.l.TasksPerNode {
		size += n
	}
	p := &stepPMI{in: make(chan []byte, 1)}
	p.srv = &pmi.Server{
		JobID: s.l.PMIJobID, Size: size, Local: len(s.l.Tasks), ProcessMapping: s.l.PMIMapping,
		Fence: s.pmiFence,
		Abort: func(rank, code int, msg string) {
			s.send(stepio.Frame{Kind: stepio.Abort, Node: uint32(s.l.NodeIndex), Task: uint32(rank), Code: int32(code), Data: []byte(msg)})
		},
	}
	return p, nil
}

// pmiFence sends this node's pairs to srun and waits for everyone's.
func (s *step) pmiFence(ctx context.Context, local []byte) ([]byte, error) {
	p := s.pmi
	p.epoch++
	node := uint32(s.l.NodeIndex)
	if len(local) > 0 {
		s.send(stepio.Frame{Kind: stepio.KVSData, Node: node, Data: local})
	}
	s.send(stepio.Frame{Kind: stepio.KVSFence, Node: node, Code: p.epoch})
	select {
	case all := <-p.in:
		return all, nil
	case <-s.done:
		return nil, errors.New("step ended during a PMI fence")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fromSrun takes srun's KVSData and KVSFence frames.
func (p *stepPMI) fromSrun(f stepio.Frame) {
	switch f.Kind {
	case stepio.KVSData:
		p.buf = append(p.buf, f.Data...)
	case stepio.KVSFence:
		all := p.buf
		p.buf = nil
		select {
		case p.in <- all:
		default:
			// No fence waits: srun answered one that was not asked.
		}
	}
}

// taskSocket makes a task's PMI socket: the daemon's end, and the end
// the task inherits as PMI_FD with the variables Slurm's mpi/pmi2 sets.
func (p *stepPMI) taskSocket(env []string, rank int) (mine net.Conn, theirs *os.File, _ []string, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("PMI socket: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "pmi")
	mine, err = net.FileConn(ours)
	ours.Close()
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, nil, fmt.Errorf("PMI socket: %w", err)
	}
	e := newEnvList(env)
	e.set("PMI_FD", strconv.Itoa(pmiFD))
	e.set("PMI_JOBID", p.srv.JobID)
	e.set("PMI_RANK", strconv.Itoa(rank))
	e.set("PMI_SIZE", strconv.Itoa(p.srv.Size))
	return mine, os.NewFile(uintptr(fds[1]), "pmi-task"), e.list(), nil
}

// serve answers a task's PMI requests until it finalizes or ends.
func (p *stepPMI) serve(s *step, c net.Conn, rank int) {
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := p.srv.Serve(ctx, c, rank); err != nil {
		s.agent.logger.Debug("PMI client", "job", s.key.job, "step", s.key.step, "rank", rank, "err", err)
	}
}
