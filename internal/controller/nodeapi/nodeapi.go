// Package nodeapi is the controller's side of the node protocol
// (internal/nodeproto) over HTTP: it reads the node daemons' messages
// (registration, heartbeats, job and step ends, hardware failures),
// authenticates the daemon that sent each and answers it, as slurmctld
// answers slurmd's RPCs. What a message does to the cluster is the
// controller's (node registry, dispatch and their lock stay there); this
// package knows it only through the Controller interface.
package nodeapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Controller is what the node protocol asks of the controller
// (*controller.Controller): one method per message, taking the message
// as the daemon sent it, and the checker of the daemons' signatures.
type Controller interface {
	// Register records a node daemon's (re)registration.
	Register(ctx context.Context, reg nodeproto.Register) (nodeproto.RegisterReply, error)
	// Heartbeat records a ping; nodeproto.ErrUnregistered when the
	// daemon must register again.
	Heartbeat(hb nodeproto.Heartbeat) error
	// JobDone records the end of a batch job's processes.
	JobDone(ctx context.Context, d nodeproto.JobDone) error
	// StepUsage records what a node's tasks of a step used.
	StepUsage(ctx context.Context, d nodeproto.StepDone) error
	// ConfigFiles are the files for a node daemon (forNode) or a login
	// host; slurmerr.ConfiglessDisabled without enable_configless.
	ConfigFiles(forNode bool) (*nodeproto.ConfigReply, error)
	// Signer signs the configuration replies.
	Signer() *msgauth.Signer
	// DrainForHealth drains a node for a hardware failure.
	DrainForHealth(ctx context.Context, name, reason string) error
	// CountRPC counts one request of a kind for sdiag, with its time
	// when the front serving ctx's request follows it.
	CountRPC(ctx context.Context, kind string)
	// Auth checks signed requests sent to the controller.
	Auth() *msgauth.Verifier
	// Logger is where refusals are logged.
	Logger() *slog.Logger
}

// Handler serves the node daemons' protocol (/drover/v1/node/...):
// messages signed with the cluster key, each by the node it is about.
func Handler(ctl Controller) http.Handler {
	s := &server{ctl: ctl}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+nodeproto.PathRegister, s.handleRegister)
	mux.HandleFunc("POST "+nodeproto.PathHeartbeat, s.handleHeartbeat)
	mux.HandleFunc("POST "+nodeproto.PathJobDone, s.handleJobDone)
	mux.HandleFunc("POST "+nodeproto.PathStepDone, s.handleStepDone)
	mux.HandleFunc("POST "+nodeproto.PathNodeHealth, s.handleNodeHealth)
	top := http.NewServeMux()
	// Login hosts' credential services fetch the configuration too, so
	// that path has its own check.
	top.Handle("POST "+nodeproto.PathConfig, s.authDaemon(http.HandlerFunc(s.handleConfig)))
	top.Handle("/", s.authNode(mux))
	return top
}

// handleConfig hands out the configuration files (REQUEST_CONFIG): a
// node daemon gets slurmd's set, a login host the commands' set, as
// slurmctld answers CONFIG_REQUEST_SLURMD and CONFIG_REQUEST_SACKD.
func (s *server) handleConfig(w http.ResponseWriter, r *http.Request) {
	s.ctl.CountRPC(r.Context(), "REQUEST_CONFIG")
	claims := msgauth.ClaimsFrom(r.Context())
	forNode := strings.HasPrefix(claims.Issuer(), msgauth.Node(""))
	reply, err := s.ctl.ConfigFiles(forNode)
	if err != nil {
		nodeproto.Fail(w, http.StatusForbidden, err)
		return
	}
	// The reply is signed for the daemon that asked and bound to its
	// request: a node runs what it says (Prolog scripts included).
	body, err := json.Marshal(reply)
	if err != nil {
		nodeproto.Fail(w, http.StatusInternalServerError, err)
		return
	}
	tok, err := configless.SignReply(s.ctl.Signer(), claims.Issuer(), r, body)
	if err != nil {
		nodeproto.Fail(w, http.StatusServiceUnavailable, err)
		return
	}
	w.Header().Set(msgauth.Header, tok)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// server holds the controller the handlers answer for.
type server struct {
	ctl Controller
}

// handleNodeHealth drains a node whose daemon reports failed hardware.
func (s *server) handleNodeHealth(w http.ResponseWriter, r *http.Request) {
	s.ctl.CountRPC(r.Context(), "REQUEST_UPDATE_NODE")
	var h nodeproto.NodeHealth
	if err := nodeproto.Decode(r, &h); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	if !s.speaksFor(w, r, h.Name) {
		return
	}
	if err := s.ctl.DrainForHealth(r.Context(), h.Name, h.Reason); err != nil {
		status := http.StatusServiceUnavailable
		if slurmerr.CodeOf(err) == slurmerr.InvalidNodeName {
			status = http.StatusNotFound
		}
		nodeproto.Fail(w, status, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

func (s *server) handleRegister(w http.ResponseWriter, r *http.Request) {
	s.ctl.CountRPC(r.Context(), "REQUEST_NODE_REGISTRATION_STATUS")
	var reg nodeproto.Register
	if err := nodeproto.Decode(r, &reg); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	if !s.speaksFor(w, r, reg.Name) {
		return
	}
	reply, err := s.ctl.Register(r.Context(), reg)
	if err != nil {
		nodeproto.Fail(w, http.StatusNotFound, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, reply)
}

func (s *server) handleHeartbeat(w http.ResponseWriter, r *http.Request) {
	s.ctl.CountRPC(r.Context(), "REQUEST_PING")
	var hb nodeproto.Heartbeat
	if err := nodeproto.Decode(r, &hb); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	if !s.speaksFor(w, r, hb.Name) {
		return
	}
	if err := s.ctl.Heartbeat(hb); err != nil {
		// 409 is the daemon's cue to register again (nodeagent).
		status := http.StatusServiceUnavailable
		if errors.Is(err, nodeproto.ErrUnregistered) {
			status = http.StatusConflict
		}
		nodeproto.Fail(w, status, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

func (s *server) handleJobDone(w http.ResponseWriter, r *http.Request) {
	s.ctl.CountRPC(r.Context(), "REQUEST_COMPLETE_BATCH_SCRIPT")
	var d nodeproto.JobDone
	if err := nodeproto.Decode(r, &d); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	if !s.speaksFor(w, r, d.Node) {
		return
	}
	// A job the controller no longer knows is acknowledged: the daemon
	// repeats its report until it is.
	if err := s.ctl.JobDone(r.Context(), d); err != nil && slurmerr.CodeOf(err) != slurmerr.InvalidJobID {
		nodeproto.Fail(w, http.StatusServiceUnavailable, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

func (s *server) handleStepDone(w http.ResponseWriter, r *http.Request) {
	s.ctl.CountRPC(r.Context(), "REQUEST_STEP_COMPLETE")
	var d nodeproto.StepDone
	if err := nodeproto.Decode(r, &d); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	if !s.speaksFor(w, r, d.Node) {
		return
	}
	if err := s.ctl.StepUsage(r.Context(), d); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}
