// Package jobfmt renders job records the way Slurm 25.11's commands print
// them. It is shared by the drop-in commands that show jobs (squeue, and
// scontrol's job views).
//
// Job is the read model's job record (readmodel.Job): a REST job record
// folded back into Slurm's own representation, NO_VAL/INFINITE sentinels
// instead of {set, infinite, number} triples, job states as base-plus-flag bits, empty
// strings where slurmctld keeps NULL. Printing rules can then be written as
// Slurm writes them ("INFINITE prints UNLIMITED", "a NULL string prints
// (null)").
//
// Format is a parsed squeue -o (ParseFormat) or -O (ParseLongFormat)
// specification; Header and Row lay fields out with squeue's exact column
// rules: right-justified fields are padded and cut from the end, node
// lists and elapsed times overflow instead of being cut, NULL strings print
// "(null)" (or nothing under a precision below 6, as glibc does).
//
// TaskSet and ConvertNumUnit re-implement the Slurm helpers the commands
// share (bit_fmt/bit_unfmt on array task lists,
// convert_num_unit).
package jobfmt
