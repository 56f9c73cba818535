package jobopts

import "fmt"

// pickOptions builds a command's option table from the names in its Slurm
// order (slurm_opt.c's common_options, keeping the entries the command
// accepts): each name is taken from the command's own definitions when it
// has one (an option whose meaning differs between commands, such as -W),
// else from the shared ones, so that an option accepted by several commands
// keeps one definition. Options without a long name (reachable only through
// environment variables) are named by id. A name found nowhere is a
// programming error.
func pickOptions(names []string, shared []*optDef, own ...[]*optDef) []*optDef {
	index := map[string]*optDef{}
	add := func(defs []*optDef) {
		for _, d := range defs {
			key := d.long
			if key == "" {
				key = d.id
			}
			index[key] = d
		}
	}
	add(shared)
	for _, defs := range own {
		add(defs)
	}
	out := make([]*optDef, 0, len(names))
	for _, n := range names {
		d, ok := index[n]
		if !ok {
			panic(fmt.Sprintf("jobopts: no definition for option %q", n))
		}
		out = append(out, d)
	}
	return out
}

// alias is another spelling of d (srun's --cpu_bind for --cpu-bind): same
// behaviour and id, left out of --help.
func alias(d *optDef, long string) *optDef {
	a := *d
	a.long = long
	a.hidden = true
	return &a
}

// allocOptions are the options srun and salloc share and sbatch lacks.
func allocOptions() []*optDef {
	return []*optDef{
		{
			spec:    spec{long: "immediate", short: 'I', arg: optionalArgument, id: "immediate"},
			argName: "secs", usage: "exit if resources not available in \"secs\"",
			set: func(p *Parser, v string, has bool) error {
				if !has {
					// DEFAULT_IMMEDIATE
					p.opts.Immediate = Some(1)
					return nil
				}
				// Slurm names it without dashes here.
				n, err := parseInt("immediate", v, false)
				if err != nil {
					return err
				}
				p.opts.Immediate = Some(n)
				return nil
			},
			reset: func(o *Options) { o.Immediate = Maybe[int]{} },
		},
		unsupported("x11", 0, optionalArgument, "forward X11 graphics"),
	}
}
