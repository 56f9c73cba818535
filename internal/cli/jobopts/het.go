package jobopts

// resetEachPass are the options a heterogeneous job's component does not
// take from the one before it (slurm_opt.c's reset_each_pass): its shape
// and placement. Every other option given for a component carries over
// to the next unless given again (--account, --time, --job-name...).
var resetEachPass = map[string]bool{
	"accel-bind": true, "bb": true, "bcast": true, "bcast-exclude": true, "compress": true,
	"consolidate-segments": true, "constraint": true, "contiguous": true, "core-spec": true,
	"cores-per-socket": true, "cpu-bind": true, "cpu-freq": true, "cpus-per-gpu": true,
	"cpus-per-task": true, "distribution": true, "exclusive": true, "extra-node-info": true,
	"gpu-bind": true, "gpu-freq": true, "gpus": true, "gpus-per-node": true, "gpus-per-socket": true,
	"gpus-per-task": true, "gres": true, "gres-flags": true, "hint": true, "licenses": true,
	"mail-type": true, "mail-user": true, "mem-bind": true, "mem-per-cpu": true, "mem-per-gpu": true,
	"mincpus": true, "network": true, "nodefile": true, "nodelist": true, "nodes": true, "ntasks": true,
	"ntasks-per-core": true, "ntasks-per-gpu": true, "ntasks-per-node": true, "ntasks-per-socket": true,
	"ntasks-per-tres": true, "overcommit": true, "oversubscribe": true, "partition": true,
	"relative": true, "resources": true, "resv-ports": true, "segment": true, "send-libs": true,
	"sockets-per-node": true, "spread-job": true, "spread-segments": true, "switches": true,
	"tasks-per-node": true, "thread-spec": true, "threads-per-core": true, "tmp": true,
	"tres-bind": true, "tres-per-task": true, "use-min-nodes": true, "umask": true,
}

// NextComponent returns a parser for the next component of a
// heterogeneous job: the same command and configuration, with the
// options given so far that are not reset between components already
// applied, as Slurm's commands carry them from one component to the next.
func (p *Parser) NextComponent() (*Parser, error) {
	return p.NextComponentIn(p.cfg.LookupEnv)
}

// NextComponentIn is NextComponent for a component that reads its
// environment through lookup (srun in a heterogeneous job reads each
// component's variables under their plain names).
func (p *Parser) NextComponentIn(lookup func(string) (string, bool)) (*Parser, error) {
	var defs []*optDef
	var envs []envDef
	switch p.cmd {
	case cmdSrun:
		defs, envs = srunOptions(), srunEnv()
	case cmdSalloc:
		defs, envs = sallocOptions(), sallocEnv()
	default:
		defs, envs = sbatchOptions(), sbatchEnv()
	}
	cfg := p.cfg
	cfg.LookupEnv = lookup
	next := newParser(cfg, p.cmd, defs, envs)
	for _, d := range p.defs {
		src, ok := p.opts.Sources[d.id]
		if !ok || resetEachPass[d.id] {
			continue
		}
		nd := next.defByID(d.id)
		if nd == nil {
			continue
		}
		if err := next.apply(nd, d.raw, d.hasRaw, src); err != nil {
			return nil, err
		}
	}
	return next, nil
}
