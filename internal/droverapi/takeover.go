package droverapi

import (
	"fmt"
	"strconv"
	"strings"
)

// TakeoverTarget is `scontrol takeover`'s argument: an index into the
// SlurmctldHost lines (Name empty; 1 is the first backup, as in Slurm)
// or a SlurmctldHost name (Drover's addition).
type TakeoverTarget struct {
	Index int
	Name  string
}

// String is the argument as TakeoverPath's controller parameter.
func (t TakeoverTarget) String() string {
	if t.Name != "" {
		return t.Name
	}
	return strconv.Itoa(t.Index)
}

// ParseTakeoverTarget reads takeover's argument: "" is index 1 (the
// first backup, Slurm's default); digits (with a sign) an index, which
// must be at least 1 as scontrol requires; anything else a host name
// (letters, digits, '.', '-' and '_', beginning with a letter or digit).
func ParseTakeoverTarget(s string) (TakeoverTarget, error) {
	if s == "" {
		return TakeoverTarget{Index: 1}, nil
	}
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) <= 1 && digits != "" && strings.Trim(digits, "0123456789") == "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return TakeoverTarget{}, fmt.Errorf("invalid backup controller index (%s)", s)
		}
		return TakeoverTarget{Index: n}, nil
	}
	if len(s) > 255 || !isAlnum(s[0]) || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
		return TakeoverTarget{}, fmt.Errorf("invalid controller name (%q)", s)
	}
	return TakeoverTarget{Name: s}, nil
}

// Resolve finds the target among the SlurmctldHost names, in order,
// returning its index. A name matches a line's name or its short form
// ("ctl1" matches "ctl1.example.org"). An index must name a backup
// (1 to len-1), as scontrol checks against control_cnt.
func (t TakeoverTarget) Resolve(names []string) (int, error) {
	if t.Name == "" {
		if len(names) < 2 {
			return 0, fmt.Errorf("no backup controller defined")
		}
		if t.Index < 1 || t.Index >= len(names) {
			return 0, fmt.Errorf("invalid backup controller index (%d)", t.Index)
		}
		return t.Index, nil
	}
	for i, n := range names {
		short, _, _ := strings.Cut(n, ".")
		if strings.EqualFold(n, t.Name) || strings.EqualFold(short, t.Name) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no controller named %s", t.Name)
}

// ControllerMode is Slurm's name for the SlurmctldHost line at index i
// of n: "primary", "backup" (the second of two), else "backupI", as
// scontrol ping and slurmrestd's ping print it.
func ControllerMode(i, n int) string {
	switch {
	case i == 0:
		return "primary"
	case i == 1 && n == 2:
		return "backup"
	default:
		return "backup" + strconv.Itoa(i)
	}
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
