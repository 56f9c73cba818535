package squeue

import (
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/jobfmt"
	"github.com/droverhq/drover/internal/cli/readmodel"
)

// combinePendingTasks folds pending array tasks that have records of their
// own into their pending meta record, as squeue does without -r: the meta
// record's task list grows, differing reasons are joined into its
// description, and the folded records become nil. When anything was folded
// the task list is rewritten without its "%throttle" suffix and, unless
// SLURM_BITSTR_LEN says otherwise, cut to 63 bytes as Slurm's bit_fmt
// buffer cuts it.
func combinePendingTasks(recs []*record, bitstrLen string) {
	for _, meta := range recs {
		if meta == nil || !meta.job.State.IsPending() || meta.job.ArrayTaskStr == "" {
			continue
		}
		m := meta.job
		tasks, ok := jobfmt.ParseTaskSet(m.ArrayTaskStr)
		if !ok {
			continue
		}
		folded := 0
		for k, t := range recs {
			if t == nil || t == meta {
				continue
			}
			tj := t.job
			if !tj.State.IsPending() || tj.ArrayJobID != m.ArrayJobID || !tj.IsArrayTask() ||
				tj.ArrayTaskID > jobfmt.MaxTaskID || tj.Name != m.Name || tj.Partition != m.Partition {
				continue
			}
			folded++
			mergeReason(m, tj)
			tasks.Add(tj.ArrayTaskID)
			recs[k] = nil
		}
		if folded > 0 {
			m.ArrayTaskStr = cutTaskString(tasks.String(), bitstrLen)
		}
	}
}

// mergeReason adds a folded task's reason to its meta record's description
// unless it is already there (_merge_job_reason).
func mergeReason(meta, task *readmodel.Job) {
	if meta.Reason == task.Reason {
		return
	}
	if meta.StateDesc == "" {
		meta.StateDesc = meta.Reason
	}
	if strings.Contains(meta.StateDesc, task.Reason) {
		return
	}
	meta.StateDesc += "," + task.Reason
}

// cutTaskString applies squeue's SLURM_BITSTR_LEN to a rebuilt task list:
// unset or negative means a 64-byte buffer, 0 no limit.
func cutTaskString(s, bitstrLen string) string {
	n := 64
	if bitstrLen != "" {
		v, _ := strconv.Atoi(strings.TrimSpace(bitstrLen))
		if v >= 0 {
			n = v
		}
	}
	if n > 0 && len(s) > n-1 {
		s = s[:n-1]
	}
	return s
}

// compact drops the records folded away.
func compact(recs []*record) []*record {
	out := recs[:0]
	for _, r := range recs {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}
