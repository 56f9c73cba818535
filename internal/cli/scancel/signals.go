package scancel

import (
	"strconv"
	"strings"
)

// signals are the names Slurm's commands accept for signals, with their
// Linux numbers, in Slurm's lookup order.
var signals = []struct {
	name string
	num  uint16
}{
	{"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"ABRT", 6}, {"KILL", 9}, {"ALRM", 14},
	{"TERM", 15}, {"CHLD", 17}, {"USR1", 10}, {"USR2", 12}, {"PIPE", 13}, {"URG", 23},
	{"CONT", 18}, {"STOP", 19}, {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"XCPU", 24},
}

// sigKill is the signal scancel sends when none is given.
const sigKill = 9

// SignalNumber converts a --signal value as Slurm's sig_name2num does: a
// number (kept modulo 2^16, as Slurm stores it), or a name with or without
// "SIG", in any case, with surrounding blanks allowed. It returns 0 for
// anything else.
func SignalNumber(v string) uint16 {
	n, rest := strtol(v)
	if rest != v {
		if strings.TrimSpace(rest) != "" {
			return 0
		}
		return uint16(n)
	}
	name := strings.TrimLeft(v, " \t\n\v\f\r")
	if len(name) >= 3 && strings.EqualFold(name[:3], "SIG") {
		name = name[3:]
	}
	for _, s := range signals {
		if len(name) >= len(s.name) && strings.EqualFold(name[:len(s.name)], s.name) &&
			strings.TrimSpace(name[len(s.name):]) == "" {
			return s.num
		}
	}
	return 0
}

// signalParam spells a signal for the REST API's signal parameter. The
// number is unambiguous to every server (slurmrestd takes names or
// numbers), where not every server knows every name.
func signalParam(num uint16) string { return strconv.Itoa(int(num)) }
