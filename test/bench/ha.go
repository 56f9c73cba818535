package main

import (
	"context"
	"fmt"
	"strings"
)

// haControllers are the controller counts figure ha compares: the single
// controller (one SlurmctldHost line, no raft, the path of every other
// figure) and three and five replicated ones.
var haControllers = []int{1, 3, 5}

// haVariant is one row of figure ha.
type haVariant struct {
	controllers int
	hold        bool
	// follower: the clients use a follower's socket, whose every request
	// is forwarded to the leader.
	follower bool
	// acct keeps the single controller's embedded accounting store (the
	// default, and figure rest's setting); every other variant runs
	// accounting_storage/none, which replicated controllers require.
	acct bool
}

func (v haVariant) figure(sz sizes) figure {
	key := fmt.Sprintf("ha-rest-submit-unix-%dctl", v.controllers)
	title := fmt.Sprintf("REST submissions/s, %d clients, unix, ", sz.Clients)
	if v.controllers == 1 {
		title += "a single controller"
	} else {
		title += fmt.Sprintf("%d replicated controllers", v.controllers)
	}
	to := "the controller's socket"
	switch {
	case v.follower:
		key += "-follower"
		title += ", clients on a follower's socket (forwarded to the leader)"
		to = "a follower's socket"
	case v.controllers > 1:
		title += ", clients on the leader's socket"
		to = "the leader's socket"
	}
	if v.acct {
		key += "-acct"
		title += ", embedded accounting store"
	} else {
		title += ", accounting_storage/none"
	}
	if v.hold {
		key += "-held"
		title += ", held"
	} else {
		title += ", not held (jobs run)"
	}
	return figure{Key: key, Title: title, Unit: "jobs/s", Higher: true,
		Command: fmt.Sprintf("POST /slurm/v0.0.44/job/submit x %d from %d clients to %s; SlurmctldHost x %d", sz.RESTJobs, sz.Clients, to, v.controllers)}
}

// measureHA is what replicating the controller costs a REST client:
// held-job submissions/s with 1, 3 and 5 controllers (each write is
// answered once a majority has it on disk), then the same through a
// follower, then jobs that run. Every cluster runs
// accounting_storage/none, as replicated controllers must, so that the
// single controller is compared like for like; one more row keeps its
// embedded accounting store, the setting of figure rest. Each run
// measures every count in turn (1, 3, 5, 1, 3, 5, ...) on a fresh
// cluster, so that the machine's drift falls on all alike. A run that
// fails (a leader lost under load, say) is logged and counted in the
// note rather than ending the figure.
func measureHA(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	if _, ok := sys.(*droverSystem); !ok {
		return nil
	}
	variants := []haVariant{{controllers: 1, hold: true, acct: true}}
	for _, n := range haControllers {
		variants = append(variants, haVariant{controllers: n, hold: true})
	}
	for _, n := range haControllers {
		if n > 1 {
			variants = append(variants, haVariant{controllers: n, hold: true, follower: true})
		}
	}
	for _, n := range haControllers {
		variants = append(variants, haVariant{controllers: n})
	}
	samples := make([][]float64, len(variants))
	failed := make([][]string, len(variants))
	for run := range sz.Runs {
		for i, v := range variants {
			if err := ctx.Err(); err != nil {
				return err
			}
			f := v.figure(sz)
			rate, err := haRun(ctx, sys, sz, v, rec)
			if err != nil {
				rec.log("  %s run %d: %v", f.Key, run+1, err)
				failed[i] = append(failed[i], err.Error())
				continue
			}
			rec.log("  %s run %d: %s jobs/s", f.Key, run+1, fmtValue(rate))
			samples[i] = append(samples[i], rate)
		}
	}
	for i, v := range variants {
		note := ""
		if len(failed[i]) > 0 {
			note = fmt.Sprintf("%d runs failed: %s", len(failed[i]), strings.Join(failed[i], "; "))
		}
		if len(samples[i]) == 0 && note != "" {
			rec.log("%s: every run failed", v.figure(sz).Key)
			continue
		}
		rec.add(v.figure(sz), sys.Name(), samples[i], note)
	}
	return nil
}

// haRun is one sample of figure ha on a fresh cluster.
func haRun(ctx context.Context, sys system, sz sizes, v haVariant, rec *recorder) (float64, error) {
	in, err := sys.Fresh(ctx, freshOptions{Controllers: v.controllers, ViaFollower: v.follower, NoAccounting: !v.acct})
	if err != nil {
		return 0, err
	}
	defer in.Close()
	subs, err := in.Submitters(transportUnix, sz.Clients, v.hold)
	if err != nil {
		return 0, err
	}
	before := daemonCPU(in)
	wall, ids, err := submitLoad(ctx, subs, sz.RESTJobs)
	if err != nil {
		return 0, err
	}
	logDaemonCPU(rec, fmt.Sprintf("%s, %d controllers", sys.Name(), v.controllers), before, daemonCPU(in), len(ids))
	return float64(len(ids)) / wall.Seconds(), nil
}
