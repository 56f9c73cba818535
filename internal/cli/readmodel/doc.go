// Package readmodel is what the commands read from the controller, as
// plain Go values beside the generated client: jobs, job states and exit
// codes, nodes, partitions, reservations, licenses, the controllers' pings
// and statistics, the fair-share tree, and the accounting database's job
// runs, associations and QOS. Each is filled from one slurmrestd record
// (FromV0044Job...) with the values as Slurm's C commands hold them:
// NO_VAL and INFINITE sentinels (wireval's), times as seconds since the
// epoch, "" where slurmctld keeps a NULL string, flag lists as Slurm
// spells them. The few numbers a command prints as sent whatever their
// flags say (sshare's factors, the priority and step times of sacct's
// runs) are documented as such on their record. A command that prints,
// filters or waits on a record reads it here, so one reading of a wire
// field serves every command, and the command files stay free of the
// generated Opt/Nil wrappers.
//
// What stays on the wire types is what the commands write (request
// bodies), the --json/--yaml outputs that print the records themselves,
// and the client plumbing (connect, clienv, jobstream).
package readmodel
