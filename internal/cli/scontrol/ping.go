package scontrol

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/droverapi"
)

// ping is one controller's line of scontrol ping.
type ping struct {
	readmodel.Ping
	// Latency is in microseconds; Leader whether it leads (known from
	// Drover's controllers list only).
	Latency int64
	Leader  bool
}

// loadControllers asks for Drover's list of the controllers
// (droverapi.ControllersPath), which any controller answers from its own
// pings, leader or not. ok is false when it cannot be had (a controller
// without it answers 404, or none answers): the caller asks for
// slurmrestd's ping instead.
func (c *cmd) loadControllers(ctx context.Context) (*droverapi.Controllers, bool) {
	if c.env.Call == nil {
		return nil, false
	}
	var out droverapi.Controllers
	if err := c.env.Call(ctx, http.MethodGet, droverapi.ControllersPath, nil, &out); err != nil {
		return nil, false
	}
	return &out, len(out.Controllers) > 0
}

// loadPings asks for the state of every slurmctld: Drover's controllers
// list when the controller has it, else slurmrestd's ping.
func (c *cmd) loadPings(ctx context.Context) ([]ping, *restError) {
	if list, ok := c.loadControllers(ctx); ok {
		out := make([]ping, len(list.Controllers))
		for i, ctl := range list.Controllers {
			pinged := "DOWN"
			if ctl.Responding {
				pinged = "UP"
			}
			out[i] = ping{Ping: readmodel.Ping{Hostname: ctl.Name, Pinged: pinged, Responding: ctl.Responding, Mode: ctl.Mode, Primary: i == 0},
				Latency: ctl.LatencyMicros, Leader: ctl.Leader}
		}
		return out, nil
	}
	ans, err := readmodel.GetPings(ctx, c.env.Client)
	if err != nil {
		re, _ := fromTransport(err)
		return nil, re
	}
	if re := fromAnswer(ans.Errors, ans.Status); re != nil {
		return nil, re
	}
	out := make([]ping, len(ans.Records))
	for i, p := range ans.Records {
		out[i] = ping{Ping: p}
	}
	return out, nil
}

// printPings is scontrol's _print_ping: one line per controller, success
// when at least one answered. When slurm.conf lists several controllers,
// the line of the one that leads ends with " (leader)", Drover's
// addition (Slurm's backups are idle until they take over, so its
// scontrol needs no such mark):
//
//	Slurmctld(primary) at ctl0 is UP
//	Slurmctld(backup1) at ctl1 is UP (leader)
//	Slurmctld(backup2) at ctl2 is DOWN
//
// A single controller's line is Slurm's, unmarked.
func (c *cmd) printPings(ctx context.Context) {
	pings, re := c.loadPings(ctx)
	if re != nil {
		// The controller could not be reached at all: Slurm reports the
		// primary as DOWN (its host is only known from slurm.conf).
		host := firstControlHost(c.localConf())
		if host == "" {
			c.perror("slurm_ping error", re)
			return
		}
		pings = []ping{{Ping: readmodel.Ping{Hostname: host, Pinged: "DOWN", Mode: "primary", Primary: true}}}
	}
	if c.doc != docNone {
		c.pingDoc(pings)
		return
	}
	ok, down := false, false
	for i, p := range pings {
		state := "DOWN"
		if p.Pinged == "UP" || p.Responding {
			state = "UP"
			ok = true
		} else {
			down = true
		}
		mode := p.Mode
		if mode == "" {
			mode = droverapi.ControllerMode(i, len(pings))
		}
		mark := ""
		if p.Leader && len(pings) > 1 {
			mark = " (leader)"
		}
		fmt.Fprintf(c.env.Stdout, "Slurmctld(%s) at %s is %s%s\n", mode, p.Hostname, state, mark)
	}
	if !ok {
		c.exitCode = 1
	}
	if down && c.env.User.UID == 0 {
		fmt.Fprintln(c.env.Stdout, "*****************************************")
		fmt.Fprintln(c.env.Stdout, "** RESTORE SLURMCTLD DAEMON TO SERVICE **")
		fmt.Fprintln(c.env.Stdout, "*****************************************")
	}
}

// takeover is `scontrol takeover [INDEX|HOST]`: the controller at INDEX
// of the SlurmctldHost lines (1, the first backup, by default, as in
// Slurm) or named HOST (Drover's addition) takes over from the one that
// leads (POST droverapi.TakeoverPath). As Slurm's, it prints nothing
// when done; a refusal prints "slurm_takeover error: " and the reason,
// and exits 1.
func (c *cmd) takeover(ctx context.Context, tag string, args []string) {
	if len(args) > 1 {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "%s: too many arguments\n", tag)
		return
	}
	arg := ""
	if len(args) == 1 {
		arg = args[0]
	}
	target, err := droverapi.ParseTakeoverTarget(arg)
	if err != nil {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "%s: %v\n", tag, err)
		return
	}
	if c.env.Call == nil {
		c.perror("slurm_takeover error", &restError{Message: "Requested operation not supported on this system"})
		return
	}
	err = c.env.Call(ctx, http.MethodPost, droverapi.TakeoverPath+"?controller="+target.String(), nil, nil)
	if err == nil {
		return
	}
	var refused *connect.RequestError
	if !errors.As(err, &refused) {
		c.perror("slurm_takeover error", &restError{Message: connectFailure})
		return
	}
	// slurm_perror's message, with the reason before it when the
	// controller gave one ("no backup controller defined: ...").
	msg := refused.Message
	if d := strings.TrimSuffix(refused.Description, ": "+refused.Message); d != "" && d != refused.Message {
		msg = refused.Description
	}
	c.perror("slurm_takeover error", &restError{Message: msg})
}

// firstControlHost returns the host of slurm.conf's first SlurmctldHost
// ("ctl0" of "ctl0(10.0.0.1)").
func firstControlHost(conf localConfig) string {
	h := conf.get("SlurmctldHost")
	if h == "" {
		h = conf.get("ControlMachine")
	}
	for i := 0; i < len(h); i++ {
		if h[i] == '(' || h[i] == ',' {
			return h[:i]
		}
	}
	return h
}
