package readmodel

import (
	"strconv"
	"strings"
)

// HoldsTask reports whether array task id belongs to the record: the
// task it stands for, or one of the pending tasks of an array's meta
// record, as scontrol's _task_id_in_job reads the record's task bitmap.
func (j *Job) HoldsTask(id uint32) bool { return ArrayHoldsTask(j.ArrayTaskID, j.ArrayTaskStr, id) }

// ArrayHoldsTask is HoldsTask over a record's array_task_id (NoVal when
// it stands for no single task) and array_task_string ("2-9%2"), which
// is the bitmap as slurmrestd prints it; the --json output of scontrol
// filters the wire records with it.
func ArrayHoldsTask(taskID uint32, tasks string, id uint32) bool {
	if taskID != NoVal && taskID == id {
		return true
	}
	spec, _, _ := strings.Cut(tasks, "%")
	if spec == "" {
		return false
	}
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		step := uint64(1)
		if isRange {
			if h, s, ok := strings.Cut(hi, ":"); ok {
				hi = h
				step, _ = strconv.ParseUint(s, 10, 32)
				if step == 0 {
					step = 1
				}
			}
		} else {
			hi = lo
		}
		l, err1 := strconv.ParseUint(lo, 10, 32)
		h, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		if uint64(id) >= l && uint64(id) <= h && (uint64(id)-l)%step == 0 {
			return true
		}
	}
	return false
}
