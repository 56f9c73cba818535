// Package drovercmd dispatches the drover binary: by the name it was invoked as
// (a drop-in Slurm command) or by its subcommand (daemons and tools).
package drovercmd

import (
	// The commands in drover run plugins themselves.
	_ "github.com/droverhq/drover/internal/cli/plugopts/hosted"

	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/shim"
	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/daemon"
	"github.com/droverhq/drover/internal/devcluster"
)

// Main runs the program for argv and returns the exit code.
func Main(argv []string) int {
	prog := filepath.Base(argv[0])
	if cmd, ok := shim.Lookup(prog); ok {
		return shim.Run(prog, cmd, argv[1:])
	}
	root := newRoot()
	root.SetArgs(argv[1:])
	if err := root.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "drover: %v\n", err)
		return 1
	}
	return 0
}

// Root is drover's command tree, for the generator of its manual pages
// and shell completions (packaging/gendocs).
func Root() *cobra.Command { return newRoot() }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "drover",
		Short:         "Drover: a Slurm-compatible workload manager",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       daemon.Version,
	}
	root.SetVersionTemplate(versionLine())
	root.AddCommand(controllerCmd(), nodeCmd(), restdCmd(), sackdCmd(), keygenCmd(), devCmd(), simCmd(), versionCmd(), installShimsCmd())
	for _, name := range shim.Names() {
		cmd, _ := shim.Lookup(name)
		root.AddCommand(&cobra.Command{
			Use:                name,
			Short:              "run as " + name,
			Hidden:             true,
			DisableFlagParsing: true,
			RunE: func(_ *cobra.Command, args []string) error {
				if code := shim.Run(name, cmd, args); code != 0 {
					os.Exit(code)
				}
				return nil
			},
		})
	}
	return root
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func daemonFlags(cmd *cobra.Command, v *viper.Viper, names ...string) {
	help := map[string]string{
		"conf":                "slurm.conf to read (default $SLURM_CONF or /etc/slurm/slurm.conf)",
		"listen":              "address to listen on (default from slurm.conf)",
		"socket":              "controller unix socket (default StateSaveLocation/drover.sock)",
		"state-dir":           "override StateSaveLocation",
		"key-file":            "the cluster key every message is signed with (default slurm.jwks, else slurm.key, beside slurm.conf)",
		"name":                "this daemon's name in slurm.conf, a NodeName or a SlurmctldHost (default: short host name)",
		"spool-dir":           "override SlurmdSpoolDir",
		"gres-nvml":           "path of the GPU plugin drover-gres-nvml (default: beside drover)",
		"gres-nvml-args":      "the GPU plugin's arguments, key=value words (mock_cpus=16 ignore_xids=13,31...)",
		"nvml-mock":           "use go-nvml's mock machine (dgxa100, dgxh100) for AutoDetect=nvml",
		"gpu-health-interval": "how often the GPU plugin is asked for GPU failures (default 10s)",
		"log-level":           "debug, info, warn or error",
		"no-cgroups":          "track job processes by process group only",
		"dynamic":             "run a node slurm.conf does not list, with this definition (\"CPUs=8 RealMemory=16000 Features=x\"), as slurmd -Z",
		"pprof-listen":        "serve Go's profiler (/debug/pprof/) on this address (off by default)",
		"recover":             "replicated controllers that survived the loss of a majority: start each once with this, slurm.conf listing only them, to make them the cluster (what only the lost controllers held is lost)",
		"rest-max-body":       "largest REST request body accepted, in bytes or as 64mb, 1gb (default 16mb); larger ones get 413",
		"conf-server":         "fetch the configuration from these controllers, HOST[:PORT][,HOST2...] in order (configless, as slurmd --conf-server); without it and without a local slurm.conf, from the DNS SRV record _slurmctld._tcp",
		"run-conf":            "the link to the node's configuration cache that commands on the host look in (\"\" for none)",
		"ca-cert-file":        "the CA certificate to fetch the configuration over TLS with (configless under TLSType=tls/s2n)",
		"conf-dir":            "where the fetched configuration is kept for the host's commands",
		"sack-socket":         "the host's credential service socket: a path, or @name for an abstract socket (default @drover/sack/<ClusterName>)",
	}
	for _, n := range names {
		switch n {
		case "no-cgroups", "recover":
			cmd.Flags().Bool(n, false, help[n])
		case "run-conf":
			cmd.Flags().String(n, configless.RunConf, help[n])
		case "conf-dir":
			cmd.Flags().String(n, daemon.DefaultConfDir(), help[n])
		default:
			cmd.Flags().String(n, "", help[n])
		}
		_ = v.BindPFlag(n, cmd.Flags().Lookup(n))
	}
}

func controllerCmd() *cobra.Command {
	v := daemon.Settings()
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "run the controller (slurmctld and slurmrestd)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := daemon.ReadSettingsFile(v); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			logger, closeLog, err := daemon.DaemonLogger(v, "SlurmctldLogFile", "")
			if err != nil {
				return err
			}
			defer closeLog()
			return daemon.RunController(ctx, v, logger, nil)
		},
	}
	daemonFlags(cmd, v, "conf", "listen", "name", "socket", "state-dir", "key-file", "log-level", "pprof-listen", "rest-max-body", "recover")
	return cmd
}

func restdCmd() *cobra.Command {
	v := daemon.Settings()
	cmd := &cobra.Command{
		Use:   "restd [host]:port|unix:/path ...",
		Short: "run the REST API on a host of its own, forwarding to the controller (slurmrestd)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := daemon.ReadSettingsFile(v); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			logger, closeLog, err := daemon.DaemonLogger(v, "", "")
			if err != nil {
				return err
			}
			defer closeLog()
			return daemon.RunRestd(ctx, v, logger, args, nil)
		},
	}
	daemonFlags(cmd, v, "conf", "log-level")
	return cmd
}

func nodeCmd() *cobra.Command {
	v := daemon.Settings()
	cmd := &cobra.Command{
		Use:   "node",
		Short: "run a node daemon (slurmd)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := daemon.ReadSettingsFile(v); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			logger, closeLog, err := daemon.DaemonLogger(v, "SlurmdLogFile", nodeName(v))
			if err != nil {
				return err
			}
			defer closeLog()
			return daemon.RunNode(ctx, v, logger)
		},
	}
	daemonFlags(cmd, v, "conf", "listen", "name", "dynamic", "spool-dir", "key-file", "gres-nvml", "gres-nvml-args", "nvml-mock", "gpu-health-interval", "log-level", "no-cgroups", "pprof-listen", "sack-socket", "conf-server", "run-conf", "ca-cert-file")
	return cmd
}

func sackdCmd() *cobra.Command {
	v := daemon.Settings()
	cmd := &cobra.Command{
		Use:   "sackd",
		Short: "run a login host's credential service, which vouches for local users to the controller (Slurm's sackd)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := daemon.ReadSettingsFile(v); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			logger, closeLog, err := daemon.DaemonLogger(v, "", "")
			if err != nil {
				return err
			}
			defer closeLog()
			return daemon.RunSack(ctx, v, logger, nil)
		},
	}
	daemonFlags(cmd, v, "conf", "name", "key-file", "log-level", "sack-socket", "conf-server", "conf-dir", "ca-cert-file")
	cmd.Flags().Lookup("name").Usage = "this host's name in the credentials it signs (default: short host name)"
	return cmd
}

func keygenCmd() *cobra.Command {
	var o daemon.KeygenOptions
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "make the cluster key (slurm.key) and the auth/jwt key where missing, or take a step of a key rotation",
		Long: `keygen writes slurm.key beside slurm.conf, and the auth/jwt key when AuthAltTypes
names auth/jwt, each mode 0600 and owned by SlurmUser, where they are missing; it
never overwrites a key. Copy slurm.key to every controller, node and login host.

A rotation without a cluster restart goes in three steps, each followed by copying
slurm.jwks to every host and running scontrol reconfigure (drover sackd reads it
again on SIGHUP): --add a new key (accepted, not signing), --use it (it signs, the
old one is still accepted), and once credentials signed with the old key have
expired (AuthInfo's ttl and cred_expire), --retire the old key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Out = cmd.OutOrStdout()
			return daemon.Keygen(o)
		},
	}
	cmd.Flags().StringVar(&o.Conf, "conf", "", "slurm.conf (default $SLURM_CONF or /etc/slurm/slurm.conf)")
	cmd.Flags().BoolVar(&o.Add, "add", false, "rotation, step 1: add a new key to slurm.jwks, accepted but not signing")
	cmd.Flags().StringVar(&o.Use, "use", "", "rotation, step 2: make the key KID sign")
	cmd.Flags().StringVar(&o.Retire, "retire", "", "rotation, step 3: remove the key KID")
	cmd.Flags().BoolVar(&o.List, "list", false, "list the keys, and which signs")
	cmd.MarkFlagsMutuallyExclusive("add", "use", "retire", "list")
	return cmd
}

func devCmd() *cobra.Command {
	var opts devcluster.Options
	var printEnv bool
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "run a local cluster: a controller and four node daemons",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printEnv {
				lines, err := devcluster.EnvLines(&opts)
				if err != nil {
					return err
				}
				fmt.Print(lines)
				return nil
			}
			ctx, stop := signalContext()
			defer stop()
			return devcluster.Run(ctx, opts, os.Stdout)
		},
	}
	cmd.Flags().StringVar(&opts.StateDir, "state-dir", "", "folder for configuration, state, logs and shims (default ~/.drover/dev)")
	cmd.Flags().IntVar(&opts.Nodes, "nodes", 4, "number of node daemons")
	cmd.Flags().IntVar(&opts.CPUs, "cpus", 8, "CPUs per node")
	cmd.Flags().IntVar(&opts.GPUs, "gpus", 8, "GPUs per node")
	cmd.Flags().BoolVar(&printEnv, "print-env", false, "print the environment lines of the cluster in --state-dir (preparing the folder when new), without starting anything")
	return cmd
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print Drover's version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Print(versionLine())
		},
	}
}

// versionLine is what `drover version` and `drover --version` print.
func versionLine() string {
	return fmt.Sprintf("drover %s (Slurm compatibility %s)\n", daemon.Version, "25.11.0")
}

func installShimsCmd() *cobra.Command {
	var conf string
	cmd := &cobra.Command{
		Use:   "install-shims DIR",
		Short: "link the drop-in Slurm commands (sbatch, squeue, ...) to drover in DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := InstallShims(args[0]); err != nil {
				return err
			}
			if conf == "" {
				return nil
			}
			abs, err := filepath.Abs(conf)
			if err != nil {
				return fmt.Errorf("--conf: %w", err)
			}
			link := filepath.Join(args[0], clienv.ShimConf)
			_ = os.Remove(link)
			if err := os.Symlink(abs, link); err != nil {
				return fmt.Errorf("link %s: %w", link, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&conf, "conf", "", "the slurm.conf these commands read when SLURM_CONF is not set (default /etc/slurm/slurm.conf)")
	return cmd
}

// nodeName is the node a node daemon runs as: --name, else the host's
// short name (as RunNode reads it), for %n in SlurmdLogFile.
func nodeName(v *viper.Viper) string {
	if n := v.GetString("name"); n != "" {
		return n
	}
	h, _ := os.Hostname()
	return strings.SplitN(h, ".", 2)[0]
}

// InstallShims makes DIR/<command> links to each command's own program
// beside the running drover (bin/sbatch, bin/squeue..., as make builds
// and the packages install them), or to drover itself for a command
// whose program is not there: the commands then start as small programs
// do.
func InstallShims(dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find drover binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fmt.Errorf("find drover binary: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, name := range shim.Names() {
		target := exe
		if own := filepath.Join(filepath.Dir(exe), name); isProgram(own) {
			target = own
		}
		link := filepath.Join(dir, name)
		if link == target {
			continue // installing into drover's own folder: already there
		}
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return fmt.Errorf("link %s: %w", link, err)
		}
	}
	return nil
}

// isProgram reports whether path is an executable file.
func isProgram(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
