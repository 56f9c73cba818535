package scontrol

import (
	"context"
	"fmt"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// loadPings asks the controller for the state of every slurmctld.
func (c *cmd) loadPings(ctx context.Context) (v0044.V0044ControllerPingArray, *restError) {
	res, err := c.env.Client.SlurmV0044GetPing(ctx)
	if err != nil {
		re, _ := fromTransport(err)
		return nil, re
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiPingArrayResp:
		if re := fromErrors(r.Errors, 200); re != nil && re.Code != 0 {
			return nil, re
		}
		return r.Pings, nil
	case *v0044.V0044OpenapiPingArrayRespStatusCode:
		if re := fromErrors(r.Response.Errors, r.StatusCode); re != nil {
			return nil, re
		}
		return nil, fromStatus(r.StatusCode)
	}
	return nil, fromStatus(0)
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
		pings = v0044.V0044ControllerPingArray{{
			Hostname: v0044.NewOptString(host),
			Pinged:   v0044.NewOptString("DOWN"),
			Mode:     v0044.NewOptString("primary"),
			Primary:  true,
		}}
	}
	ok, down := false, false
	for i, p := range pings {
		state := "DOWN"
		if p.Pinged.Or("") == "UP" || p.Responding {
			state = "UP"
			ok = true
		} else {
			down = true
		}
		mode := p.Mode.Or("")
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
		fmt.Fprintf(c.env.Stdout, "Slurmctld(%s) at %s is %s\n", mode, p.Hostname.Or(""), state)
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
