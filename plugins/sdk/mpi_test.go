package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/droverhq/drover/plugins/protocol"
)

// The MPI service decodes each method's request for the plugin's
// functions and reports their refusals in the reply.
func TestMPIHandle(t *testing.T) {
	var got []string
	m := &MPI{
		Init: func(args []string) error { got = append(got, "init "+args[0]); return nil },
		Setup: func(req *protocol.MPISetupRequest) (*protocol.MPISetupReply, error) {
			if req.Size != 4 || req.NodeIndex != 1 {
				return nil, errors.New("bad layout")
			}
			return &protocol.MPISetupReply{Env: map[int][]string{2: {"PMIX_RANK=2"}}}, nil
		},
		Next: func(_ context.Context, req *protocol.MPIStepRequest) (*protocol.MPIEvent, error) {
			return &protocol.MPIEvent{Kind: protocol.MPIEventFence, Epoch: 1, Data: []byte(req.Step)}, nil
		},
		Fence:    func(req *protocol.MPIFenceRequest) error { return errors.New("no fence " + string(req.Data)) },
		Teardown: func(*protocol.MPIStepRequest) error { return nil },
	}
	call := func(method string, req any) any {
		b, _ := json.Marshal(req)
		out, err := m.Handle(context.Background(), method, b)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return out
	}
	base := protocol.MPIRequest{Args: []string{"tmpdir=/x"}, Step: "7.0"}
	if r := call(protocol.MPIMethodSetup, protocol.MPISetupRequest{MPIRequest: base, Size: 4, NodeIndex: 1}).(*protocol.MPISetupReply); r.Env[2][0] != "PMIX_RANK=2" {
		t.Errorf("setup: %+v", r)
	}
	if r := call(protocol.MPIMethodSetup, protocol.MPISetupRequest{MPIRequest: base}).(*protocol.MPISetupReply); r.Error != "bad layout" {
		t.Errorf("refused setup: %+v", r)
	}
	if ev := call(protocol.MPIMethodNext, protocol.MPIStepRequest{MPIRequest: base}).(*protocol.MPIEvent); ev.Kind != "fence" || string(ev.Data) != "7.0" {
		t.Errorf("next: %+v", ev)
	}
	if r := call(protocol.MPIMethodFence, protocol.MPIFenceRequest{MPIRequest: base, Data: []byte("d")}).(*protocol.MPIReply); r.Error != "no fence d" {
		t.Errorf("fence: %+v", r)
	}
	if r := call(protocol.MPIMethodTeardown, protocol.MPIStepRequest{MPIRequest: base}).(*protocol.MPIReply); r.Error != "" {
		t.Errorf("teardown: %+v", r)
	}
	if len(got) != 1 || got[0] != "init tmpdir=/x" {
		t.Errorf("init calls: %v", got)
	}
	if _, err := m.Handle(context.Background(), "Bogus", []byte("{}")); err == nil {
		t.Error("unknown method accepted")
	}
}
