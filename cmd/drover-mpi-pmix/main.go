//go:build cgo && pmix

// Command drover-mpi-pmix is Drover's PMIx plugin (srun --mpi=pmix): the
// node daemon starts it, and it runs one PMIx server (Debian's libpmix)
// for the steps on its node that ask for PMIx. It registers each step's
// namespace and ranks, gives each task the variables PMIx clients find
// their server by, and passes the server's fences to the node daemon,
// which exchanges their data with the step's other nodes through srun.
//
//	drover-mpi-pmix --check    exit 0 when PMIx can be served
//
// Arguments from the node daemon: tmpdir=DIR, the server's folder.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--check" {
		return
	}
	sdk.ServeMPI(&sdk.MPI{Init: initServer, Setup: setup, Next: next, Fence: fence, Teardown: teardown})
}

// fenceCall is a fence the server waits on.
type fenceCall struct{ cbfunc, cbdata unsafe.Pointer }

// stepState is one step's namespace on the server.
type stepState struct {
	events  chan protocol.MPIEvent
	epoch   int32
	pending map[int32]fenceCall
	// gone is closed when the step is torn down: events nobody will
	// read are dropped.
	gone chan struct{}
}

// post queues an event without holding the server's thread.
func (st *stepState) post(ev protocol.MPIEvent) {
	go func() {
		select {
		case st.events <- ev:
		case <-st.gone:
		}
	}()
}

var (
	mu    sync.Mutex
	steps = map[string]*stepState{}
)

// nspace is a step's PMIx namespace, as Slurm's pmix plugin names it.
func nspace(step string) string { return "slurm.pmix." + step }

func initServer(args []string) error {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("drover-pmix-%d", os.Getpid()))
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "tmpdir="); ok {
			dir = v
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Job data goes to the clients through their sockets, not through
	// shared-memory files in dir, which would have to be theirs to read.
	os.Setenv("PMIX_MCA_gds", "hash")
	return serverInit(dir)
}

func setup(req *protocol.MPISetupRequest) (*protocol.MPISetupReply, error) {
	if req.NodeIndex < 0 || req.NodeIndex >= len(req.Ranks) || len(req.Nodes) != len(req.Ranks) {
		return nil, errors.New("step layout does not name this node")
	}
	ns := nspace(req.Step)
	mu.Lock()
	if steps[ns] != nil {
		mu.Unlock()
		return nil, fmt.Errorf("step %s is already set up", req.Step)
	}
	steps[ns] = &stepState{events: make(chan protocol.MPIEvent, 64), pending: map[int32]fenceCall{}, gone: make(chan struct{})}
	mu.Unlock()
	env, err := registerStep(ns, req.Size, req.Nodes, req.Ranks, req.NodeIndex, req.Nodes[req.NodeIndex], req.UID, req.GID)
	if err != nil {
		mu.Lock()
		delete(steps, ns)
		mu.Unlock()
		return nil, err
	}
	return &protocol.MPISetupReply{Env: env}, nil
}

func next(ctx context.Context, req *protocol.MPIStepRequest) (*protocol.MPIEvent, error) {
	mu.Lock()
	st := steps[nspace(req.Step)]
	mu.Unlock()
	if st == nil {
		return nil, fmt.Errorf("no step %s", req.Step)
	}
	select {
	case ev := <-st.events:
		return &ev, nil
	case <-time.After(time.Second):
		return &protocol.MPIEvent{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func fence(req *protocol.MPIFenceRequest) error {
	mu.Lock()
	st := steps[nspace(req.Step)]
	var call fenceCall
	ok := false
	if st != nil {
		call, ok = st.pending[req.Epoch]
		delete(st.pending, req.Epoch)
	}
	mu.Unlock()
	if !ok {
		return fmt.Errorf("no fence %d in step %s", req.Epoch, req.Step)
	}
	completeFence(call.cbfunc, call.cbdata, req.Data, false)
	return nil
}

func teardown(req *protocol.MPIStepRequest) error {
	ns := nspace(req.Step)
	mu.Lock()
	st := steps[ns]
	delete(steps, ns)
	mu.Unlock()
	if st == nil {
		return nil
	}
	close(st.gone)
	for _, call := range st.pending {
		completeFence(call.cbfunc, call.cbdata, nil, true)
	}
	deregisterStep(ns)
	return nil
}

// onFence is the server asking for a fence of the node's tasks of a step.
func onFence(ns string, data []byte, cbfunc, cbdata unsafe.Pointer) {
	mu.Lock()
	st := steps[ns]
	if st == nil {
		mu.Unlock()
		completeFence(cbfunc, cbdata, nil, true)
		return
	}
	st.epoch++
	ev := protocol.MPIEvent{Kind: protocol.MPIEventFence, Epoch: st.epoch, Data: data}
	st.pending[st.epoch] = fenceCall{cbfunc, cbdata}
	mu.Unlock()
	// The server's own thread must not wait on the node daemon.
	st.post(ev)
}

// onAbort is a client's PMIx_Abort.
func onAbort(ns string, rank, status int, msg string) {
	mu.Lock()
	st := steps[ns]
	mu.Unlock()
	if st == nil {
		return
	}
	st.post(protocol.MPIEvent{Kind: protocol.MPIEventAbort, Rank: rank, Code: status, Message: msg})
}
