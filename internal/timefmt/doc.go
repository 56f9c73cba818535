// Package timefmt parses and prints times the way Slurm's commands do.
//
// It covers four families, each mirroring a routine of Slurm's
// src/common/parse_time.c (re-implemented from its documented and observed
// behaviour):
//
//   - time limits (sbatch --time, scontrol TimeLimit=, slurm.conf MaxTime=):
//     ParseLimit, ParseTimeOption, ParseSeconds and Limit's String/Padded,
//     as time_str2mins, time_str2secs and mins2time_str behave;
//   - elapsed times (squeue %M/%L, scontrol RunTime=, sacct Elapsed):
//     FormatDuration and FormatDurationPadded;
//   - points in time given by users (--begin, --deadline, scontrol
//     StartTime=, sacct --starttime): ParseTime and ParseTimePast, as
//     parse_time behaves;
//   - timestamps printed by the commands, honouring SLURM_TIME_FORMAT:
//     FormatTimestamp, FormatEpoch and Strftime, as slurm_make_time_str
//     behaves.
//
// Nothing here reads the clock or the environment: callers pass "now" and the
// value of SLURM_TIME_FORMAT, so the scheduler, the simulator and tests get
// the same answers for the same inputs.
package timefmt
