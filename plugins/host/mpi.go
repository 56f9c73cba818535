package host

import (
	"context"
	"errors"

	"github.com/droverhq/drover/plugins/protocol"
)

// MPI calls an MPI plugin (protocol.KindMPI) on a node.
type MPI struct {
	*Plugin
}

// OpenMPI prepares an MPI plugin; spec.Kind is set for it. Its calls wait
// for events, so spec.Timeout should exceed the plugin's second of Next.
func OpenMPI(spec Spec) *MPI {
	spec.Kind = protocol.KindMPI
	return &MPI{Plugin: Open(spec)}
}

func (m *MPI) req(step string) protocol.MPIRequest {
	return protocol.MPIRequest{Args: m.Args(), Step: step}
}

// Setup prepares a step and returns each local rank's environment.
func (m *MPI) Setup(ctx context.Context, req protocol.MPISetupRequest) (map[int][]string, error) {
	req.MPIRequest = m.req(req.Step)
	var out protocol.MPISetupReply
	if err := m.Call(ctx, protocol.MPIMethodSetup, &req, &out); err != nil {
		return nil, err
	}
	if out.Error != "" {
		return nil, errors.New(out.Error)
	}
	return out.Env, nil
}

// Next waits for the step's next event (Kind MPIEventNone: none yet).
func (m *MPI) Next(ctx context.Context, step string) (protocol.MPIEvent, error) {
	var out protocol.MPIEvent
	err := m.Call(ctx, protocol.MPIMethodNext, &protocol.MPIStepRequest{MPIRequest: m.req(step)}, &out)
	return out, err
}

// Fence completes fence epoch with every node's data.
func (m *MPI) Fence(ctx context.Context, step string, epoch int32, data []byte) error {
	var out protocol.MPIReply
	if err := m.Call(ctx, protocol.MPIMethodFence, &protocol.MPIFenceRequest{MPIRequest: m.req(step), Epoch: epoch, Data: data}, &out); err != nil {
		return err
	}
	if out.Error != "" {
		return errors.New(out.Error)
	}
	return nil
}

// Teardown forgets a step.
func (m *MPI) Teardown(ctx context.Context, step string) error {
	var out protocol.MPIReply
	if err := m.Call(ctx, protocol.MPIMethodTeardown, &protocol.MPIStepRequest{MPIRequest: m.req(step)}, &out); err != nil {
		return err
	}
	if out.Error != "" {
		return errors.New(out.Error)
	}
	return nil
}
