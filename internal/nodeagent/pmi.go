package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/pmi"
	stepio "github.com/droverhq/drover/internal/step/stream"
	"github.com/droverhq/drover/plugins/host"
	"github.com/droverhq/drover/plugins/protocol"
)

// MPI types a step may ask the node daemon to serve: pmi2 by itself
// (package pmi), pmix through the PMIx plugin.
const (
	mpiPMI2 = "pmi2"
	mpiPMIx = "pmix"
)

// pmiFD is the descriptor a task finds its PMI socket on (PMI_FD): the
// first after its standard streams.
const pmiFD = 3

// stepPMI is a step's MPI service on this node: a pmi.Server for pmi2,
// or the PMIx plugin's namespace for pmix. Either way the node's fences
// go through srun.
type stepPMI struct {
	srv *pmi.Server
	// plugin serves pmix; env is what it gave each local rank.
	plugin *host.MPI
	env    map[int][]string
	// epoch counts pmi2's fences; in carries srun's answer to the one in
	// progress (every node's data), fed by readSrun.
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
	case mpiPMIx:
		plugin, err := s.agent.pmixPlugin()
		if err != nil {
			return nil, err
		}
		return &stepPMI{plugin: plugin, in: make(chan []byte, 1)}, nil
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
		Fence: func(ctx context.Context, local []byte) ([]byte, error) {
			p.epoch++
			return s.exchange(ctx, p.epoch, local)
		},
		Abort: s.mpiAbort,
	}
	return p, nil
}

// pmixPlugin starts the node's PMIx plugin on first use.
func (a *Agent) pmixPlugin() (*host.MPI, error) {
	a.pmixOnce.Do(func() {
		if a.cfg.PMIxPlugin == "" {
			return
		}
		if _, err := os.Stat(a.cfg.PMIxPlugin); err != nil {
			return
		}
		a.pmix = host.OpenMPI(host.Spec{
			Path: a.cfg.PMIxPlugin, Args: []string{"tmpdir=" + filepath.Join(a.cfg.SpoolDir, "pmix")},
			Name: "mpi/pmix", Timeout: 30 * time.Second, Logger: a.logger,
		})
	})
	if a.pmix == nil {
		return nil, errors.New("MPI: Cannot create context for mpi/pmix")
	}
	return a.pmix, nil
}

// exchange sends this node's fence data to srun and waits for every
// node's.
func (s *step) exchange(ctx context.Context, epoch int32, local []byte) ([]byte, error) {
	node := uint32(s.l.NodeIndex)
	if len(local) > 0 {
		s.send(stepio.Frame{Kind: stepio.KVSData, Node: node, Data: local})
	}
	s.send(stepio.Frame{Kind: stepio.KVSFence, Node: node, Code: epoch})
	select {
	case all := <-s.pmi.in:
		return all, nil
	case <-s.done:
		return nil, errors.New("step ended during a fence")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// mpiAbort tells srun a task aborted the step (PMI abort, MPI_Abort).
func (s *step) mpiAbort(rank, code int, msg string) {
	s.send(stepio.Frame{Kind: stepio.Abort, Node: uint32(s.l.NodeIndex), Task: uint32(rank), Code: int32(code), Data: []byte(msg)})
}

// maxFenceData bounds what srun may send for one fence: srun is the
// user's process, and the daemon must not hold whatever it sends.
const maxFenceData = 256 << 20

// fromSrun takes srun's KVSData and KVSFence frames.
func (p *stepPMI) fromSrun(f stepio.Frame) {
	switch f.Kind {
	case stepio.KVSData:
		if len(p.buf)+len(f.Data) > maxFenceData {
			// Too much: the fence gets nothing, which its tasks see
			// as missing keys, and the memory is not held.
			p.buf = nil
			return
		}
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

// pmixStart registers the step with the PMIx plugin and relays its
// events until the step ends; the plugin then forgets the step.
func (s *step) pmixStart(ctx context.Context) error {
	p := s.pmi
	l := s.l
	size := 0
	for _, rs := range l.PMIRanks {
		size += len(rs)
	}
	env, err := p.plugin.Setup(ctx, protocol.MPISetupRequest{
		MPIRequest: protocol.MPIRequest{Step: l.PMIJobID},
		UID:        s.cred.UID, GID: s.cred.GID, Nodes: l.Nodes, NodeIndex: l.NodeIndex, Ranks: l.PMIRanks, Size: size,
	})
	if err != nil {
		return fmt.Errorf("PMIx set-up: %w", err)
	}
	p.env = env
	go s.pmixEvents()
	return nil
}

func (s *step) pmixEvents() {
	p := s.pmi
	step := s.l.PMIJobID
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.done
		cancel()
	}()
	log := s.agent.logger.With("job", s.key.job, "step", s.key.step)
	for ctx.Err() == nil {
		// Next returns within a second: it is not cut short when the
		// step ends, which would be taken for a hung plugin.
		ev, err := p.plugin.Next(context.Background(), step)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("PMIx plugin", "err", err)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		switch ev.Kind {
		case protocol.MPIEventFence:
			all, err := s.exchange(ctx, ev.Epoch, ev.Data)
			if err != nil {
				continue
			}
			if err := p.plugin.Fence(ctx, step, ev.Epoch, all); err != nil {
				log.Warn("PMIx fence", "err", err)
			}
		case protocol.MPIEventAbort:
			s.mpiAbort(ev.Rank, ev.Code, fmt.Sprintf("PMIx abort by task %d with exit code %d: %s", ev.Rank, ev.Code, ev.Message))
		}
	}
	tctx, tcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer tcancel()
	if err := p.plugin.Teardown(tctx, step); err != nil {
		log.Debug("PMIx teardown", "err", err)
	}
}

// taskEnv gives a pmix task its variables (PMIX_NAMESPACE, PMIX_RANK, the
// server's address...) and SLURM_PMIX_MAPPING_SERV.
func (p *stepPMI) taskEnv(env []string, rank int, mapping string) []string {
	e := newEnvList(env)
	// srun's process mapping, as Slurm's mpi/pmix gives it to the step.
	e.set("SLURM_PMIX_MAPPING_SERV", mapping)
	for _, kv := range p.env[rank] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e.set(k, v)
		}
	}
	return e.list()
}

// taskSocket makes a pmi2 task's PMI socket: the daemon's end, and the
// end the task inherits as PMI_FD with the variables Slurm's mpi/pmi2
// sets.
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

// serve answers a pmi2 task's requests until it finalizes or ends.
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
