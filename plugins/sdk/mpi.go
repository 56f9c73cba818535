package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/droverhq/drover/plugins/protocol"
)

// MPI is an MPI plugin: it serves an MPI type's process-management
// interface to the tasks of the steps that ask for it on its node.
//
// Drover calls Init once per plugin process with the plugin's arguments,
// before any other function.
type MPI struct {
	// Init sets the plugin up; nil: nothing to set up.
	Init func(args []string) error
	// Setup prepares a step and returns each local rank's environment.
	Setup func(req *protocol.MPISetupRequest) (*protocol.MPISetupReply, error)
	// Next waits (about a second at most) for the step's next event.
	Next func(ctx context.Context, req *protocol.MPIStepRequest) (*protocol.MPIEvent, error)
	// Fence completes a fence with every node's data.
	Fence func(req *protocol.MPIFenceRequest) error
	// Teardown forgets a step.
	Teardown func(req *protocol.MPIStepRequest) error

	mu     sync.Mutex
	inited bool
}

// ServeMPI serves m until Drover stops the plugin. It does not return.
func ServeMPI(m *MPI) {
	serve(protocol.KindMPI, protocol.MPIMethods, m.handle)
}

func (m *MPI) init(args []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inited {
		return nil
	}
	if m.Init != nil {
		if err := m.Init(args); err != nil {
			return fmt.Errorf("init: %w", err)
		}
	}
	m.inited = true
	return nil
}

// Handle serves one call as the plugin process does, for testing a plugin
// without running it: req is the JSON request of method.
func (m *MPI) Handle(ctx context.Context, method string, req []byte) (any, error) {
	return m.handle(ctx, method, req)
}

func (m *MPI) handle(ctx context.Context, method string, req json.RawMessage) (any, error) {
	var common protocol.MPIRequest
	if err := json.Unmarshal(req, &common); err != nil {
		return nil, fmt.Errorf("decode %s: %w", method, err)
	}
	if err := m.init(common.Args); err != nil {
		return nil, err
	}
	errReply := func(err error) *protocol.MPIReply {
		if err != nil {
			return &protocol.MPIReply{Error: err.Error()}
		}
		return &protocol.MPIReply{}
	}
	switch method {
	case protocol.MPIMethodSetup:
		var in protocol.MPISetupRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		out, err := m.Setup(&in)
		if err != nil {
			return &protocol.MPISetupReply{Error: err.Error()}, nil
		}
		return out, nil
	case protocol.MPIMethodNext:
		var in protocol.MPIStepRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		return m.Next(ctx, &in)
	case protocol.MPIMethodFence:
		var in protocol.MPIFenceRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		return errReply(m.Fence(&in)), nil
	case protocol.MPIMethodTeardown:
		var in protocol.MPIStepRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		return errReply(m.Teardown(&in)), nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}
