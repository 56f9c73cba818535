// Package container is Drover's container plugin, in the spirit of pyxis
// and Slurm's OCI support: srun's --container-* options run each task of
// a step in its own container, through an OCI runtime (runc by default,
// crun or any other as oci.conf's RunTimeRun says).
//
// On each node of a step the plugin prepares the image once (user_init):
// a directory is used in place, read-only; a tar archive (optionally
// gzipped) or a squashfs image is unpacked into the node's spool, kept for
// the job's later steps under --container-name. For each task (task_init)
// it writes an OCI bundle, a config.json built with the runtime-spec
// types (the task's user, environment, working folder and program; the
// mounts; the step's GPU device nodes; the host name; mount and UTS
// namespaces, the host's network, IPC and process ids so that NCCL and
// MPI work between tasks as without containers), and asks the node daemon
// to start the task as the runtime's run command. The task's cgroup is
// a child of the step's, so the node daemon tracks, signals and kills
// containers with the step. task_exit deletes the container; exit removes
// the step's bundles and unnamed images, and the batch script's exit the
// job's named ones.
package container
