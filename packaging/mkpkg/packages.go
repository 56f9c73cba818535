package main

// The packages, split as Slurm's own are (Debian's slurm-client,
// slurmctld, slurmd, slurmrestd, sackd, slurm-wlm-nvml-plugin): a host
// installs the roles it has. Paths are relative to an architecture's
// staging folder (see stage).

// pkg is one package of both formats.
type pkg struct {
	name, summary string
	// description is the long description, one paragraph.
	description string
	// depends names other Drover packages, which must be of the same
	// version; debDepends and rpmDepends are the system's.
	depends                []string
	debDepends, rpmDepends []string
	recommends             []string
	debSuggests            []string
	rpmSuggests            []string
	// conflicts are packages that install the same paths (Slurm's own).
	debConflicts, rpmConflicts []string
	files                      []file
	// daemon, when set, gives the unit and the maintainer scripts.
	daemon *daemonScripts
	// common marks drover itself: it gets common-postinst.sh.
	common bool
	// noarch marks a package without programs (units, scripts): built
	// once, for every architecture ("all", "noarch").
	noarch bool
	// needs is a staged program without which the package is not built
	// (a cgo plugin that could not be built for that architecture).
	needs string
}

// file is one path of a package: src under the staging folder (a glob
// for several), dst on the host.
type file struct {
	src, dst string
	// kind is nfpm's content type: "" (a file), "config|noreplace",
	// "dir"; packager limits it to "deb" or "rpm".
	kind, packager string
	mode           uint32
}

// daemonScripts fill the templates in packaging/scripts.
type daemonScripts struct {
	Package, Unit, What string
	// User is an account to create (restd's slurmrestd); slurm comes
	// with drover itself.
	User, UserComment string
	Dirs              []scriptDir
	Keygen            bool
	// Purge is what a Debian purge deletes.
	Purge []string
}

type scriptDir struct{ Path, Owner, Mode string }

// commandPrograms are the drop-in commands, each a program in
// /usr/bin; their one-line summaries head their manual pages.
var commandPrograms = map[string]string{
	"sacct":    "display accounting data of jobs and job steps",
	"sacctmgr": "view and change the accounting associations, accounts, users and QOS",
	"salloc":   "obtain an allocation and run a command in it",
	"sbatch":   "submit a batch script",
	"scancel":  "signal or cancel jobs, job arrays and job steps",
	"scontrol": "view or change the cluster's configuration and state",
	"sdiag":    "view the scheduler's and controller's statistics",
	"seff":     "report the efficiency of a finished job",
	"sinfo":    "view the nodes and partitions",
	"sprio":    "view the factors of pending jobs' priorities",
	"squeue":   "view the jobs in the queue",
	"sreport":  "report the cluster's usage from the accounting",
	"srun":     "run parallel jobs and job steps",
	"sshare":   "view the fair-share information of associations",
	"sstat":    "display the resource use of running jobs' steps",
}

func packages() []pkg {
	unitDeb := "/lib/systemd/system/"
	unitRPM := "/usr/lib/systemd/system/"
	daemonFiles := func(name string) []file {
		return []file{
			{src: "systemd/" + name + ".service", dst: unitDeb + name + ".service", packager: "deb", mode: 0o644},
			{src: "systemd/" + name + ".service", dst: unitRPM + name + ".service", packager: "rpm", mode: 0o644},
			{src: "etc/" + name, dst: "/etc/default/" + name, kind: "config|noreplace", packager: "deb", mode: 0o644},
			{src: "etc/" + name, dst: "/etc/sysconfig/" + name, kind: "config|noreplace", packager: "rpm", mode: 0o644},
		}
	}
	return []pkg{
		{
			name:    "drover",
			summary: "Slurm-compatible workload manager, common files",
			description: "Drover runs batch and interactive jobs on a cluster as Slurm does, " +
				"reading Slurm's own slurm.conf and speaking slurmrestd's REST API. " +
				"This package holds the drover program (its daemons and admin tools), " +
				"the SlurmUser account, manual pages and shell completions.",
			debDepends: []string{"passwd"},
			rpmDepends: []string{"shadow-utils"},
			files: []file{
				{src: "sbin/drover", dst: "/usr/sbin/drover", mode: 0o755},
				{src: "man/drover*.1.gz", dst: "/usr/share/man/man1/", mode: 0o644},
				{src: "completions/drover.bash", dst: "/usr/share/bash-completion/completions/drover", mode: 0o644},
				{src: "completions/_drover", dst: "/usr/share/zsh/vendor-completions/_drover", packager: "deb", mode: 0o644},
				{src: "completions/_drover", dst: "/usr/share/zsh/site-functions/_drover", packager: "rpm", mode: 0o644},
				{src: "completions/drover.fish", dst: "/usr/share/fish/vendor_completions.d/drover.fish", mode: 0o644},
			},
			common: true,
		},
		{
			name:    "drover-client",
			summary: "Slurm-compatible workload manager, user commands",
			description: "The commands Slurm's users and scripts call (sbatch, srun, salloc, " +
				"squeue, scancel, scontrol, sinfo, sacct, sacctmgr, sprio, sshare, sreport, " +
				"sstat, seff, sdiag), each a small program that talks to the Drover controller " +
				"through slurmrestd's REST API. A login host also needs drover-sackd.",
			recommends:   []string{"drover-sackd"},
			debConflicts: []string{"slurm-client"},
			rpmConflicts: []string{"slurm"},
			files: []file{
				{src: "bin/*", dst: "/usr/bin/", mode: 0o755},
				{src: "man/s*.1.gz", dst: "/usr/share/man/man1/", mode: 0o644},
				{src: "lintian/drover-client", dst: "/usr/share/lintian/overrides/drover-client", packager: "deb", mode: 0o644},
			},
		},
		{
			name:    "drover-controller",
			summary: "Slurm-compatible workload manager, controller",
			description: "The controller (Slurm's slurmctld, with slurmrestd's API built in): " +
				"it holds the queue, schedules jobs with backfill, and keeps the " +
				"accounting. It ships /etc/slurm/slurm.conf; its first install makes the " +
				"cluster key when there is none.",
			depends:      []string{"drover"},
			debConflicts: []string{"slurmctld"},
			rpmConflicts: []string{"slurm-slurmctld"},
			// slurm.conf comes with the controller: the other hosts get it
			// from the controller (configless) or from their admin, as
			// with Slurm, and a node or login host without one looks
			// for the controller in DNS.
			files: append(daemonFiles("drover-controller"),
				file{src: "etc/slurm.conf", dst: "/etc/slurm/slurm.conf", kind: "config|noreplace", mode: 0o644}),
			noarch: true,
			daemon: &daemonScripts{
				Package: "drover-controller", Unit: "drover-controller.service",
				What:   "the state folder, the cluster key and the unit",
				Dirs:   []scriptDir{{"/var/spool/slurmctld", "slurm", "0700"}},
				Keygen: true,
				Purge:  []string{"/var/spool/slurmctld"},
			},
		},
		{
			name:    "drover-node",
			summary: "Slurm-compatible workload manager, compute node daemon",
			description: "The node daemon (Slurm's slurmd): it runs the jobs' steps in cgroups " +
				"as their users, with the launch plugins for NCCL and PyTorch " +
				"distributed jobs and for OCI containers. Batch scripts call srun on " +
				"their node, so the commands come with it.",
			depends:      []string{"drover", "drover-client"},
			debSuggests:  []string{"runc | crun"},
			rpmSuggests:  []string{"runc"},
			debConflicts: []string{"slurmd"},
			rpmConflicts: []string{"slurm-slurmd"},
			files: append(daemonFiles("drover-node"),
				file{src: "libexec/drover-spank-nccl", dst: "/usr/libexec/drover/drover-spank-nccl", mode: 0o755},
				file{src: "libexec/drover-spank-container", dst: "/usr/libexec/drover/drover-spank-container", mode: 0o755},
			),
			daemon: &daemonScripts{
				Package: "drover-node", Unit: "drover-node.service",
				What:  "the spool folder and the unit",
				Dirs:  []scriptDir{{"/var/spool/slurmd", "root", "0755"}},
				Purge: []string{"/var/spool/slurmd"},
			},
		},
		{
			name:    "drover-gres-nvml",
			summary: "Slurm-compatible workload manager, NVIDIA GPU plugin",
			description: "The plugin that finds a node's NVIDIA GPUs, their links and " +
				"failures through NVML (gres.conf AutoDetect=nvml). It loads the NVIDIA " +
				"driver's libnvidia-ml.so.1 when it runs, which comes with the driver.",
			depends:     []string{"drover-node"},
			debDepends:  []string{"libc6"},
			debSuggests: []string{"libnvidia-ml1"},
			rpmSuggests: []string{"nvidia-driver-NVML"},
			files: []file{
				{src: "libexec/drover-gres-nvml", dst: "/usr/libexec/drover/drover-gres-nvml", mode: 0o755},
			},
			needs: "libexec/drover-gres-nvml",
		},
		{
			name:    "drover-mpi-pmix",
			summary: "Slurm-compatible workload manager, PMIx plugin",
			description: "The plugin behind srun --mpi=pmix: a PMIx server for the tasks of " +
				"each step, built on the system's OpenPMIx library.",
			depends:    []string{"drover-node"},
			debDepends: []string{"libc6", "libpmix2"},
			rpmDepends: []string{"pmix"},
			files: []file{
				{src: "libexec/drover-mpi-pmix", dst: "/usr/libexec/drover/drover-mpi-pmix", mode: 0o755},
			},
			needs: "libexec/drover-mpi-pmix",
		},
		{
			name:    "drover-restd",
			summary: "Slurm-compatible workload manager, REST API daemon",
			description: "A REST API daemon (Slurm's slurmrestd) for hosts other than the " +
				"controller's, serving the same slurmrestd OpenAPI versions and passing " +
				"requests to the controller.",
			depends:      []string{"drover"},
			debConflicts: []string{"slurmrestd"},
			rpmConflicts: []string{"slurm-slurmrestd"},
			files:        daemonFiles("drover-restd"),
			noarch:       true,
			daemon: &daemonScripts{
				Package: "drover-restd", Unit: "drover-restd.service",
				What: "the slurmrestd account and the unit",
				User: "slurmrestd", UserComment: "Slurm REST API daemon",
			},
		},
		{
			name:    "drover-sackd",
			summary: "Slurm-compatible workload manager, login host credential service",
			description: "The credential service of a login host (Slurm's sackd): it vouches " +
				"to the controller for the local users who run the commands, and with " +
				"--conf-server keeps the host's configuration from the controller.",
			depends:      []string{"drover"},
			debConflicts: []string{"sackd"},
			rpmConflicts: []string{"slurm-sackd"},
			files:        daemonFiles("drover-sackd"),
			noarch:       true,
			daemon: &daemonScripts{
				Package: "drover-sackd", Unit: "drover-sackd.service",
				What: "the unit",
			},
		},
	}
}
