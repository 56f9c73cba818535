package scontrol

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/cli/readmodel"
)

// loadPings asks the controller for the state of every slurmctld.
func (c *cmd) loadPings(ctx context.Context) ([]readmodel.Ping, *restError) {
	ans, err := readmodel.GetPings(ctx, c.env.Client)
	if err != nil {
		re, _ := fromTransport(err)
		return nil, re
	}
	if re := fromAnswer(ans.Errors, ans.Status); re != nil {
		return nil, re
	}
	return ans.Records, nil
}

// printPings is scontrol's _print_ping: one line per controller, success
// when at least one answered.
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
		pings = []readmodel.Ping{{Hostname: host, Pinged: "DOWN", Mode: "primary", Primary: true}}
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
			switch {
			case i == 0:
				mode = "primary"
			case len(pings) == 2:
				mode = "backup"
			default:
				mode = fmt.Sprintf("backup%d", i)
			}
		}
		fmt.Fprintf(c.env.Stdout, "Slurmctld(%s) at %s is %s\n", mode, p.Hostname, state)
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
